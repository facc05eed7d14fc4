"""PDF pages, annotations and emitted records through the CLI, --since, and fsck's orphans."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from records.capture import capture_source
from records.citation_input import parse_document
from records.fsck import fsck, plan_fsck
from records.reverify import reverify, select_citations
from records.verify import verify_citations
from records.wire import citation_result_json
from records.workspace import Workspace
from snapshotter.store import blob_key
from tests.pdf_fixtures import LabelRange, build_pdf
from tests.records.conftest import Backend

FILLER = "This report describes the measured behaviour of the caching layer in detail."
PAGES = [
    ["Preface", FILLER, FILLER, "The authors thank the operations team."],
    ["Results", FILLER, "Median latency fell to 42 ms after the change.", FILLER],
    ["Discussion", FILLER, "Cold caches remain the main source of slow requests.", FILLER],
]


def pdf_snapshot(workspace: Workspace, tmp_path: Path) -> str:
    path = tmp_path / "report.pdf"
    path.write_bytes(build_pdf(PAGES, labels=[LabelRange(0, "r"), LabelRange(1, "D")]))
    record = capture_source(workspace, str(path))
    assert [page.label for page in record.pages] == ["i", "1", "2"]
    return record.snapshot_id


def check(workspace: Workspace, snapshot_id: str, quote: str, page: str) -> dict[str, object]:
    document = {"snapshotId": snapshot_id, "quote": quote, "page": page}
    report = verify_citations(workspace, parse_document(document))
    return citation_result_json(report.results[0])


def test_a_pdf_citation_is_checked_on_its_page(workspace: Workspace, tmp_path: Path) -> None:
    snapshot_id = pdf_snapshot(workspace, tmp_path)
    quote = "Median latency fell to 42 ms after the change"
    assert check(workspace, snapshot_id, quote, "1")["status"] == "quote_found"
    wrong_page = check(workspace, snapshot_id, quote, "2")
    assert wrong_page["status"] == "position_mismatch"
    assert wrong_page["foundOnPage"] == "1"
    assert "page 1, not on page 2" in str(wrong_page["reason"])
    front_matter = check(workspace, snapshot_id, "thank the operations team", "i")
    assert front_matter["status"] == "quote_found"


def test_a_page_cited_in_a_source_without_pages_cannot_be_checked(
    workspace: Workspace, example_page: Path
) -> None:
    """A page named for an HTML page is not a wrong position: there is nothing to compare."""
    snapshot_id = capture_source(workspace, str(example_page)).snapshot_id
    result = check(workspace, snapshot_id, "the origin serves only 1 request in 10", "2")
    assert result["status"] == "could_not_check"
    assert result["reason"] == "the cited page 2 cannot be checked: the source has no pages"


def test_annotation_and_emit_through_the_cli(
    backend: Backend, example_page: Path, tmp_path: Path
) -> None:
    done = backend.snap("fetch", "--json", str(example_page))
    fetched = json.loads(done.stdout)
    snapshot_id = fetched["snapshotId"]
    annotation = {
        "@context": "http://www.w3.org/ns/anno.jsonld",
        "type": "Annotation",
        "target": {
            "source": fetched["url"],
            "state": {"type": "TimeState", "cached": snapshot_id},
            "selector": [{"type": "TextQuoteSelector", "exact": "a tenfold cut in origin load"}],
        },
    }
    given = tmp_path / "annotation.json"
    given.write_text(json.dumps(annotation))
    emitted = tmp_path / "emitted.json"
    done = backend.snap("verify", "--emit", str(emitted), str(given))
    assert done.returncode == 0, done.stdout + done.stderr
    written = json.loads(emitted.read_text())
    [record] = written["citations"]
    assert record["selector"]["quote"]["exact"] == "a tenfold cut in origin load"
    assert record["selector"]["quote"]["prefix"]  # context comes from the stored text
    assert backend.snap("verify", str(emitted)).returncode == 0  # the whole --emit file
    again = tmp_path / "again.json"
    again.write_text(json.dumps(written["annotations"]))
    assert backend.snap("verify", str(again)).returncode == 0

    annotation["target"]["source"] = "https://blog.example/cdn"  # type: ignore[index]
    given.write_text(json.dumps(annotation))
    done = backend.snap("verify", str(given))
    assert done.returncode == 1
    assert "never captured from https://blog.example/cdn" in done.stdout


def test_reverify_since_selects_recent_citations(workspace: Workspace, example_page: Path) -> None:
    record = capture_source(workspace, str(example_page))
    verify_citations(
        workspace,
        parse_document({"snapshotId": record.snapshot_id, "quote": "a tenfold cut in origin load"}),
    )
    future = datetime.now(UTC) + timedelta(days=1)
    assert select_citations(workspace, since=future) == []
    past = datetime.now(UTC) - timedelta(days=1)
    report = reverify(workspace, select_citations(workspace, since=past))
    assert [result.status for result in report.results] == ["quote_found"]


def test_fsck_lists_orphans_and_reports_missing_blobs(
    backend: Backend, workspace: Workspace, example_page: Path
) -> None:
    record = capture_source(workspace, str(example_page))
    orphan = b"bytes no snapshot row names"
    digest = "sha256:" + hashlib.sha256(orphan).hexdigest()
    workspace.store.put("raw", digest, orphan, tags={"kind": "raw"})
    report = fsck(workspace, plan_fsck(workspace))
    assert report.ok
    assert report.orphans == (blob_key("raw", digest),)
    if backend.name == "embedded":  # a folder blob can be removed by hand; a locked S3 one cannot
        path = Path(workspace.settings.store_url) / blob_key("text", record.text_hash or "")
        path.unlink()
        report = fsck(workspace, plan_fsck(workspace))
        assert not report.ok
        assert "missing" in report.problems[0].problem
