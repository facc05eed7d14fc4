"""The tokenizer rules: what is folded, what is kept exact, what only separates."""

from __future__ import annotations

import pytest

from verifier import NORMALIZER_ID, tokenize


def kinds_and_keys(text: str) -> list[tuple[str, str]]:
    return [(token.kind, token.key) for token in tokenize(text)]


def test_tokens_keep_their_original_spans() -> None:
    text = "Ｔhe  ﬁnal—value: −0.5%!"
    for token in tokenize(text):
        assert text[token.start : token.end] == token.text


def test_words_fold_case_and_compatibility_forms() -> None:
    assert kinds_and_keys("ＴＨＥ ﬁnal Straße") == [
        ("word", "the"),
        ("word", "final"),
        ("word", "straße"),
    ]


def test_zero_width_joiners_stay_inside_words() -> None:
    word = "क्\u200dष"
    assert [token.text for token in tokenize(f"{word} x")] == [word, "x"]


def test_combining_marks_stay_inside_words_and_compose() -> None:
    decomposed = "cafe\u0301"
    (token,) = tokenize(decomposed)
    assert token.text == decomposed
    assert token.key == "café"


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("-0.5", "-0.5"),
        ("\u22120.5", "-0.5"),
        ("+3", "+3"),
        ("1,000", "1,000"),
        ("1.000", "1.000"),
        (".5", ".5"),
        ("1.5e-3", "1.5e-3"),
        ("10²", "10²"),
        ("10⁻³", "10⁻³"),
        ("5%", "5%"),
        ("3‰", "3‰"),
    ],
)
def test_numbers_are_kept_exactly_as_written(text: str, key: str) -> None:
    assert kinds_and_keys(text) == [("number", key)]


@pytest.mark.parametrize("text", ["x²", "5ms", "CO₂", "sha256"])
def test_letters_mixed_with_digits_are_exact_identifiers(text: str) -> None:
    assert kinds_and_keys(text) == [("ident", text)]


def test_units_and_currency_are_tokens() -> None:
    assert kinds_and_keys("5 % of $ 3 at 20 °C") == [
        ("number", "5"),
        ("unit", "%"),
        ("word", "of"),
        ("unit", "$"),
        ("number", "3"),
        ("word", "at"),
        ("number", "20"),
        ("unit", "°"),
        ("word", "c"),
    ]


@pytest.mark.parametrize(
    ("text", "ops"),
    [
        ("x != 5", ["!="]),
        ("x<=y", ["<="]),
        ("a ≈ b", ["≈"]),
        ("(a - b) / (a + b)", ["-", "/", "+"]),
        ("x-5", ["-"]),
        ("2*3", ["*"]),
    ],
)
def test_operator_runs_are_whole_tokens(text: str, ops: list[str]) -> None:
    assert [key for kind, key in kinds_and_keys(text) if kind == "op"] == ops


@pytest.mark.parametrize("text", ["real-time", "and/or", "Wow!", "*emphasis*", "a -- b"])
def test_operator_characters_in_prose_only_separate(text: str) -> None:
    assert all(kind == "word" for kind, _ in kinds_and_keys(text))


@pytest.mark.parametrize(
    "text", ["1/2", "10-20", "10–20", "3:00", "½", "5!", "===", "!!!", "2024-01-15"]
)
def test_unparseable_numeric_forms_are_marked(text: str) -> None:
    assert "numform" in [kind for kind, _ in kinds_and_keys(text)]


def test_whitespace_and_punctuation_only_separate() -> None:
    assert kinds_and_keys("“Don’t”\u00a0— stop;\n\tnow.") == [
        ("word", "don"),
        ("word", "t"),
        ("word", "stop"),
        ("word", "now"),
    ]


def test_normalizer_id_is_versioned() -> None:
    assert NORMALIZER_ID == "tok-nfkc-lower@1"
