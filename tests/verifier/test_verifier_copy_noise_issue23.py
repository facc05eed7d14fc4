"""The copy-noise decisions of issue 23, one test per rule, both sides of each."""

from __future__ import annotations

import pytest

from verifier import check_quote

PSQL = " name | share\n------+------\n orders | 38\n% of all rows\n delta\n -12\n +40\n"


@pytest.mark.parametrize(
    ("quote", "source"),
    [
        ("orders | 38", PSQL),  # the next line starts with %
        ("-12", PSQL),  # the next line starts with a signed number
        ("+40", PSQL),
        ("7 % 3\t1", "%\tmodulo\t7 % 3\t1\n^\texponent\t2 ^ 3\t8\n"),
        ("2 ^ 3\t8", "^\texponent\t2 ^ 3\t8\n|/\tsquare root\t|/ 25\t5\n"),
        ("x = 5", "x = 5\n~y"),
    ],
)
def test_a_number_edge_stops_at_a_line_break_or_a_tab(quote: str, source: str) -> None:
    assert check_quote(quote, source).found


@pytest.mark.parametrize(
    ("quote", "source"),
    [("5", "a 5 % loss"), ("orders | 3", PSQL), ("-1", PSQL), ("in 2019", "in 2019, 2020")],
)
def test_a_number_edge_still_holds_on_its_line(quote: str, source: str) -> None:
    assert not check_quote(quote, source).found


def test_a_list_after_a_date_or_a_version_is_not_one_number() -> None:
    source = "The maintenance build of 2024-05-14, 2.10.2 fixes the parser."
    assert check_quote("The maintenance build of 2024-05-14", source).found
    assert check_quote("2.10.2 fixes the parser", source).found
    assert not check_quote("The maintenance build of 2024-05-1", source).found


@pytest.mark.parametrize(
    "quote",
    [
        "“the cache is warm”",
        '"the cache is warm"',
        "«the cache is warm»",
        "»the cache is warm«",
        "„the cache is warm“",
        "「the cache is warm」",
        "“…the cache is warm”",
    ],
)
def test_a_quote_wrapped_in_quotation_marks_is_found(quote: str) -> None:
    result = check_quote(quote, "He wrote that the cache is warm, and left.")
    assert result.found
    assert result.original == "the cache is warm"


def test_marks_of_the_same_kind_inside_keep_a_wrapped_quote_as_written() -> None:
    assert not check_quote('"a" and "b"', "a and b").found
    assert not check_quote("“the cache is cold”", "He wrote that the cache is warm.").found


@pytest.mark.parametrize(
    ("quote", "source"),
    [
        ("Τι είναι αυτό; ρώτησε", "Τι είναι αυτό\u037e ρώτησε"),  # Greek question mark
        ('צה"ל', "צה״ל"),  # gershayim
        ("……and so it went", "……and so it went"),
        ("and so it went", "……and so it went"),
        ("2024-05-14", "日期：2024-05-14"),
        ("日期:2024-05-14", "日期：2024-05-14"),
    ],
)
def test_typed_stand_ins_on_the_copy_noise_list(quote: str, source: str) -> None:
    assert check_quote(quote, source).found


@pytest.mark.parametrize(
    ("quote", "source"),
    [
        ("The team — three people", "The team -- three people"),
        ("at 60 °C", "at 60 ℃ for an hour"),
        ("צהל", "צה״ל"),
    ],
)
def test_stand_ins_kept_apart(quote: str, source: str) -> None:
    assert not check_quote(quote, source).found


@pytest.mark.parametrize(
    ("written", "changed"),
    [
        ("दर्\u200dया", "दर्या"),  # Devanagari eyelash ra
        ("അവന്\u200d", "അവന്"),  # Malayalam chillu
        ("ක්\u200dෂ", "ක්ෂ"),  # Sinhala conjunct
    ],
)
def test_joiners_inside_indic_scripts_are_compared(written: str, changed: str) -> None:
    source = f"it is spelt {written} here"
    assert check_quote(f"spelt {written} here", source).found
    assert not check_quote(f"spelt {changed} here", source).found


def test_joiners_stay_noise_between_latin_letters_and_in_emoji() -> None:
    assert check_quote("cooperate now", "co\u200doperate now").found
    assert check_quote("Ship it today", "Ship it 👩\u200d💻 today").found
