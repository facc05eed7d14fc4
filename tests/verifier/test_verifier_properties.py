"""Property tests for exact-by-default matching.

The invariant, stated once: **whenever a quote is found, the quote and the matched original are
equal after applying only the listed copy-noise equivalences.**  ``reference_normal`` below is
written from docs/matching.md alone (it shares no code with ``verifier.tokenizer``), so a
tokenizer that folded something not on the list would break the first property.  Then:
mutations that are not on the list are never found at the same span, and listed
transformations are always found at the same span.
"""

from __future__ import annotations

import hashlib
import unicodedata

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from verifier import QUOTE_FOUND, check_quote, normalized_digest, prepare, token_keys, tokenize
from verifier.tokenizer import scan_text

PROFILE = settings(max_examples=200, derandomize=True, deadline=None)

# -- the reference normalizer: docs/matching.md's copy-noise list, written independently ---

INVISIBLE = set("\u00ad\u200b\u200c\u200d\u200e\u200f\u2060\ufeff\u061c\ufe0f\ufe0e") | {
    chr(c) for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]
}
DOUBLE = set('"“”„‟«»')
SINGLE = set("'‘’‚‛‹›")
DASH = set("-‐‑‒–—―−﹣－־")


def _protected(char: str) -> bool:
    return unicodedata.decomposition(char).startswith(("<super>", "<sub>", "<fraction>"))


def _is_emoji(char: str) -> bool:
    return ord(char) >= 0x1F000 or 0x2600 <= ord(char) <= 0x27BF


def reference_normal(text: str) -> str:
    """Apply the copy-noise list: invisible characters, emoji, reference marks and edge
    ellipses out; quotation marks and dashes by kind; NFKC except super/subscripts and
    fractions; case folded; sentence punctuation out; whitespace only between letters/digits."""
    import re

    text = re.sub(r"\[(\d{1,3}|[a-z]{1,2})\]", "", text)
    text = text.strip()
    text = re.sub(r"^(…|\.\.\.)\s*|\s*(…|\.\.\.)$", "", text)
    chars = []
    for index, char in enumerate(text):
        following = text[index + 1] if index + 1 < len(text) else " "
        previous = text[index - 1] if index else " "
        if char in INVISIBLE or _is_emoji(char):
            continue
        in_number = previous.isdigit() and following.isdigit()
        ends_sentence = following.isspace() or index + 1 == len(text)
        if (char == ";" or (char == "," and not in_number)) or (char in ".:" and ends_sentence):
            char = " "
        elif char in DOUBLE:
            char = '"'
        elif char in SINGLE:
            char = "'"
        elif char in DASH:
            char = "-"
        elif not _protected(char):
            char = unicodedata.normalize("NFKC", char).casefold()
        chars.append(char)
    words = "".join(chars).split()
    out = ""
    for word in words:
        if out and out[-1].isalnum() and word[0].isalnum():
            out += " "
        out += word
    return out


# -- sources from realistic alphabets --------------------------------------------------------

PIECES = st.sampled_from(
    [
        "the",
        "Origin",
        "serves",
        "naïve",
        "straße",
        "ﬁnal",
        "don’t",
        "expr",
        "ident",
        "&&",
        "||",
        "?",
        "::",
        ".",
        "->",
        "!=",
        "<<",
        "*",
        "+",
        "−",
        "±",
        "%",
        "$",
        "5'000",
        "1,000.50",
        "3.14",
        "42",
        "−7",
        "10⁶",
        "x²",
        "CO₂",
        "½",
        "mW",
        "MW",
        "MB",
        "Mb",
        "kWh",
        "日本語",
        "のテキスト",
        "สวัสดี",
        "ครับ",
        "क्‍ष",
        "नमस्ते",
        "👩\u200d💻",
        "❤️",
        "🇫🇷",
        "[1]",
        "[a]",
        "(",
        ")",
        "“",
        "”",
    ]
)
GAPS = st.sampled_from([" ", " ", "  ", "\n", "\u00a0", ", ", ". ", "; ", " — ", ""])


@st.composite
def sources(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(PIECES, min_size=1, max_size=20))
    text = pieces[0]
    for piece in pieces[1:]:
        text += draw(GAPS) + piece
    return text


@st.composite
def found_slice(draw: st.DrawFn) -> tuple[str, int, int]:
    """A source and a whole-token span of it that the verifier finds there."""
    source = draw(sources())
    tokens = tokenize(source)
    assume(tokens)
    first = draw(st.integers(min_value=0, max_value=len(tokens) - 1))
    last = draw(st.integers(min_value=first, max_value=min(first + 8, len(tokens) - 1)))
    start, end = tokens[first].start, tokens[last].end
    result = check_quote(source[start:end], source)
    assume(result.found and (start, end) in result.spans)
    return source, start, end


