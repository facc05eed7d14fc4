"""Property tests: whole-token slices are found, a changed number never is, prepare == check."""

from __future__ import annotations

import itertools

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from verifier import QUOTE_FOUND, check_quote, prepare, tokenize
from verifier.search import find_all

PROFILE = settings(max_examples=150, derandomize=True, deadline=None)

WORDS = ["the", "Café", "straße", "naïve", "ﬁnal", "अनुपस्थित", "x²", "CO₂", "don’t", "data"]
NUMBERS = st.one_of(
    st.integers(min_value=-10_000, max_value=10_000).map(str),
    st.sampled_from(["3.14", "1,000", "1.000", ".5", "\u22122", "42%", "7‰", "10²", "1e-3"]),
)
# Separators with whitespace only are used between words; between two numbers a comma keeps
# the context guard (number touching number across whitespace) out of the way.
WORD_GAPS = st.sampled_from([" ", "  ", "\n", "\u00a0", ", ", ". ", "; ", " — ", " “"])
NUMBER_GAPS = st.sampled_from([", ", "; ", " — ", ": "])


@st.composite
def sources(draw: st.DrawFn, *, words: list[str] | None = None) -> str:
    items = (
        words
        if words is not None
        else draw(st.lists(st.one_of(st.sampled_from(WORDS), NUMBERS), min_size=1, max_size=25))
    )
    pieces = [items[0]]
    for previous, item in itertools.pairwise(items):
        both_numeric = _is_number(previous) and _is_number(item)
        pieces.append(draw(NUMBER_GAPS if both_numeric else WORD_GAPS))
        pieces.append(item)
    return "".join(pieces)


def _is_number(item: str) -> bool:
    return any(token.kind == "number" for token in tokenize(item))


@st.composite
def source_and_slice(draw: st.DrawFn) -> tuple[str, int, int]:
    source = draw(sources())
    tokens = tokenize(source)
    first = draw(st.integers(min_value=0, max_value=len(tokens) - 1))
    last = draw(st.integers(min_value=first, max_value=len(tokens) - 1))
    return source, tokens[first].start, tokens[last].end


@PROFILE
@given(case=source_and_slice())
def test_every_whole_token_slice_is_found(case: tuple[str, int, int]) -> None:
    source, start, end = case
    result = check_quote(source[start:end], source)
    assert result.status == QUOTE_FOUND
    assert (start, end) in result.spans
    assert result.original == source[result.start : result.end]


@PROFILE
@given(
    words=st.lists(
        st.text(alphabet="abcdefghijklmnopqrstuvwxyzé", min_size=1, max_size=6),
        min_size=1,
        max_size=20,
        unique=True,
    ),
    data=st.data(),
)
def test_unique_slice_original_equals_the_slice(words: list[str], data: st.DataObject) -> None:
    source = data.draw(sources(words=words))
    tokens = tokenize(source)
    first = data.draw(st.integers(min_value=0, max_value=len(tokens) - 1))
    last = data.draw(st.integers(min_value=first, max_value=len(tokens) - 1))
    quote = source[tokens[first].start : tokens[last].end]
    result = check_quote(quote, source)
    assert result.found
    assert result.original == quote
    assert result.matches == 1


def _number_variants(text: str) -> list[str]:
    """Single-token edits a careless copy could make to a number."""
    last = text[-1]
    bumped = text[:-1] + str((int(last) + 1) % 10) if last in "0123456789" else text + "0"
    unsigned = text.lstrip("+-\u2212")
    return [
        bumped,
        text.translate(str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")),
        text + "0",
        unsigned if unsigned != text else "-" + text,
        text.replace(",", "\0").replace(".", ",").replace("\0", "."),
        text.rstrip("%‰") if text[-1] in "%‰" else text + "%",
    ]


@PROFILE
@given(case=source_and_slice(), data=st.data())
def test_changing_one_number_token_breaks_the_match(
    case: tuple[str, int, int], data: st.DataObject
) -> None:
    source, start, end = case
    numbers = [t for t in tokenize(source) if t.kind == "number" and start <= t.start < end]
    assume(numbers)
    target = data.draw(st.sampled_from(numbers))
    variant = data.draw(st.sampled_from(_number_variants(target.text)))
    variant_tokens = tokenize(variant)
    assume(len(variant_tokens) == 1 and variant_tokens[0].kind == "number")
    assume(variant_tokens[0].key not in {t.key for t in tokenize(source)})
    quote = source[start : target.start] + variant + source[target.end : end]
    assume(len(tokenize(quote)) == len(tokenize(source[start:end])))
    result = check_quote(quote, source)
    assert not result.found
    assert result.status != QUOTE_FOUND


@PROFILE
@given(source=sources(), quote=st.one_of(sources(), st.text(max_size=30)))
def test_prepared_check_equals_check_quote(source: str, quote: str) -> None:
    assert prepare(source).check(quote) == check_quote(quote, source)


@PROFILE
@given(case=source_and_slice(), data=st.data())
def test_closest_passage_is_a_source_slice_with_a_fair_score(
    case: tuple[str, int, int], data: st.DataObject
) -> None:
    source, start, end = case
    quote = source[start:end] + data.draw(st.sampled_from([" zzq", " qqz yyx"]))
    result = check_quote(quote, source)
    closest = result.closest
    assume(not result.found and closest is not None)
    assert closest is not None
    assert 0 < closest.score < 1
    assert closest.text == source[closest.start : closest.end]
    for diff_start, diff_end in closest.differences:
        assert closest.start <= diff_start < diff_end <= closest.end


@PROFILE
@given(
    needle=st.lists(st.sampled_from("ab"), min_size=1, max_size=4),
    haystack=st.lists(st.sampled_from("abc"), max_size=40),
)
def test_kmp_finds_every_occurrence(needle: list[str], haystack: list[str]) -> None:
    naive = [
        i for i in range(len(haystack) - len(needle) + 1) if haystack[i : i + len(needle)] == needle
    ]
    assert find_all(needle, haystack) == naive


def test_repetitive_source_uses_the_linear_scan_and_finds_overlaps() -> None:
    source = " ".join(["ha"] * 200)
    result = check_quote("ha ha ha", source)
    assert result.matches == 198
    assert result.spans[1] == (3, 11)
