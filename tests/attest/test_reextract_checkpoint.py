"""``snap reextract`` ends as every recording command ends: its new extractions are log
entries, and the checkpoint it makes covers them (signed and stamped), so an extraction made
later is provable from the moment it was recorded, not from the next command's checkpoint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.attest.test_attest_subjects import run, sealed_home
from tests.attest.test_checked_before_handed_out import count
from tests.attest.tsa import LocalTsa


def test_new_extractions_are_checkpointed_when_reextract_ends(
    tmp_path: Path, tsa: LocalTsa, monkeypatch: pytest.MonkeyPatch
) -> None:
    import records.reextract as reextract_module
    from snapshotter.extract import Extraction

    env, _ = sealed_home(tmp_path, tsa)
    checkpoints, entries = count(env, "log_checkpoints"), count(env, "log_entries")

    def newer(path: Path, declared: str | None) -> Extraction:
        return Extraction("text/html", "The origin serves one request in ten. " * 5, "later@2")

    monkeypatch.setattr(reextract_module, "extract", newer)
    done = run(env, "reextract", "--json")
    assert done.exit_code == 0, done.output
    assert [item["new"] for item in json.loads(done.output)["extractions"]] == [True]
    assert count(env, "log_entries") == entries + 1
    assert count(env, "log_checkpoints") == checkpoints + 1
    newest = json.loads(run(env, "log", "verify", "--json").output)
    assert newest["ok"], newest
