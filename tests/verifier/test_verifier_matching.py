"""check_quote, case by case: exact by default, and each entry of the copy-noise list.

Every entry of the copy-noise list (docs/matching.md) has its own test here that
shows the noise does not fail a real quote; the tests below them show that everything else is
compared.
"""

from __future__ import annotations

import hashlib

import pytest

from verifier import (
    COULD_NOT_CHECK,
    NOT_FOUND,
    QUOTE_FOUND,
    check_quote,
    normalized_digest,
    prepare,
)
from verifier.matcher import EMPTY_QUOTE, INNER_ELLIPSIS

PAGE = "A cache hit ratio of 90 percent means the origin serves only 1 request in 10."
QUOTE = "the origin serves only 1 request in 10"


def found_as(quote: str, source: str, original: str) -> None:
    result = check_quote(quote, source)
    assert result.status == QUOTE_FOUND, (quote, result)
    assert result.original == original


def test_quote_found_at_its_code_points() -> None:
    result = check_quote(QUOTE, PAGE)
    assert result.status == QUOTE_FOUND
    assert result.found
    assert (result.start, result.end) == (38, 76)
    assert result.original == PAGE[38:76] == QUOTE
    assert result.matches == 1
    assert result.spans == ((38, 76),)
    assert result.closest is None
    assert result.reason is None


# -- the copy-noise list, one test per entry ------------------------------------------------


@pytest.mark.parametrize(
    "noisy",
    [
        "the origin  serves only 1 request in 10",
        "the origin serves\nonly 1 request in 10",
        "the origin serves only 1 request\u00a0in 10",
        "the origin serves only 1 request\tin 10",
    ],
)
def test_noise_whitespace(noisy: str) -> None:
    found_as(noisy, PAGE, QUOTE)


def test_noise_whitespace_around_symbols() -> None:
    found_as("a loss of 5% today", "a loss of 5 % today", "a loss of 5 % today")
    found_as("(a-b)/(a+b)", "ratio (a - b) / (a + b) here", "(a - b) / (a + b)")


def test_noise_whitespace_between_a_number_and_a_word() -> None:
    """A number and a word are two tokens with or without a space ("5km" is "5 km")."""
    found_as("a run of 5km today", "the run: a run of 5 km today", "a run of 5 km today")
    found_as("1 request in10", "only 1 request in 10.", "1 request in 10")


def test_noise_whitespace_still_separates_words_and_numbers() -> None:
    assert not check_quote("foobar", "foo bar").found
    assert not check_quote("1000 users", "1 000 users").found


@pytest.mark.parametrize(
    "source",
    [
        "a co\u00adoperative",
        "a co\u200boperative",
        "a co\u2060operative",
        "a \u200ecooperative\u200f",
        "a coopera-\ntive",
        "a coopera\u00ad\ntive",
    ],
    ids=[
        "soft hyphen",
        "zero-width space",
        "word joiner",
        "bidi marks",
        "hyphenation",
        "shy+break",
    ],
)
def test_noise_invisible_characters_and_hyphenation(source: str) -> None:
    assert check_quote("a cooperative", source).found


def test_noise_hyphenation_needs_a_lower_case_continuation() -> None:
    assert not check_quote("AngloSaxon", "Anglo-\nSaxon").found


def test_noise_quotation_marks_by_kind() -> None:
    found_as('he said "it didn\'t work"', "he said “it didn’t work”", "he said “it didn’t work”")
    found_as("«bonjour»", "il dit «bonjour»", "«bonjour»")
    assert not check_quote("it's 5' long", "it's 5\" long").found  # feet are not inches


@pytest.mark.parametrize("dash", ["-", "\u2010", "\u2011", "\u2013", "\u2014", "\u2212", "\u05be"])
def test_noise_dashes(dash: str) -> None:
    assert check_quote(f"pages 10{dash}20", "pages 10–20").found
    assert check_quote(f"set it to {dash}0.5", "set it to \u22120.5").found


def test_noise_spaced_hyphen_for_a_dash() -> None:
    assert check_quote("slow - but sure", "slow—but sure").found


def test_noise_dash_runs_are_compared() -> None:
    assert not check_quote("x - 1", "x -- 1").found
    assert not check_quote("a -> b", "a - b").found


def test_noise_case_of_ordinary_words() -> None:
    found_as("The Origin SERVES only 1 request in 10", PAGE, QUOTE)
    found_as("a cache hit ratio", PAGE, "A cache hit ratio")


