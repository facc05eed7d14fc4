"""Browser captures by real Celery workers (Redis broker, PostgreSQL records): each pool
process keeps one Chromium across its captures, and a worker that shuts down leaves none."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from tests.http_fixtures import LoopbackServer
from tests.workers.conftest import Snap


def chromium_profiles() -> set[str]:
    """The profile folders of every running Chromium snap started (one per browser)."""
    found = set()
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            arguments = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        for argument in arguments:
            if argument.startswith(b"--user-data-dir=") and b"snap-chromium-" in argument:
                found.add(argument.decode(errors="replace"))
    return found


@pytest.mark.postgres
def test_workers_capture_in_one_browser_and_leave_none_behind(
    snap_pg: Snap, http_server: LoopbackServer, tmp_path: Path, chromium: str
) -> None:
    before = chromium_profiles()
    for name in ("one", "two", "three", "four"):
        http_server.route(f"/{name}", body=f"<p>Page {name}.</p>".encode())
    urls = tmp_path / "urls.txt"
    urls.write_text(
        "".join(http_server.url(f"/{n}") + "\n" for n in ("one", "two", "three", "four"))
    )
    queued = snap_pg.json("fetch", "--enqueue", "--browser", str(urls))
    worker = snap_pg.start_worker("--concurrency", "1")
    progress = snap_pg.wait_until(queued["batchId"], 4, timeout=240)
    assert (progress["done"], progress["failed"]) == (4, 0), progress
    during = chromium_profiles() - before
    assert len(during) == 1  # four captures, one browser
    audit = snap_pg.json("audit", "--url", http_server.url("/three"))
    assert [c["method"] for c in audit["captures"]] == ["browser"]
    worker.send_signal(signal.SIGTERM)  # a warm shutdown
    worker.wait(timeout=60)
    deadline = time.monotonic() + 10
    while chromium_profiles() - before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not chromium_profiles() - before
