"""What a queued re-verification found is shown by ``snap jobs`` (still found / broke /
refetch failed, the citations that broke) and sets its exit code, as the in-process command
does; a run id is resolved the same way in every command, and an unknown one is refused.

Each test here failed before the fix it names (issue 20)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.http_fixtures import LoopbackServer, http_server  # noqa: F401  (fixture)
from tests.workers.conftest import Snap

pytestmark = pytest.mark.slow  # workers started and waited for, about a minute a test

PAGES = 3
FILLER = "".join(
    f"<p>Paragraph {n} explains how the weekly figures were gathered and checked.</p>"
    for n in range(10)
)


def kept(n: int) -> str:
    return f"the figure for region {n} stayed at {n * 7 + 3} thousand"


def dropped(n: int) -> str:
    return f"the forecast for region {n} was raised to {n * 11 + 5} thousand"


def page(n: int, *, with_dropped: bool) -> bytes:
    second = dropped(n) if with_dropped else f"the forecast for region {n} was withdrawn"
    return (
        f"<html><head><title>Region {n}</title></head><body><main><h1>Region {n}</h1>"
        f"<p>This week {kept(n)}.</p><p>Meanwhile {second}.</p>{FILLER}</main></body></html>"
    ).encode()


def cited_pages_that_changed(snap: Snap, server: LoopbackServer, tmp_path: Path) -> None:
    """Three pages, two citations each, verified; then each page changes so that one of its
    two quotes is gone from the new capture: 3 still found, 3 broke (source_changed)."""
    citations = []
    for n in range(PAGES):
        server.route(f"/region/{n}", body=page(n, with_dropped=True))
        url = server.url(f"/region/{n}")
        assert snap.run("fetch", url).returncode == 0
        citations += [
            {"citationId": f"c-kept-{n}", "url": url, "quote": kept(n)},
            {"citationId": f"c-dropped-{n}", "url": url, "quote": dropped(n)},
        ]
    path = tmp_path / "citations.json"
    path.write_text(json.dumps(citations), encoding="utf-8")
    verified = snap.run("verify", str(path))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    for n in range(PAGES):
        server.route(f"/region/{n}", body=page(n, with_dropped=False))
        assert snap.run("fetch", server.url(f"/region/{n}")).returncode == 0


def assert_outcomes_shown(text: str) -> None:
    assert "citations: still found 3  broke 3  refetch failed 0" in text
    for n in range(PAGES):
        assert f"✗ source changed  c-dropped-{n}" in text
    assert "c-kept-" not in text


@pytest.mark.postgres
def test_jobs_shows_what_queued_reverification_found_and_exits_1(
    snap_pg: Snap,
    http_server: LoopbackServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    cited_pages_that_changed(snap_pg, http_server, tmp_path)
    queued = snap_pg.json("reverify", "--enqueue")
    batch = queued["batchId"]
    snap_pg.start_worker("--concurrency", "2")
    waited = snap_pg.run("jobs", "--wait", batch, timeout=180)
    assert waited.returncode == 1, waited.stdout + waited.stderr
    assert "done 3  failed 0" in waited.stdout  # every task ran: that is not the news
    assert_outcomes_shown(waited.stdout)

    progress = snap_pg.json("jobs", batch[:8])
    outcomes = progress["outcomes"]
    assert (outcomes["stillFound"], outcomes["broke"], outcomes["refetchFailed"]) == (3, 3, 0)
    assert outcomes["byStatus"] == {"quote_found": 3, "source_changed": 3}
    assert sorted(b["citationId"] for b in outcomes["broken"]) == [
        f"c-dropped-{n}" for n in range(PAGES)
    ]
    assert snap_pg.run("jobs", batch[:8]).returncode == 1
    listed = snap_pg.run("jobs")
    assert f"{batch}  reverify" in listed.stdout
    assert "broke 3" in listed.stdout

    # The same run, continued in-process by a prefix of its id: nothing checked twice.
    again = snap_pg.run("reverify", "--run", batch[:8], "--json")
    assert again.returncode == 1, again.stderr
    summary = json.loads(again.stdout)["summary"]
    assert (summary["runId"], summary["resumed"], summary["total"]) == (batch, 6, 6)


def test_in_process_queued_reverification_exits_1_when_a_citation_broke(
    snap_embedded: Snap,
    http_server: LoopbackServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    cited_pages_that_changed(snap_embedded, http_server, tmp_path)
    done = snap_embedded.run("reverify", "--enqueue")
    assert done.returncode == 1, done.stdout + done.stderr
    assert_outcomes_shown(done.stdout)


def test_an_unknown_run_id_is_refused_and_prefixes_resolve(
    snap_embedded: Snap,
    http_server: LoopbackServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    cited_pages_that_changed(snap_embedded, http_server, tmp_path)
    first = snap_embedded.run("reverify", "--json")
    assert first.returncode == 1
    run_id = json.loads(first.stdout)["summary"]["runId"]

    for unknown in ("no-such-run", "0123456789abcdef0123456789abcdef", run_id[:6] + "zz"):
        refused = snap_embedded.run("reverify", "--run", unknown)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert refused.stderr.startswith("snap: error: no reverify run ")
        assert len(refused.stderr.splitlines()) == 1
    # Nor was a run started under the refused id: asked again, it is still unknown.
    assert snap_embedded.run("reverify", "--run", "no-such-run").returncode == 2

    resumed = snap_embedded.run("reverify", "--run", run_id[:8], "--json")
    assert resumed.returncode == 1, resumed.stderr
    summary = json.loads(resumed.stdout)["summary"]
    assert (summary["runId"], summary["resumed"]) == (run_id, 6)