@pytest.mark.parametrize(
    ("quote", "source"),
    [
        ("0.6 mW", "0.6 MW"),
        ("400 Mb/s", "400 MB/s"),
        ("5 m", "5 M"),
        ("5 MB", "5 mb"),
        ("an iphone", "an iPhone"),
        ("a+ rating", "A+ rating"),
        ("c# code", "C# code"),
        ("0.6 mW", "0.6 M\u200bW"),  # an invisible character inside the source's unit
        ("5 mb", "5 M\u00adB"),
    ],
)
def test_case_is_compared_for_units_and_symbols(quote: str, source: str) -> None:
    result = check_quote(quote, source)
    assert result.status == NOT_FOUND
    assert result.reason == "the letter case differs where case counts"
    assert result.closest is not None
    assert result.closest.text == source


def test_units_written_alike_but_for_invisible_characters_match() -> None:
    assert check_quote("0.6 MW", "0.6 M\u200bW").found
    assert check_quote("5 MB", "5 M\u00adB").found


def test_noise_compatibility_forms() -> None:
    found_as("the final design", "the ﬁnal design", "the ﬁnal design")
    found_as("ＡＢＣ corp", "ABC corp", "ABC corp")
    found_as("5 µg", "5 μg", "5 μg")


@pytest.mark.parametrize(
    ("quote", "source"),
    [
        ("The dose was 106 cells", "The dose was 10⁶ cells"),
        ("x2", "the value of x²"),
        ("CO2 levels", "CO₂ levels"),
        ("1/2 cup", "½ cup"),
        ("the e- beam", "the e⁻ beam"),
        ("the e⁻ beam", "the e⁺ beam"),
    ],
)
def test_superscripts_subscripts_fractions_are_never_folded(quote: str, source: str) -> None:
    assert not check_quote(quote, source).found


def test_noise_emoji_may_be_left_out() -> None:
    source = "Ship it 👩\u200d💻 today ❤️ and 🇫🇷 tomorrow"
    found_as("Ship it today and tomorrow", source, source)
    found_as("it 👩\u200d💻 today ❤ and", source, "it 👩\u200d💻 today ❤️ and")
    assert not check_quote("it 👨\u200d💻 today", source).found
    assert not check_quote("today 👍 and", source).found


def test_noise_sentence_punctuation() -> None:
    found_as("per month and per year", "per month, and per year;", "per month, and per year")
    found_as(
        "Listing 9-3 Opening a file", "Listing 9-3: Opening a file", "Listing 9-3: Opening a file"
    )
    found_as("the origin serves only 1 request in 10.", PAGE, QUOTE)
    found_as("東京に行きました。", "私は東京に行きました。楽しかった", "東京に行きました")


def test_full_stops_and_colons_inside_tokens_are_compared() -> None:
    assert not check_quote("expr::ident", "expr.ident").found
    assert not check_quote("at 300", "at 3:00").found
    assert not check_quote("example com", "example.com").found


def test_noise_ellipsis_at_the_edges() -> None:
    source = "In 2.4.1 we fixed a crash on startup, and more."
    found_as("…fixed a crash on startup…", source, "fixed a crash on startup")
    found_as("... fixed a crash on startup", source, "fixed a crash on startup")
    found_as("[…] fixed a crash on startup", source, "fixed a crash on startup")


def test_ellipsis_inside_a_quote_cannot_be_checked_unless_it_is_in_the_source() -> None:
    result = check_quote("the origin … in 10", PAGE)
    assert (result.status, result.reason) == (COULD_NOT_CHECK, INNER_ELLIPSIS)
    assert check_quote("Loading... please wait", "Loading... please wait").found
    assert check_quote("fn f(...) ok", "see fn f(...) ok").found


def test_ellipsis_at_the_edge_keeps_the_number_guard() -> None:
    assert not check_quote("…costs CHF 5…", "it costs CHF 5'000 a year").found


def test_noise_reference_marks_may_be_left_out() -> None:
    source = "The river is 300 km long.[12] It floods[a] in spring.[citation needed] End."
    assert check_quote("The river is 300 km long. It floods in spring", source).found
    assert check_quote("It floods[a] in spring", source).found
    assert not check_quote("It floods[b] in spring", source).found
    assert not check_quote("The river is 300 km long.[13]", source).found


def test_bracketed_numbers_in_code_are_text() -> None:
    source = "let x = arr[1] + 2;"
    assert check_quote("x = arr[1] + 2", source).found
    assert not check_quote("x = arr[2] + 2", source).found
    assert not check_quote("x = arr + 2", source).found


# -- everything else is compared ------------------------------------------------------------


