"""Code spans (issue 23's last part): what the extractor records as code is compared as code.

Inside a span every non-space character is compared (``,`` ``;`` ``.`` ``:`` and ``[2]``
included), every letter keeps its case, whitespace only collapses, and a match may begin or
end inside a span only at a line break of it.  Without spans (and without backticks in the
text) every answer is what it was.
"""

from __future__ import annotations

from array import array

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from verifier import NO_CODE, CodeSpans, check_quote, normalized_digest, prepare
from verifier.errors import CodeSpanError, VerifierError
from verifier.tokenizer import comparison_key_batches, iter_columns


def _around(source: str, *parts: str) -> CodeSpans:
    """Spans over the first occurrence of each of ``parts`` in ``source``."""
    return CodeSpans.merged((source.index(part), source.index(part) + len(part)) for part in parts)


# The four cases docs/matching.md left open, each as (source, code in it, quote): found without
# spans (today's answer, kept), not found with them; and the faithful quote found either way.
LEFT_OPEN = [
    ("Split returns (&[T], &[T]) for the two halves.", "(&[T], &[T])", "(&[T] &[T])"),
    ("Read it with matrix[2][3] in the loop.", "matrix[2][3]", "matrix"),
    ("Read it with matrix[2][3] in the loop.", "matrix[2][3]", "matrix[2]"),
    ("Set arr[1] to zero first.", "arr[1]", "Set arr to zero"),
    ("It takes the type E as its error.", "E", "the type e"),
    ("The function returns -> int | None on failure.", "-> int | None", "-> int"),
    ("The function returns -> int | None on failure.", "-> int | None", "int | None"),
]


@pytest.mark.parametrize(("source", "code", "quote"), LEFT_OPEN)
def test_left_open_cases_are_decided_by_spans(source: str, code: str, quote: str) -> None:
    spans = _around(source, code)
    assert check_quote(quote, source).found  # without spans: as before
    assert prepare(source).check(quote).found
    refused = check_quote(quote, source, spans)
    assert not refused.found
    assert refused.closest is not None
    assert not prepare(source, spans).check(quote).found
    assert check_quote(code, source, spans).found  # the code as written is found
    assert check_quote(code, source).found


@pytest.mark.parametrize(
    ("source", "code", "quote"),
    [
        ("Split returns (&[T], &[T]) for the two halves.", "(&[T], &[T])", "(&[T],&[T])"),
        ("Split returns (&[T],&[T]) for the two halves.", "(&[T],&[T])", "(&[T], &[T])"),
        ("Call f(a, b, c) once.", "f(a, b, c)", "f(a,b , c)"),
        ("Write x := y.z(1, 2) here.", "x := y.z(1, 2)", "x := y . z(1,2)"),
        ("Use matrix[2][3] here.", "matrix[2][3]", "Use matrix[2][3] here"),
        ("Set arr[1] to zero first.", "arr[1]", "Set arr[1] to zero"),
        ("It returns -> int | None here.", "-> int | None", "returns -> int|None here"),
    ],
)
def test_whitespace_in_code_only_collapses(source: str, code: str, quote: str) -> None:
    assert check_quote(quote, source, _around(source, code)).found


@pytest.mark.parametrize(
    ("source", "code", "quote"),
    [
        ("Split returns (&[T], &[T]) here.", "(&[T], &[T])", "(&[T]; &[T])"),
        ("Split returns (&[T] &[T]) here.", "(&[T] &[T])", "(&[T], &[T])"),
        ("Write x := y.z(1, 2) here.", "x := y.z(1, 2)", "x : = y.z(1, 2)"),
        ("Write x := y.z(1, 2) here.", "x := y.z(1, 2)", "x := y,z(1, 2)"),
        ("Use matrix[2][3] here.", "matrix[2][3]", "matrix[3][2]"),
        ("A Foo(bar) call.", "Foo(bar)", "A foo(bar) call"),
        ("Run  cmd --flag  now.", "cmd --flag", "cmd"),
    ],
)
def test_a_changed_character_in_code_is_not_found(source: str, code: str, quote: str) -> None:
    assert not check_quote(quote, source, _around(source, code)).found