# -- the invariant ---------------------------------------------------------------------------


@PROFILE
@given(source=sources(), data=st.data())
def test_any_found_substring_equals_its_original_under_the_listed_noise(
    source: str, data: st.DataObject
) -> None:
    start = data.draw(st.integers(min_value=0, max_value=len(source)))
    end = data.draw(st.integers(min_value=start, max_value=len(source)))
    quote = source[start:end]
    result = check_quote(quote, source)
    if result.found:
        assert result.original is not None
        assert reference_normal(quote) == reference_normal(result.original)


@PROFILE
@given(source=sources(), quote=sources())
def test_any_found_quote_equals_its_original_under_the_listed_noise(
    source: str, quote: str
) -> None:
    result = check_quote(quote, source)
    if result.found:
        assert result.original is not None
        assert reference_normal(quote) == reference_normal(result.original)


# -- mutations not on the list are never found at the same span ------------------------------

SYMBOLS = "&|?!.:*/\\^~@#<>=+±%"


def _compared(quote: str, at: int) -> bool:
    """True when the character at ``at`` is compared: a digit, an ASCII letter, or a symbol
    other than a full stop or colon ending a sentence (those are on the list)."""
    char = quote[at]
    following = quote[at + 1 : at + 2]
    if char in ".:" and (not following or following.isspace()):
        return False
    return char.isdigit() or char in SYMBOLS or (char.isascii() and char.isalpha())


@PROFILE
@given(case=found_slice(), data=st.data())
def test_one_character_change_off_the_list_is_never_found_at_the_same_span(
    case: tuple[str, int, int], data: st.DataObject
) -> None:
    source, start, end = case
    quote = source[start:end]
    positions = [i for i in range(len(quote)) if _compared(quote, i)]
    assume(positions)
    at = data.draw(st.sampled_from(positions))
    char = quote[at]
    if char.isdigit():
        replacement = data.draw(st.sampled_from([d for d in "0123456789" if d != char]))
    elif char in SYMBOLS:
        replacement = data.draw(st.sampled_from([s for s in SYMBOLS if s != char] + [char * 2]))
    else:
        replacement = data.draw(st.sampled_from([c for c in "bdfkqxz" if c != char.lower()]))
    mutated = quote[:at] + replacement + quote[at + 1 :]
    result = check_quote(mutated, source)
    assert (start, end) not in result.spans


@PROFILE
@given(case=found_slice(), data=st.data())
def test_inserting_or_deleting_a_digit_or_symbol_is_never_found_at_the_same_span(
    case: tuple[str, int, int], data: st.DataObject
) -> None:
    source, start, end = case
    quote = source[start:end]
    at = data.draw(st.integers(min_value=0, max_value=len(quote) - 1))
    if data.draw(st.booleans()):
        mutated = (
            quote[:at]
            + data.draw(st.sampled_from([*SYMBOLS.replace(".", "").replace(":", ""), "7"]))
            + quote[at:]
        )
    else:
        assume(_compared(quote, at) and not quote[at].isalpha())
        mutated = quote[:at] + quote[at + 1 :]
    assume(mutated.strip())
    result = check_quote(mutated, source)
    assert (start, end) not in result.spans


# -- listed transformations are always found at the same span --------------------------------


def _listed_transformations(quote: str) -> list[str]:
    swapped = quote.translate(str.maketrans({"“": '"', "”": '"', "’": "'", "—": "-", "−": "-"}))
    return [
        quote.replace(" ", "  "),
        quote.replace(" ", "\n"),
        quote.replace(" ", "\u00a0"),
        swapped,
        quote + ".",
        "…" + quote + "…",
        quote.replace(", ", " "),
        "".join(c + "\u200b" if c.isalpha() and c.isascii() else c for c in quote),
    ]


@PROFILE
@given(case=found_slice(), data=st.data())
def test_listed_copy_noise_is_found_at_the_same_span(
    case: tuple[str, int, int], data: st.DataObject
) -> None:
    source, start, end = case
    quote = source[start:end]
    noisy = data.draw(st.sampled_from(_listed_transformations(quote)))
    result = check_quote(noisy, source)
    assert result.status == QUOTE_FOUND, (noisy, source, result)
    assert (start, end) in result.spans


@settings(PROFILE, suppress_health_check=[HealthCheck.filter_too_much])
@given(case=found_slice())
def test_leaving_out_emoji_and_reference_marks_is_found_at_the_same_span(
    case: tuple[str, int, int],
) -> None:
    source, start, end = case
    side = [item for item in scan_text(source).side if start <= item.start and item.end <= end]
    assume(side)
    pieces, cursor = [], start
    for item in side:
        pieces.append(source[cursor : item.start])
        cursor = item.end
    stripped = " ".join([*pieces, source[cursor:end]])
    assume(tokenize(stripped))
    result = check_quote(stripped, source)
    assert result.found, (stripped, source)
    assert (start, end) in result.spans