@pytest.mark.parametrize(
    ("quote", "source"),
    [
        ("expr & expr Short-circuiting logical AND", "expr && expr Short-circuiting logical AND"),
        ("expr | expr Short-circuiting logical OR", "expr || expr Short-circuiting logical OR"),
        ("&expr Dereference", "*expr Dereference"),
        ("var |= expr", "var &= expr"),
        ("expr::ident Field access", "expr.ident Field access"),
        ("expr! Error propagation", "expr? Error propagation"),
        (
            "The & operator eliminates a lot of boilerplate",
            "The ? operator eliminates a lot of boilerplate",
        ),
        ("x = 5", "x != 5"),
        ("x = 5", "x ≠ 5"),
        ("x <= 5", "x < 5"),
        ("a == b", "a === b"),
        ("(a + b) / (a - b)", "ratio (a - b) / (a + b) here"),
        ("1.000 users", "about 1,000 users"),
        ("10.5 kg", "10,5 kg"),
        ("Rh+ blood", "Rh− blood"),
        ("HIV+ patients", "HIV− patients"),
        ("an A+ rating", "an A- rating"),
        ("real time", "real-time"),
        ("and or", "and/or"),
    ],
)
def test_changed_symbols_numbers_and_signs_are_not_found(quote: str, source: str) -> None:
    result = check_quote(quote, source)
    assert result.status == NOT_FOUND, result
    assert result.spans == ()
    assert result.original is None


@pytest.mark.parametrize(
    ("quote", "source"),
    [
        ("written in C", "written in C++ today"),
        ("written in C", "written in C# today"),
        ("the Rh factor", "the Rh+ factor"),
        ("toxic in rats", "non-toxic in rats"),
        ("they don", "they don't"),
        ("CHF 5", "costs CHF 5'000 a year"),
        ("CHF 5", "costs CHF 5’000 a year"),
        ("costs 5", "costs 5,000 a year"),
        ("0.5", "set it to -0.5"),
        ("0.5", "set it to - 0.5"),
        ("5", "set to .5"),
        ("5", "a 5% loss"),
        ("5", "a 5 % loss"),
        ("10", "about 10⁶ cells"),
        ("in 2019", "in 2019, 2020 and 2021"),
        ("a fee of 5", "a fee of 5 million"),
        ("version 2", "version 2.5"),
        ("the widget weighs 3.5", "the widget weighs 3.5 kg and costs"),
        ("Zürich 92% 41", "Zürich 92% 41 ms p95"),
        ("each file is 5", "each file is 5 MB"),
        ("it costs 12", "it costs 12 dollars"),
    ],
)
def test_a_quote_never_cuts_the_source(quote: str, source: str) -> None:
    result = check_quote(quote, source)
    assert result.status == NOT_FOUND, result
    assert result.reason in (
        "the quote cuts a word, number or symbol of the source",
        "the source continues the number",
        None,
    )


@pytest.mark.parametrize(
    ("quote", "source"),
    [
        ("founded in 2019", "founded in 2019 by two engineers"),
        ("3.5 kg", "weighs 3.5 kg and"),
        ("rose to 41", "rose to 41\tms"),  # a table cell ends at the tab
        ("chapter 5", "see chapter 5 in the manual"),
    ],
)
def test_a_number_followed_by_a_word_that_counts_nothing_is_found(quote: str, source: str) -> None:
    """Only units and magnitude words continue a number across whitespace: "2019 by" does not
    (a quote ending at a number before an ordinary word is whole)."""
    assert check_quote(quote, source).status == QUOTE_FOUND


def test_a_refused_occurrence_shows_what_the_source_continues_with() -> None:
    result = check_quote("CHF 5", "it costs CHF 5'000 a year")
    assert result.closest is not None
    assert result.closest.text == "CHF 5'000"


@pytest.mark.parametrize(
    ("quote", "source", "original"),
    [
        ("see the manual", "(see the manual)", "see the manual"),
        ("the manual", "read “the manual”.", "the manual"),
        ("5! ways", "there are 5! ways", "5! ways"),
        ("x === 5", "if x === 5 then", "x === 5"),
        ("expr << expr Left-shift", "expr << expr\tLeft-shift\n", "expr << expr\tLeft-shift"),
        ("a !== b", "if a !== b then", "a !== b"),
        ("C++20", "supports C++20 fully", "C++20"),
        (
            "Listing 9-3: Opening a file",
            "Listing 9-3: Opening a file",
            "Listing 9-3: Opening a file",
        ),
        ("v1.3.1 (2024-03-05)", "## v1.3.1 (2024-03-05)", "v1.3.1 (2024-03-05)"),
        ("half is 1/2", "half is 1/2", "half is 1/2"),
        ("at 3:00 sharp", "at 3:00 sharp", "at 3:00 sharp"),
        ("½ cup", "add ½ cup", "½ cup"),
        ("本語のテ", "日本語のテキスト", "本語のテ"),
        ("วัสดี", "สวัสดีครับ", "วัสดี"),
        ("京に行", "私は東京に行きました", "京に行"),
        ("iPhone", "新しいiPhoneを買った", "iPhone"),
        ("a 5 apples", "a 5 % loss and a 5 apples", "a 5 apples"),
    ],
)
def test_a_quote_equal_to_the_source_in_every_character_is_found(
    quote: str, source: str, original: str
) -> None:
    found_as(quote, source, original)