def test_a_line_of_a_listing_is_found_and_half_a_line_is_not() -> None:
    source = "Example:\nfn main() {\n    let x = f(a, b); // sum\n}\nThat is all."
    spans = _around(source, "fn main() {\n    let x = f(a, b); // sum\n}")
    assert check_quote("let x = f(a, b); // sum", source, spans).found
    assert check_quote("fn main() {\nlet x = f(a,b); // sum", source, spans).found
    assert not check_quote("let x = f(a, b);", source, spans).found
    assert not check_quote("x = f(a, b); // sum", source, spans).found
    assert check_quote("x = f(a, b);", source).found  # without spans: as before


def test_prose_around_code_keeps_its_copy_noise() -> None:
    source = "Call f(x), then stop. The Result is (a, b)."
    spans = _around(source, "f(x)", "(a, b)")
    assert check_quote("Call f(x) then stop", source, spans).found
    assert check_quote("the result is (a, b)", source, spans).found
    assert not check_quote("the result is (a b)", source, spans).found


def test_backtick_runs_in_the_text_are_code() -> None:
    source = "Use `(&[T], &[T])` for the halves, and ``a`b`` too."
    inner = source.index("a`b")
    assert CodeSpans.in_text(source).ranges == ((5, 17), (inner, inner + 3))
    assert check_quote("`(&[T], &[T])`", source).found
    assert not check_quote("`(&[T] &[T])`", source).found
    assert check_quote("(&[T] &[T])", source.replace("`", "")).found  # no backticks: as before
    fenced = "Run:\n```sh\nls -la, now\n```\nDone."
    assert CodeSpans.in_text(fenced).ranges == ((11, 23),)
    assert not check_quote("ls -la now", fenced).found
    assert check_quote("ls -la, now", fenced).found


def test_backticks_across_a_blank_line_are_not_code() -> None:
    assert CodeSpans.in_text("a ` b\n\nc ` d").ranges == ()
    assert CodeSpans.in_text("a `b` c `d").ranges == ((3, 4),)


@pytest.mark.parametrize(
    "ranges",
    [((3, 3),), ((-1, 2),), ((5, 9), (2, 4)), ((1, 5), (4, 8))],
)
def test_bad_spans_are_one_clear_error(ranges: tuple[tuple[int, int], ...]) -> None:
    with pytest.raises(CodeSpanError) as raised:
        CodeSpans(ranges)
    assert isinstance(raised.value, VerifierError)
    assert "\n" not in str(raised.value)


def test_spans_past_the_text_are_an_error() -> None:
    with pytest.raises(CodeSpanError, match="runs past"):
        prepare("short", CodeSpans(((2, 9),)))


def test_merged_joins_nested_and_touching_spans() -> None:
    assert CodeSpans.merged([(5, 9), (0, 3), (6, 7), (3, 4), (9, 9)]).ranges == ((0, 4), (5, 9))


def test_normalized_digest_names_the_code() -> None:
    text = "Split returns (&[T], &[T]) for the halves."
    spans = _around(text, "(&[T], &[T])")
    other = "Split returns (&[T] &[T]) for the halves."
    assert normalized_digest(text) == normalized_digest(text, NO_CODE)
    assert normalized_digest(text) == normalized_digest(other)  # same keys: prose answers alike
    assert normalized_digest(text, spans) != normalized_digest(other, _around(other, "(&[T] &[T])"))
    assert normalized_digest(text, spans) != normalized_digest(text)
    assert prepare(text, spans).normalized_digest() == normalized_digest(text, spans)


# --- properties over code drawn from a grammar ----------------------------------------------

IDENTIFIERS = st.sampled_from(["x", "y", "ab", "Foo", "self", "n2", "T", "E", "e", "len"])
NUMBERS = st.sampled_from(["0", "1", "42", "7"])
OPERATORS = st.sampled_from(["+", "-", "*", "&", "&&", "->", "=", "==", "!=", "|", "<", "%"])


