"""Issue 8: evidence that survives. Reads by recorded version and store, intact / shadowed /
damaged / missing, extractions as their own records, idempotent and resumable checks, and
honest exit codes, on both backends."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

import records.reverify as reverify_module
from records.audit import audit
from records.capture import capture_source
from records.citation_input import parse_document
from records.fsck import fsck, plan_fsck
from records.models import Citation, Extraction, Verification
from records.reverify import reverify, select_citations
from records.rows import record_verifications
from records.verify import verify_citations
from records.vocabulary import BlobState
from records.workspace import Workspace
from tests.http_fixtures import LoopbackServer
from tests.records.conftest import Backend
from tests.records.test_records_cli import ARTICLE, QUOTE, fetch_page, run_json, write_json


def count(workspace: Workspace, model: type[Any]) -> int:
    with workspace.db.reading() as session:
        return int(session.scalar(sa.select(sa.func.count()).select_from(model)) or 0)


@pytest.mark.parametrize("how", ["delete-marker", "newer-version"])
def test_written_over_evidence_still_verifies_and_is_reported_shadowed(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path, how: str
) -> None:
    if backend.name == "embedded":
        pytest.skip("a folder store has one version per blob: nothing can sit on top of it")
    record = fetch_page(backend, http_server)
    for kind in ("raw", "text"):
        backend.shadow(kind, record["hashes"][kind], how=how)
    citation = write_json(tmp_path, {"snapshotId": record["snapshotId"], "quote": QUOTE})
    code, report = run_json(backend, "verify", str(citation))
    assert (code, report["results"][0]["status"]) == (0, "quote_found")
    code, checked = run_json(backend, "fsck")
    assert code == 0, checked
    assert checked["states"]["shadowed"] == 2
    assert checked["states"]["damaged"] == checked["states"]["missing"] == 0
    expected = "a delete marker" if how == "delete-marker" else "a newer version"
    assert all(expected in entry["detail"] for entry in checked["shadowed"])
    code, audited = run_json(backend, "audit", "--snapshot", record["snapshotId"])
    assert code == 0
    states = {blob["kind"]: blob["state"] for blob in audited["snapshot"]["blobs"]}
    assert states == {
        "raw": "shadowed",
        "text": "shadowed",
        "headers": "intact",
        "manifest": "intact",
    }
    assert "SHADOWED" in backend.snap("audit", "--snapshot", record["snapshotId"]).stdout


def test_a_recorded_version_that_does_not_hash_is_damaged(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    record = fetch_page(backend, http_server)
    backend.corrupt("raw", record["hashes"]["raw"])
    code, checked = run_json(backend, "fsck")
    assert code == 1
    # text, the capture's headers and its manifest intact, raw damaged
    assert checked["states"] == {"intact": 3, "shadowed": 0, "damaged": 1, "missing": 0}
    [problem] = checked["problems"]
    assert problem["state"] == "damaged"
    assert problem["kind"] == "raw"
    citation = write_json(tmp_path, {"snapshotId": record["snapshotId"], "quote": QUOTE})
    code, report = run_json(backend, "verify", str(citation))
    assert (code, report["results"][0]["status"]) == (1, "integrity_failure")
    done = backend.snap("audit", "--snapshot", record["snapshotId"])
    assert done.returncode == 1
    assert "DAMAGED" in done.stdout


def test_a_snapshot_is_read_from_the_store_it_was_recorded_in(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    """A configured store other than the recorded one is a configuration matter: the recorded
    store is used when reachable, else exit 3, one line, and nothing is recorded."""
    record = fetch_page(backend, http_server)
    citation = write_json(tmp_path, {"snapshotId": record["snapshotId"], "quote": QUOTE})
    elsewhere = {**backend.env, "SNAP_STORE": str(tmp_path / "another-store")}
    (tmp_path / "another-store").mkdir()
    moved = Backend(backend.name, elsewhere)
    code, report = run_json(moved, "verify", str(citation))
    assert (code, report["results"][0]["status"]) == (0, "quote_found")
    workspace = backend.workspace()
    before = count(workspace, Verification)
    if backend.name == "embedded":  # the recorded folder is gone (another machine, a rename)
        recorded = Path(backend.settings().store_url)
        shutil.move(recorded, tmp_path / "moved-away")
    else:  # the recorded bucket cannot be reached: a closed port on loopback
        moved = Backend(backend.name, {**elsewhere, "AWS_ENDPOINT_URL": "http://127.0.0.1:9"})
    done = moved.snap("verify", str(citation))
    assert done.returncode == 3, done.stderr
    assert done.stderr.count("\n") == 1
    assert f"snapshot {record['snapshotId']} is stored in" in done.stderr
    assert "the configured store is" in done.stderr
    assert count(workspace, Verification) == before
    assert moved.snap("audit", "--snapshot", record["snapshotId"]).returncode == 3
    workspace.close()


def test_a_failed_refetch_fails_reverify(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    fetch_page(backend, http_server)
    citation = write_json(tmp_path, {"url": http_server.url("/cdn"), "quote": QUOTE})
    assert backend.snap("verify", str(citation)).returncode == 0
    http_server.route("/cdn", body=b"gone", status=404)
    code, report = run_json(backend, "reverify", "--refetch")
    assert code == 1
    [failed] = report["refetchFailed"]
    assert failed["status"] == "refetch_failed"
    assert failed["url"] == http_server.url("/cdn")
    assert "404" in failed["reason"]
    [row] = report["results"]  # checked against the capture snap holds, and says the page is gone
    assert row["status"] == "quote_found"
    assert row["refetchFailed"] == failed["reason"]
    human = backend.snap("reverify", "--refetch")
    assert human.returncode == 1
    assert "refetch failed" in human.stdout


def test_the_same_bytes_extracted_differently_are_both_recorded(
    workspace: Workspace, http_server: LoopbackServer
) -> None:
    """The same bytes declared latin-1, then UTF-8, give two texts: both are kept, and the
    citation stays pinned to the extraction it was checked against."""
    body = ("Caf\u00e9 prices rose by 12 percent in the second quarter. " * 12).encode("utf-8")
    http_server.route("/note", body=body, content_type="text/plain; charset=latin-1")
    first = capture_source(workspace, http_server.url("/note"))
    quote = "Caf\u00c3\u00a9 prices rose by 12 percent"  # as latin-1 decodes the UTF-8 bytes
    given = parse_document({"url": http_server.url("/note"), "quote": quote})
    assert verify_citations(workspace, given).results[0].status == "quote_found"
    http_server.route("/note", body=body, content_type="text/plain; charset=utf-8")
    second = capture_source(workspace, http_server.url("/note"))
    assert second.snapshot_id == first.snapshot_id
    assert second.text_hash != first.text_hash
    with workspace.db.reading() as session:
        texts = [e.text_hash for e in session.scalars(sa.select(Extraction))]
        [pinned] = session.scalars(sa.select(Citation.extraction_id))
    assert texts == [first.text_hash, second.text_hash]
    report = audit(workspace, citation_id=None, url=None, snapshot_id=first.snapshot_id)
    assert len(report.snapshot.extractions) == 2
    assert {b.state for b in report.snapshot.blobs} == {BlobState.INTACT}
    assert verify_citations(workspace, given).results[0].status == "quote_found"
    [again] = reverify(workspace, select_citations(workspace)).results
    assert again.status == "source_changed"  # in its own extraction, not in the newer one
    assert again.outcome.details["pinnedExtractionId"] == pinned
    assert fsck(workspace, plan_fsck(workspace)).ok


def test_a_retried_batch_appends_nothing_twice(workspace: Workspace, example_page: Path) -> None:
    capture_source(workspace, str(example_page))
    verify_citations(workspace, parse_document({"url": example_page.as_uri(), "quote": QUOTE}))
    with workspace.db.reading() as session:
        [row] = session.scalars(sa.select(Verification))
    columns = [c.key for c in sa.inspect(Verification).columns if c.key not in ("id",)]
    values = {key: getattr(row, key) for key in columns if key != "checked_at"}
    with workspace.db.session() as session:
        ids = record_verifications(session, [values, values])
    assert ids == {row.idempotency_key: row.id}
    assert count(workspace, Verification) == 1


def test_an_interrupted_reverify_continues_without_redoing_committed_groups(
    workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    documents = []
    for number in range(3):
        page = tmp_path / f"page{number}.html"
        page.write_text(ARTICLE.replace("Caching at the edge", f"Caching, part {number}"))
        capture_source(workspace, str(page))
        documents += [
            {"url": page.as_uri(), "quote": QUOTE, "text": f"claim {number}-{n}"} for n in (1, 2)
        ]
    verify_citations(workspace, parse_document({"answerId": "a-1", "claims": documents}))
    citations = select_citations(workspace)
    groups_done = []
    real = reverify_module.check_group

    def interrupted(*args: Any) -> Any:
        if len(groups_done) == 1:
            raise KeyboardInterrupt
        groups_done.append(1)
        return real(*args)

    monkeypatch.setattr(reverify_module, "check_group", interrupted)
    with pytest.raises(KeyboardInterrupt):
        reverify(workspace, citations, run_id="run-1")
    assert count(workspace, Verification) == 6 + 2  # the first group is kept
    monkeypatch.setattr(reverify_module, "check_group", real)
    report = reverify(workspace, citations, run_id="run-1")
    assert report.resumed == 2
    assert [r.status for r in report.results] == ["quote_found"] * 6
    assert count(workspace, Verification) == 6 + 6  # nothing checked or recorded twice


@pytest.mark.committed  # migrations take table locks
def test_upgrade_from_the_first_schema_keeps_every_row_and_everything_verifies(
    workspace: Workspace, example_page: Path
) -> None:
    capture_source(workspace, str(example_page))
    given = parse_document({"citationId": "c-old", "url": example_page.as_uri(), "quote": QUOTE})
    assert verify_citations(workspace, given).passed
    workspace.db.downgrade("0001")  # today's schema, with today's data in it
    tables = ("snapshots", "captures", "citations", "verifications")
    with workspace.db.engine.connect() as connection:
        before = {t: connection.scalar(sa.text(f"SELECT count(*) FROM {t}")) for t in tables}  # noqa: S608
    assert before == dict.fromkeys(tables, 1)
    workspace.db.upgrade()
    with workspace.db.engine.connect() as connection:
        after = {t: connection.scalar(sa.text(f"SELECT count(*) FROM {t}")) for t in tables}  # noqa: S608
    assert after == before
    with workspace.db.reading() as session:
        [extraction] = session.scalars(sa.select(Extraction))
        citation = session.get(Citation, "c-old")
    assert extraction.decoding == "unrecorded"
    assert citation is not None
    assert citation.extraction_id == extraction.id
    assert verify_citations(workspace, given).passed
    assert reverify(workspace, select_citations(workspace)).passed
    assert fsck(workspace, plan_fsck(workspace)).ok


def test_urls_are_looked_up_in_canonical_form_and_kept_as_given(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    fetch_page(backend, http_server)
    plain = http_server.url("/cdn")
    spelled = plain.replace("http://", "HTTP://").replace("/cdn", "/%63dn") + "#section-2"
    citation = write_json(tmp_path, {"url": spelled, "quote": QUOTE})
    code, report = run_json(backend, "verify", str(citation))
    assert (code, report["results"][0]["status"]) == (0, "quote_found")
    assert report["results"][0]["url"] == spelled  # the citation keeps the URL as given
    code, audited = run_json(backend, "audit", "--url", plain + "#elsewhere")
    assert code == 0
    assert len(audited["captures"]) == 1
    assert [c["url"] for c in audited["citations"]] == [spelled]


def test_ids_can_be_typed_as_printed_or_by_a_unique_prefix(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    record = fetch_page(backend, http_server)
    snapshot_id = record["snapshotId"]
    citation = write_json(tmp_path, {"snapshotId": snapshot_id, "quote": QUOTE})
    code, report = run_json(backend, "verify", str(citation))
    citation_id = report["results"][0]["citationId"]
    for typed in (snapshot_id, snapshot_id[:19] + "…", snapshot_id[7:15], snapshot_id[7:].upper()):
        code, audited = run_json(backend, "audit", "--snapshot", typed)
        assert code == 0, (typed, audited)
        assert audited["snapshot"]["snapshotId"] == snapshot_id
    code, audited = run_json(backend, "audit", citation_id[:10])
    assert audited["citation"]["citationId"] == citation_id
    too_short = backend.snap("audit", "--snapshot", snapshot_id[7:13])
    assert too_short.returncode == 2  # cannot name a snapshot: unusable input, not "not recorded"
    assert "at least 8" in too_short.stderr


def test_an_ambiguous_prefix_lists_the_candidates(workspace: Workspace, tmp_path: Path) -> None:
    from records.ids import resolve_snapshot_id
    from snap.errors import InputError
    from tests.records.test_records_schema import snapshot_row

    with workspace.db.session() as session:
        for tail in ("1" * 56, "2" * 56):
            session.add(snapshot_row("sha256:" + "abcdef12" + tail))
    with workspace.db.reading() as session, pytest.raises(InputError) as raised:
        resolve_snapshot_id(session, "abcdef12")
    assert "sha256:abcdef12" + "1" * 56 in raised.value.message
    assert "sha256:abcdef12" + "2" * 56 in raised.value.message


def test_show_prints_what_was_stored_re_hashed(
    backend: Backend, http_server: LoopbackServer
) -> None:
    record = fetch_page(backend, http_server)
    prefix = record["snapshotId"][7:19]
    text = backend.snap("show", prefix)
    assert text.returncode == 0
    offset = text.stdout.index(QUOTE)
    code, around = run_json(backend, "show", prefix, "--around", str(offset))
    assert code == 0
    assert QUOTE in around["text"]
    assert around["start"] <= offset < around["end"]
    raw = backend.snap("show", prefix, "--raw")
    assert raw.stdout.encode() == ARTICLE.encode()
    headers = backend.snap("show", prefix, "--headers")
    assert "text/html" in headers.stdout.lower()
    backend.corrupt("text", record["hashes"]["text"])
    damaged = backend.snap("show", prefix)
    assert damaged.returncode == 1
    assert "integrity failure" in damaged.stderr
    assert QUOTE not in damaged.stdout


def test_reextract_records_a_new_extraction_and_refuses_a_conflicting_one(
    backend: Backend, workspace: Workspace, example_page: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import records.reextract as reextract_module
    from snap.errors import ExtractionConflict
    from snapshotter.extract import Extraction as Extracted

    record = capture_source(workspace, str(example_page))
    given = parse_document({"url": example_page.as_uri(), "quote": QUOTE})
    assert verify_citations(workspace, given).passed
    code, same = run_json(backend, "reextract")
    assert code == 0
    assert [r["new"] for r in same["extractions"]] == [False]  # same extractor, same text

    def newer(path: Path, declared: str | None) -> Extracted:
        return Extracted("text/html", "A different text entirely. " * 20, "trafilatura@99")

    monkeypatch.setattr(reextract_module, "extract", newer)
    [made] = reextract_module.reextract(workspace, reextract_module.plan_reextract(workspace))
    assert made.new
    assert made.extractor == "trafilatura@99"
    [again] = reverify(workspace, select_citations(workspace)).results
    assert again.status == "source_changed"
    assert "extracted differently" in (again.outcome.reason or "")

    def conflicting(path: Path, declared: str | None) -> Extracted:
        return Extracted("text/html", "Yet another text. " * 20, "trafilatura@99")

    monkeypatch.setattr(reextract_module, "extract", conflicting)
    with pytest.raises(ExtractionConflict):
        reextract_module.reextract(workspace, reextract_module.plan_reextract(workspace))
    assert count(workspace, Extraction) == 2
    assert record.snapshot_id == made.snapshot_id


@pytest.mark.committed  # two transactions at once
def test_a_read_in_progress_never_blocks_a_writer(backend: Backend, workspace: Workspace) -> None:
    """Reads are deferred (and, on SQLite, WAL): a writer commits while a reader is open."""
    import time

    from tests.records.test_records_schema import snapshot_row

    with workspace.db.reading() as reader:
        assert reader.scalar(sa.select(sa.func.count()).select_from(Verification)) == 0
        started = time.monotonic()
        with workspace.db.session() as writer:
            writer.add(snapshot_row("sha256:" + "cd" * 32))
        assert time.monotonic() - started < 5
    assert count(workspace, Extraction) == 0