def test_unspaced_scripts_compare_every_character() -> None:
    assert not check_quote("日本語のテスト", "日本語のテキスト").found
    assert not check_quote("この薬は有効", "この薬は無効").found


def test_a_quote_never_starts_or_ends_inside_a_thai_syllable() -> None:
    assert not check_quote("ปิดทุกวัน", "ร้านเปิดทุกวัน").found  # close daily / open daily
    assert check_quote("เปิดทุกวัน", "ร้านเปิดทุกวัน").found


def test_a_quote_never_drops_a_japanese_negative_ending() -> None:
    source = "この資料は配布されません。検索エンジンは索引を作ることがあります。"
    assert not check_quote("資料は配布され", source).found
    assert check_quote("資料は配布されません", source).found
    assert check_quote("索引を作る", source).found


def test_devanagari_with_joiners() -> None:
    assert check_quote("क्‍ष", "यह क्‍ष है").found
    assert not check_quote("अनुपस्थित", "अर्को पाठ").found


def test_changed_number_not_found_but_closest_passage_shown() -> None:
    result = check_quote("the origin serves only 2 request in 10", PAGE)
    assert result.status == NOT_FOUND
    assert (result.start, result.end, result.original) == (None, None, None)
    assert result.matches == 0
    assert result.closest is not None
    assert result.closest.score == 7 / 8 == 0.875
    assert result.closest.text == QUOTE
    assert (result.closest.start, result.closest.end) == (38, 76)
    assert result.closest.differences == ((61, 62),)


@pytest.mark.parametrize("quote", ["", " ,;: ", "👍", "…"])
def test_a_quote_with_nothing_to_compare_cannot_be_checked(quote: str) -> None:
    result = check_quote(quote, PAGE)
    assert (result.status, result.reason) == (COULD_NOT_CHECK, EMPTY_QUOTE)
    assert result.closest is None


def test_every_occurrence_is_reported_in_order() -> None:
    result = check_quote("to be", "To be, or not to be: to be.")
    assert result.matches == 3
    assert result.spans == ((0, 5), (14, 19), (21, 26))
    assert result.original == "To be"


def test_repetitive_source_finds_overlapping_occurrences() -> None:
    source = " ".join(["ha"] * 200)
    result = check_quote("ha ha ha", source)
    assert result.matches == 198
    assert result.spans[1] == (3, 11)


def test_quote_longer_than_source_is_not_found() -> None:
    result = check_quote("one two three four", "one two")
    assert result.status == NOT_FOUND
    assert result.closest is not None
    assert result.closest.score == 2 * 2 / (4 + 2)  # equal tokens over both lengths
    assert result.closest.differences == ((7, 7),)  # the gap where "three four" would be
    assert result.closest.text == "one two"


def test_no_shared_token_means_no_closest_passage() -> None:
    assert check_quote("zebra", "nothing here").closest is None


def test_prepared_source_gives_identical_results_on_every_path() -> None:
    prepared = prepare(PAGE)
    quotes = (QUOTE, "the origin serves only 2 request in 10", "1", "1 ... 10", "zebra")
    for _ in range(3):  # the first check searches packed ids; later ones use the index
        for quote in quotes:
            assert prepared.check(quote) == check_quote(quote, PAGE)
    assert prepared.source == PAGE


def test_normalized_digest_ignores_copy_noise_but_not_numbers_or_units() -> None:
    digest = normalized_digest("Hello  World 1.5 mW")
    assert digest.startswith("sha256:")
    assert len(digest) == len("sha256:") + 64
    assert digest == normalized_digest("hello\nworld 1.5 mW")
    assert digest != normalized_digest("hello world 1,5 mW")
    assert digest != normalized_digest("hello world 1.5 MW")
    assert prepare("Hello  World 1.5 mW").normalized_digest() == digest


def test_normalized_digest_is_the_keys_one_per_line() -> None:
    expected = hashlib.sha256(b"a\n-\n5\n%").hexdigest()
    assert normalized_digest("A \u22125 %") == f"sha256:{expected}"