def _expressions() -> st.SearchStrategy[list[str]]:
    """Code as a list of lexical pieces: identifiers, numbers, brackets, operators and the
    marks ``,`` ``;`` ``.``; rendered by ``_render``."""
    atom = st.one_of(IDENTIFIERS, NUMBERS).map(lambda piece: [piece])
    return st.recursive(
        atom,
        lambda inner: st.one_of(
            st.tuples(IDENTIFIERS, st.lists(inner, min_size=1, max_size=3)).map(
                lambda t: [t[0], "(", *_joined(t[1], ","), ")"]
            ),
            st.tuples(IDENTIFIERS, inner).map(lambda t: [t[0], "[", *t[1], "]"]),
            inner.map(lambda e: ["(", *e, ",", ")"]),
            st.tuples(inner, NUMBERS).map(lambda t: ["[", *t[0], ";", t[1], "]"]),
            st.tuples(inner, OPERATORS, inner).map(lambda t: [*t[0], t[1], *t[2]]),
            st.tuples(IDENTIFIERS, IDENTIFIERS).map(lambda t: [t[0], ".", t[1]]),
        ),
        max_leaves=6,
    )


def _joined(parts: list[list[str]], mark: str) -> list[str]:
    pieces: list[str] = []
    for index, part in enumerate(parts):
        pieces.extend(([mark] if index else []) + part)
    return pieces


def _needs_space(left: str, right: str) -> bool:
    """Two words or numbers, or two operators, run together without a space."""
    symbolic = set("+-*&=!|<>%.")
    return (left[-1].isalnum() and right[0].isalnum()) or (
        left[-1] in symbolic and right[0] in symbolic and "." not in (left, right)
    )


def _render(pieces: list[str], spaces: list[bool]) -> str:
    out = pieces[0]
    for index, piece in enumerate(pieces[1:]):
        gap = " " if _needs_space(pieces[index], piece) or spaces[index] else ""
        out += gap + piece
    return out


@st.composite
def _code(draw: st.DrawFn) -> str:
    pieces = draw(_expressions())
    spaces = draw(st.lists(st.booleans(), min_size=len(pieces), max_size=len(pieces)))
    return _render(pieces, spaces)


def _with_code(snippet: str) -> tuple[str, CodeSpans]:
    prefix = "The manual says that "
    source = f"{prefix}{snippet} is what the parser reads."
    return source, CodeSpans(((len(prefix), len(prefix) + len(snippet)),))


MUTANTS = "xyzEeT019()[]{}+-*&=!|<>%,;.:_"


@settings(max_examples=400, derandomize=True, deadline=None)
@given(snippet=_code(), data=st.data())
def test_one_changed_character_in_code_is_not_found(snippet: str, data: st.DataObject) -> None:
    source, spans = _with_code(snippet)
    assert check_quote(snippet, source, spans).found, snippet
    kind = data.draw(st.sampled_from(["change", "add", "remove"]))
    if kind == "add":  # inside the code: after its first character, before its last
        at = data.draw(st.integers(1, len(snippet) - 1)) if len(snippet) > 1 else 0
        changed = snippet[:at] + data.draw(st.sampled_from(MUTANTS)) + snippet[at:]
    else:
        at = data.draw(st.sampled_from([i for i, c in enumerate(snippet) if not c.isspace()]))
        new = data.draw(st.sampled_from(MUTANTS)) if kind == "change" else ""
        changed = snippet[:at] + new + snippet[at + 1 :]
    assume(changed.split() != snippet.split() and changed.strip())
    result = check_quote(changed, source, spans)
    code_start, code_end = spans.ranges[0]
    hits = [span for span in result.spans if span[0] < code_end and span[1] > code_start]
    assert not hits, (snippet, changed, result)
    assert not any(
        start < code_end and end > code_start
        for start, end in prepare(source, spans).check(changed).spans
    )


