"""The behaviour the reference design requires of check_quote, case by case."""

from __future__ import annotations

import pytest

from verifier import (
    COULD_NOT_CHECK,
    NOT_FOUND,
    QUOTE_FOUND,
    check_quote,
    normalized_digest,
    prepare,
)

PAGE = "A cache hit ratio of 90 percent means the origin serves only 1 request in 10."
QUOTE = "the origin serves only 1 request in 10"


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


def test_operator_quote_found() -> None:
    result = check_quote("x != 5", "stop if x != 5")
    assert result.found
    assert result.original == "x != 5"


@pytest.mark.parametrize(
    "noisy",
    [
        "the origin  serves only 1 request in 10",
        "The Origin SERVES only 1 request in 10",
        "the origin serves\nonly 1 request in 10",
        "the origin serves only 1 request\u00a0in 10",
        "the origin serves only 1 request in 10.",
    ],
    ids=["double space", "capitals", "line break", "nbsp", "trailing period"],
)
def test_copy_noise_does_not_fail_a_real_quote(noisy: str) -> None:
    result = check_quote(noisy, PAGE)
    assert result.found
    assert result.original == QUOTE


def test_curly_apostrophe_and_ligature_are_copy_noise() -> None:
    source = "The team said it didn't find a flaw in the ﬁnal design."
    assert check_quote("it didn’t find a flaw in the final design", source).found


def test_changed_number_not_found_but_closest_passage_shown() -> None:
    result = check_quote("the origin serves only 2 request in 10", PAGE)
    assert result.status == NOT_FOUND
    assert not result.found
    assert (result.start, result.end, result.original) == (None, None, None)
    assert result.matches == 0
    assert result.closest is not None
    assert result.closest.score == 7 / 8 == 0.875
    assert result.closest.text == QUOTE
    assert (result.closest.start, result.closest.end) == (38, 76)
    assert result.closest.differences == ((61, 62),)
    assert PAGE[61:62] == "1"


NEVER_FOUND = [
    ("0.5", "set it to -0.5"),
    ("0.5", "set it to - 0.5"),
    ("2", "wait 20 seconds"),
    ("1.000", "about 1,000 users"),
    ("5", "set to .5"),
    ("5", "a 5% loss"),
    ("5", "a 5 % loss"),
    ("10 2", "about 10² requests"),
    ("1 2", "use 1/2 of it"),
    ("1", "use 1 / 2 of it"),
    ("!!!", "arbitrary source"),
    ("अनुपस्थित", "अर्को पाठ"),
    ("x = 5", "x != 5"),
    ("x = 5", "x ≠ 5"),
    ("a = b", "a != b"),
    ("x <= 5", "x < 5"),
    ("5! ways", "there are 5! ways"),
    ("x === 5", "x === 5"),
]


@pytest.mark.parametrize(("quote", "source"), NEVER_FOUND)
def test_never_found(quote: str, source: str) -> None:
    result = check_quote(quote, source)
    assert result.status != QUOTE_FOUND
    assert not result.found
    assert result.spans == ()
    assert result.original is None


@pytest.mark.parametrize(
    ("quote", "source", "reason"),
    [
        ("0.5", "set it to - 0.5", "numeric context"),
        ("5", "a 5 % loss", "numeric context"),
        ("1", "use 1 / 2 of it", "numeric context"),
        ("!!!", "arbitrary source", "numeric form"),
        ("5! ways", "there are 5! ways", "numeric form"),
        ("x === 5", "x === 5", "numeric form"),
        ("half is 1/2", "half is 1/2", "numeric form"),
        ("from 10-20 units", "from 10-20 units", "numeric form"),
        ("at 3:00 sharp", "at 3:00 sharp", "numeric form"),
        ("½ cup", "½ cup", "numeric form"),
        ("the origin ... in 10", PAGE, "ellipsis"),
        ("the origin … in 10", PAGE, "ellipsis"),
        ("", PAGE, "empty quote"),
        (" ,;: ", PAGE, "empty quote"),
    ],
)
def test_could_not_check_reasons(quote: str, source: str, reason: str) -> None:
    result = check_quote(quote, source)
    assert result.status == COULD_NOT_CHECK
    assert result.reason == reason
    assert result.closest is None


def test_unicode_minus_is_the_same_sign() -> None:
    assert check_quote("set it to -0.5", "set it to \u22120.5").found
    assert check_quote("set it to \u22120.5", "set it to -0.5").found


def test_operator_order_matters() -> None:
    assert not check_quote("(a + b) / (a - b)", "ratio (a - b) / (a + b) here").found
    assert check_quote("(a - b) / (a + b)", "ratio (a - b) / (a + b) here").found


def test_hyphen_between_words_is_prose() -> None:
    assert check_quote("real time and or", "real-time and/or").found


def test_identifiers_are_compared_exactly() -> None:
    assert not check_quote("x2", "the value of x²").found
    assert not check_quote("5MS", "a delay of 5ms").found
    assert check_quote("x²", "the value of x²").found


def test_every_occurrence_is_reported_in_order() -> None:
    result = check_quote("to be", "To be, or not to be: to be.")
    assert result.matches == 3
    assert result.spans == ((0, 5), (14, 19), (21, 26))
    assert result.original == "To be"


def test_context_guard_keeps_unguarded_occurrences() -> None:
    result = check_quote("5", "a 5 % loss and 5 apples")
    assert result.found
    assert result.spans == ((15, 16),)


def test_number_inside_the_quote_is_not_guarded() -> None:
    assert check_quote("loss of 5 % today", "a loss of 5 % today").found


def test_quote_longer_than_source_is_not_found() -> None:
    result = check_quote("one two three four", "one two")
    assert result.status == NOT_FOUND
    assert result.closest is not None
    assert result.closest.score == 0.5
    assert result.closest.text == "one two"


def test_no_shared_token_means_no_closest_passage() -> None:
    assert check_quote("zebra", "nothing here").closest is None


def test_prepared_source_gives_identical_results() -> None:
    prepared = prepare(PAGE)
    for quote in (QUOTE, "the origin serves only 2 request in 10", "5", "1 ... 10"):
        assert prepared.check(quote) == check_quote(quote, PAGE)
    assert prepared.source == PAGE


def test_normalized_digest_ignores_copy_noise_but_not_numbers() -> None:
    digest = normalized_digest("Hello  World 1.5")
    assert digest.startswith("sha256:")
    assert len(digest) == len("sha256:") + 64
    assert digest == normalized_digest("hello\nworld 1.5")
    assert digest != normalized_digest("hello world 1,5")
    assert prepare("Hello  World 1.5").normalized_digest() == digest


def test_normalized_digest_is_the_keys_one_per_line() -> None:
    import hashlib

    expected = hashlib.sha256(b"a\n-5\n%").hexdigest()
    assert normalized_digest("A \u22125 %") == f"sha256:{expected}"
