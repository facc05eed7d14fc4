"""A copied or moved SNAP_HOME keeps working, and ``snap store relocate`` moves what was recorded
with an absolute folder before (issue 20: after ``cp -a home elsewhere`` every audit exited 3 and
fsck listed every blob as an orphan)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from snap.cli import cli
from snap.errors import ConfigError
from snapshotter.store import FolderStore, canonical_location, open_store

ENV: dict[str, str | None] = {"SNAP_STORE": None, "SNAP_DATABASE_URL": None}


def snap(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env=ENV | {"SNAP_HOME": str(home)})


def snap_json(home: Path, *args: str) -> tuple[int, Any]:
    result = snap(home, *args, "--json")
    return result.exit_code, json.loads(result.stdout)


def recorded_locations(home: Path) -> list[str]:
    with sqlite3.connect(home / "snap.db") as db:
        return [row[0] for row in db.execute("SELECT store_location FROM snapshots")]


def set_locations(home: Path, location: str) -> None:
    with sqlite3.connect(home / "snap.db") as db:
        db.execute("UPDATE snapshots SET store_location = ?", (location,))


@pytest.fixture
def captured(tmp_path: Path) -> tuple[Path, str]:
    """A home with one captured local file; returns the home and the snapshot id."""
    page = tmp_path / "page.txt"
    page.write_text("The harbour opened in 1901 after six years of work.\n", encoding="utf-8")
    home = tmp_path / "old-home"
    code, record = snap_json(home, "fetch", str(page))
    assert code == 0
    return home, record["snapshotId"]


def test_a_folder_store_in_the_home_is_recorded_relative_to_it(captured: tuple[Path, str]) -> None:
    home, _ = captured
    assert recorded_locations(home) == ["home:store"]


def test_a_moved_home_audits_and_fscks_clean(captured: tuple[Path, str], tmp_path: Path) -> None:
    home, snapshot_id = captured
    moved = tmp_path / "elsewhere" / "home"
    moved.parent.mkdir()
    shutil.move(home, moved)
    code, report = snap_json(moved, "audit", "--snapshot", snapshot_id)
    assert code == 0, report
    code, fsck = snap_json(moved, "fsck")
    assert code == 0, fsck
    assert fsck["orphans"] == []


def test_a_copied_home_reads_its_own_store(captured: tuple[Path, str], tmp_path: Path) -> None:
    home, snapshot_id = captured
    copy = tmp_path / "copy"
    shutil.copytree(home, copy, symlinks=True)
    shutil.rmtree(home / "store")  # the copy must not be reading the original's blobs
    code, _ = snap_json(copy, "audit", "--snapshot", snapshot_id)
    assert code == 0


def test_relocate_rewrites_an_absolute_location_recorded_before(
    captured: tuple[Path, str], tmp_path: Path
) -> None:
    home, snapshot_id = captured
    old_store = (home / "store").absolute().as_uri()
    set_locations(home, old_store)  # what snap recorded before this change
    moved = tmp_path / "moved"
    shutil.move(home, moved)
    stale = snap(moved, "audit", "--snapshot", snapshot_id)
    assert stale.exit_code == 3
    assert f"snap store relocate {old_store}" in stale.stderr  # the way out, in the one line
    code, result = snap_json(moved, "store", "relocate", old_store)
    assert code == 0, result
    assert result == {"from": [old_store], "to": "home:store", "snapshots": 1, "blobsChecked": 2}
    assert recorded_locations(moved) == ["home:store"]
    assert snap(moved, "audit", "--snapshot", snapshot_id).exit_code == 0
    code, fsck = snap_json(moved, "fsck")
    assert (code, fsck["orphans"]) == (0, [])
    text = snap(moved, "store", "relocate", old_store)
    assert text.exit_code == 2  # nothing is recorded there any more
    assert "snapshots are recorded in: home:store" in text.stderr


def test_an_old_absolute_location_inside_the_home_is_the_configured_store(
    captured: tuple[Path, str],
) -> None:
    """Databases written before: no migration is needed while the home has not moved."""
    home, snapshot_id = captured
    set_locations(home, (home / "store").absolute().as_uri())
    assert snap(home, "audit", "--snapshot", snapshot_id).exit_code == 0
    code, fsck = snap_json(home, "fsck")
    assert (code, fsck["orphans"]) == (0, [])


def test_relocate_refuses_a_store_without_the_blobs(
    captured: tuple[Path, str], tmp_path: Path
) -> None:
    home, _ = captured
    empty = tmp_path / "empty-store"
    empty.mkdir()
    result = snap(home, "store", "relocate", "home:store", str(empty))
    assert result.exit_code == 1
    assert "2 of 2 blobs are not in" in result.stderr
    assert "nothing was relocated" in result.stderr
    assert recorded_locations(home) == ["home:store"]


def test_relocate_of_a_location_never_recorded_is_exit_2(captured: tuple[Path, str]) -> None:
    home, _ = captured
    result = snap(home, "store", "relocate", "/nowhere/store")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert "no snapshot to move is recorded in /nowhere/store" in result.stderr


def test_how_a_folder_store_is_recorded(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert FolderStore(home / "store", home=home).location == "home:store"
    assert FolderStore(home / "a" / ".." / "b", home=home).location == "home:b"
    outside = tmp_path / "elsewhere"
    assert FolderStore(outside, home=home).location == outside.as_uri()
    assert FolderStore(home / "store").location == (home / "store").as_uri()  # no home given
    opened = open_store("home:store", home=tmp_path / "moved")
    assert isinstance(opened, FolderStore)
    assert opened.root == tmp_path / "moved" / "store"
    assert canonical_location((home / "store").as_uri(), home=home) == "home:store"
    assert canonical_location(str(home / "store"), home=home) == "home:store"
    assert canonical_location("s3://bucket/prefix", home=home) == "s3://bucket/prefix"
    with pytest.raises(ConfigError, match="relative to the snap home"):
        open_store("home:store")