@settings(max_examples=300, derandomize=True, deadline=None)
@given(pieces=_expressions(), data=st.data())
def test_whitespace_in_code_keeps_the_quote_found(pieces: list[str], data: st.DataObject) -> None:
    count = len(pieces)
    written = _render(pieces, data.draw(st.lists(st.booleans(), min_size=count, max_size=count)))
    quoted = _render(pieces, data.draw(st.lists(st.booleans(), min_size=count, max_size=count)))
    source, spans = _with_code(written)
    assert check_quote(quoted, source, spans).found, (written, quoted)
    assert prepare(source, spans).check(quoted.replace(" ", "  ")).found, (written, quoted)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(snippet=_code(), data=st.data())
def test_spans_only_refuse_quotes_without_marks(snippet: str, data: st.DataObject) -> None:
    """Code only adds refusals, but for whitespace around ``,`` ``;`` ``.`` ``:``: a quote
    without those found with spans is found without them."""
    source, spans = _with_code(snippet)
    start = data.draw(st.integers(0, len(source) - 1))
    end = data.draw(st.integers(start + 1, len(source)))
    quote = source[start:end]
    assume(not any(mark in quote for mark in ",;.:"))
    if check_quote(quote, source, spans).found:
        assert check_quote(quote, source).found, quote


@settings(max_examples=200, derandomize=True, deadline=None)
@given(
    source=st.text(st.sampled_from("ab AB,.;:()[]1\n"), max_size=40),
    data=st.data(),
)
def test_without_code_every_answer_is_unchanged(source: str, data: st.DataObject) -> None:
    """No spans, empty spans and spans over whitespace alone answer alike, the one-off check and
    the prepared one alike."""
    start = data.draw(st.integers(0, len(source)))
    quote = source[start : data.draw(st.integers(start, len(source)))] or "a"
    blanks = CodeSpans.merged((i, i + 1) for i, char in enumerate(source) if char.isspace())
    plain = prepare(source).check(quote)
    assert check_quote(quote, source) == plain
    assert check_quote(quote, source, NO_CODE) == plain
    assert prepare(source, blanks).check(quote).found == plain.found
    assert normalized_digest(source, NO_CODE) == normalized_digest(source)


def test_backticks_in_a_quote_stand_for_the_sources_code() -> None:
    source = "The method returns (&[T], &[T]), a pair. Use x here."
    spans = _around(source, "(&[T], &[T])")
    assert check_quote("returns `(&[T], &[T])`, a pair", source, spans).found
    assert check_quote("`(&[T],&[T])`", source, spans).found
    assert not check_quote("returns `(&[T] &[T])`, a pair", source, spans).found
    assert not check_quote("Use `x` here", source, spans).found  # x is prose in the source
    assert not check_quote("`returns` (&[T], &[T])", source, spans).found
    assert not check_quote("returns `(&[T], &[T])`, a pair", source).found  # no code: as before


# --- the digest's one scan ----------------------------------------------------------------

CODE_TEXT = (
    "Call `len(x)` then `x[1]` [2] and\n```\nfor i in range(3):\n    print(i)\n```\n"
    "Done. Résumé 1.5 mW"
)


def test_the_digest_of_a_text_with_code_is_the_one_recorded_before() -> None:
    """Snapshots keep the norm hash recorded at capture: the one-scan digest is the same."""
    assert normalized_digest(CODE_TEXT) == (
        "sha256:811008951da8400257b1d4044728e5955d8c7eadb78550b388e9acf5ecde9be6"
    )
    assert normalized_digest(CODE_TEXT, CodeSpans(((5, 13),))) == (
        "sha256:599086bf03dabf1d334749596ae1189be4b90e874bf5c6bacebdce8a093fab12"
    )


@given(st.text(alphabet=st.sampled_from("ab C1.`[]()-–\u00a0\n é…#"), max_size=300))
def test_the_key_scan_gives_the_token_starts_a_second_scan_would(text: str) -> None:
    """The digest places code spans by token starts gathered while its keys are scanned; they
    are the starts of a scan of its own (case settled or not, the tokens are the same)."""
    starts: array[int] = array("q")
    for _ in comparison_key_batches(text, starts):
        pass
    again = [s for columns in iter_columns(text, [], settle=False) for s in columns.starts]
    assert list(starts) == again