# -- preparing changes nothing ----------------------------------------------------------------


@PROFILE
@given(source=sources(), quotes=st.lists(st.one_of(sources(), st.text(max_size=30)), max_size=4))
def test_prepared_checks_equal_check_quote(source: str, quotes: list[str]) -> None:
    prepared = prepare(source)
    for quote in quotes * 2:  # the second round goes through the index
        assert prepared.check(quote) == check_quote(quote, source)


@PROFILE
@given(case=found_slice(), data=st.data())
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
        assert closest.start <= diff_start <= diff_end <= closest.end  # empty: a gap


LONG_PIECES = st.sampled_from(["a" * 300, "7" * 255, "x" * 254, "=" * 256, "日" * 3])


@PROFILE
@given(
    pieces=st.lists(st.one_of(sources(), LONG_PIECES), min_size=1, max_size=4),
    data=st.data(),
)
def test_prepared_spans_equal_the_tokenizers(pieces: list[str], data: st.DataObject) -> None:
    """A prepared source keeps each token's length in one byte (longer tokens aside): its spans
    and the tokens it finds overlapping a range are the tokenizer's."""
    source = " ".join(pieces)
    tokens = tokenize(source)
    prepared = prepare(source)
    assert [prepared.token_span(i, i) for i in range(len(prepared))] == [
        (token.start, token.end) for token in tokens
    ]
    start = data.draw(st.integers(min_value=0, max_value=len(source)))
    end = data.draw(st.integers(min_value=start, max_value=len(source)))
    overlapping = [i for i, token in enumerate(tokens) if token.start < end and token.end > start]
    found = prepared.tokens_overlapping(start, end)
    assert list(found) == overlapping


# Words whose case may count next to a number or symbol, words in capitals, and what stands
# next to them.
SHORT_WORDS = ["km", "Km", "KM", "m", "M", "MB", "mb", "IN", "In", "mW", "A", "a", "v", "x"]
OTHER_WORDS = ["the", "The", "OK", "CAPS", "WORDS", "日本"]
NEIGHBOURS = ["5", "1.5", "+", "#", "—", "(", ")", "[1]", "👍"]
CASE_PIECES = st.sampled_from([*SHORT_WORDS, *OTHER_WORDS, *NEIGHBOURS])


@PROFILE
@given(
    pieces=st.lists(CASE_PIECES, min_size=1, max_size=40),
    gaps=st.lists(st.sampled_from([" ", "", "\n", ", ", " \u00a0"]), min_size=40, max_size=40),
)
def test_a_prepared_source_settles_case_as_the_tokenizer_does(
    pieces: list[str], gaps: list[str]
) -> None:
    """A prepared source decides whether a token's case counts only when asked (from its
    neighbours, as the tokenizer does while scanning); every answer must be the tokenizer's.
    The digest, hashed batch by batch, is that of all the keys at once."""
    source = "".join(piece + gap for piece, gap in zip(pieces, gaps, strict=False))
    tokens = tokenize(source)
    prepared = prepare(source)
    compared = [  # with a quote token whose own case does not count: the source's form
        prepared.compared_forms(index, token._replace(sensitive=False))[0]
        for index, token in enumerate(tokens)
    ]
    assert compared == [token.exact if token.sensitive else token.key for token in tokens]
    keys = [token.exact if token.sensitive else token.key for token in tokens]
    assert [key for key in token_keys(source) if not key.startswith("\x00")] == keys
    whole = "sha256:" + hashlib.sha256("\n".join(token_keys(source)).encode()).hexdigest()
    assert normalized_digest(source) == prepared.normalized_digest() == whole


def test_keys_of_a_long_text_come_out_in_order_across_batches() -> None:
    """Keys are given out a batch at a time, side items put in place within each batch: across
    thousands of tokens, with marks and emoji at batch edges and at the end, they equal the keys
    laid out from the whole token list."""
    text = " ".join(f"Word{i % 50} 5 km[{i % 9 + 1}] 👍 IN CAPS" for i in range(700)) + " end 👍"
    scanned = scan_text(text)
    keys: list[str] = []
    side = iter(scanned.side)
    pending = next(side, None)
    for index in range(len(scanned.tokens) + 1):
        while pending is not None and pending.before == index:
            keys.append("\x00" + pending.key)
            pending = next(side, None)
        if index < len(scanned.tokens):
            token = scanned.tokens[index]
            keys.append(token.exact if token.sensitive else token.key)
    assert len(scanned.tokens) > 4_000
    assert token_keys(text) == keys
    whole = "sha256:" + hashlib.sha256("\n".join(keys).encode()).hexdigest()
    assert normalized_digest(text) == whole
