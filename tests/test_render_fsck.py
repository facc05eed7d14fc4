"""``snap fsck``'s last line counts what it says it checked: orphans are re-hashed and
counted, so the states add up to the blobs, and one snapshot is "1 snapshot"."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from tests.snap_cli import run_snap

SUMMARY = re.compile(
    r"checked (\d+) blobs? \((\d+) intact, (\d+) shadowed, (\d+) damaged, (\d+) missing,"
    r" (\d+) orphans?\) and (\d+) snapshots?: ok"
)


def test_the_states_add_up_to_the_blobs_checked(home_env: dict[str, str], tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text("<html><body><main><p>One page, one snapshot.</p></main></body></html>")
    assert run_snap(["fetch", str(page), "--json"], home_env).returncode == 0
    orphan = b"bytes no record names"
    digest = hashlib.sha256(orphan).hexdigest()
    folder = Path(home_env["SNAP_HOME"]) / "store" / "raw" / "sha256" / digest[:2]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / digest).write_bytes(orphan)
    done = run_snap(["fsck"], home_env)
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()[-1]
    found = SUMMARY.fullmatch(last)
    assert found is not None, last
    blobs, *states, snapshots = (int(n) for n in found.groups())
    assert blobs == sum(states)
    assert states[-1] == 1  # the orphan
    assert snapshots == 1
    assert last.endswith("and 1 snapshot: ok")
    report = json.loads(run_snap(["fsck", "--json"], home_env).stdout)
    assert len(report["orphans"]) == 1
