"""Text output says what ``--json`` says (issue 20): a Gemini claim offset that could not be
used, and a differing bracket in the closest passage shown so that it can be read."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from records.passage_marks import marked_text
from snap.cli import cli
from snap.render import marked_passage
from tests.inputs.conftest import fixture
from verifier.closest import Edit, EditKind


def test_a_differing_bracket_is_marked_readably() -> None:
    text = "see [1] and (2)"
    shown = marked_passage(text, 0, [[4, 5]])
    assert "[[]" not in shown
    assert shown == "see ⟨[⟩1] and (2)"
    assert marked_passage("plain words here", 0, [[6, 11]]) == "plain [words] here"


def test_gemini_offset_inside_a_character_is_in_the_text_output(
    tmp_path: Path, home_env: dict[str, str]
) -> None:
    document = fixture("gemini.json")
    segment = document["candidates"][0]["groundingMetadata"]["groundingSupports"][0]["segment"]
    segment["startIndex"] = 17  # inside "ö"
    answer = tmp_path / "gemini.json"
    answer.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    env = {"SNAP_HOME": home_env["SNAP_HOME"], "SNAP_STORE": None, "SNAP_DATABASE_URL": None}
    result = CliRunner().invoke(cli, ["verify", str(answer)], env=env)
    assert result.exit_code == 1, result.output
    assert result.stdout.count("claim offsets not used:") == 2  # the web and retrieved chunks
    assert "inside a character" in result.stdout


def test_a_bracket_or_sign_in_a_differing_word_is_not_read_as_a_mark() -> None:
    text = "see [1] and -2"
    alignment = [
        Edit(EditKind.EQUAL, "see", 0, 3),
        Edit(EditKind.REPLACE, "[2]", 4, 7),
        Edit(EditKind.DROPPED, "", 8, 11),
        Edit(EditKind.EQUAL, "-2", 12, 14),
        Edit(EditKind.ADDED, "+3", 14, 14),
    ]
    shown = marked_text(text, 0, alignment)
    assert shown == "see ⟨-[1]⟩⟨+[2]⟩ ⟨-and⟩ -2 ⟨++3⟩"
    plain = [Edit(EditKind.DROPPED, "", 6, 11)]
    assert marked_text("plain words here", 0, plain) == "plain [-words] here"
