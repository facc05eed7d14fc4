"""verify, audit, reverify and fsck as library calls, on both backends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from records.audit import audit
from records.capture import capture_source
from records.citation_input import load_verify_input, parse_document
from records.emit import emit_verified
from records.fsck import fsck, plan_fsck
from records.verify import verify_citations
from records.vocabulary import Status
from records.wire import citation_result_json, verify_summary_json
from records.workspace import Workspace
from snap.errors import InputError, OffsetError
from snapshotter.capture import SnapshotRecord

QUOTE = "the origin serves only 1 request in 10"
EMOJI_TEXT = (
    "Release notes 🚀🚀 for version 2.\n"
    "The 𝑥 parameter now defaults to 42 milliseconds, down from 250.\n"
) * 3 + "That change halves the tail latency for most 🐢 readers of this page.\n"


def write_text_source(tmp_path: Path, text: str, name: str = "notes.txt") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def verify_document(workspace: Workspace, document: Any) -> list[dict[str, Any]]:
    report = verify_citations(workspace, parse_document(document))
    return [citation_result_json(result) for result in report.results]


def test_quote_found_in_a_captured_page(workspace: Workspace, example_page: Path) -> None:
    record = capture_source(workspace, str(example_page))
    [result] = verify_document(workspace, {"snapshotId": record.snapshot_id, "quote": QUOTE})
    assert result["status"] == "quote_found"
    assert result["quote"]["exact"] == QUOTE
    assert result["quote"]["prefix"].endswith("90 percent means ")
    assert result["span"]["end"] - result["span"]["start"] == len(QUOTE)


def test_changed_number_is_not_found_and_shows_the_closest_passage(
    workspace: Workspace, example_page: Path
) -> None:
    record = capture_source(workspace, str(example_page))
    quote = QUOTE.replace(" 1 ", " 2 ")
    [result] = verify_document(workspace, {"snapshotId": record.snapshot_id, "quote": quote})
    assert result["status"] == "not_found"
    assert result["closest"]["text"] == QUOTE
    assert result["closest"]["score"] == pytest.approx(7 / 8)


def test_fabricated_snapshot_ids_are_unknown(workspace: Workspace) -> None:
    fabricated = ["sha256:" + "0" * 64, "sha256:short", "../../etc/passwd"]
    results = verify_document(workspace, [{"snapshotId": s, "quote": QUOTE} for s in fabricated])
    assert [r["status"] for r in results] == ["unknown_snapshot"] * 3
    assert all(r["span"] is None and r["quote"] is None for r in results)


def test_url_without_a_capture_fails_closed(workspace: Workspace) -> None:
    [result] = verify_document(workspace, {"url": "https://never.example/", "quote": QUOTE})
    assert result["status"] == "unknown_snapshot"


def test_utf16_position_from_a_page_with_emoji(workspace: Workspace, tmp_path: Path) -> None:
    record = capture_source(workspace, str(write_text_source(tmp_path, EMOJI_TEXT)))
    quote = "halves the tail latency"
    start = EMOJI_TEXT.index(quote)
    start16 = len(EMOJI_TEXT[:start].encode("utf-16-le")) // 2
    assert start16 > start  # the emoji and 𝑥 before it are two UTF-16 units each
    selector = {
        "position": {"unit": "utf16", "start": start16, "end": start16 + len(quote)},
        "quote": {"exact": quote},
    }
    [result] = verify_document(workspace, {"snapshotId": record.snapshot_id, "selector": selector})
    assert result["status"] == "quote_found"
    assert result["span"] == {"start": start, "end": start + len(quote)}
    assert result["spanUtf16"] == {"start": start16, "end": start16 + len(quote)}


def test_quote_found_only_elsewhere_is_a_position_mismatch(
    workspace: Workspace, tmp_path: Path
) -> None:
    record = capture_source(workspace, str(write_text_source(tmp_path, EMOJI_TEXT)))
    selector = {
        "position": {"unit": "codepoint", "start": 0, "end": 13},
        "quote": {"exact": "halves the tail latency"},
    }
    [result] = verify_document(workspace, {"snapshotId": record.snapshot_id, "selector": selector})
    assert result["status"] == "position_mismatch"
    assert result["foundAt"] == [
        [EMOJI_TEXT.index("halves"), EMOJI_TEXT.index("halves") + len("halves the tail latency")]
    ]


@pytest.mark.parametrize(("start", "end"), [(0, 10_000), (10_000, 10_001)])
def test_offsets_past_the_end_are_input_errors(
    workspace: Workspace, tmp_path: Path, start: int, end: int
) -> None:
    record = capture_source(workspace, str(write_text_source(tmp_path, EMOJI_TEXT)))
    selector = {
        "position": {"unit": "utf16", "start": start, "end": end},
        "quote": {"exact": "halves"},
    }
    with pytest.raises(OffsetError, match=r"past the end|out of range|beyond"):
        verify_document(workspace, {"snapshotId": record.snapshot_id, "selector": selector})


def test_stale_fingerprint(workspace: Workspace, example_page: Path) -> None:
    record = capture_source(workspace, str(example_page))
    hashes = {"raw": record.raw_hash, "text": "sha256:" + "1" * 64}
    [result] = verify_document(
        workspace, {"snapshotId": record.snapshot_id, "quote": QUOTE, "hashes": hashes}
    )
    assert result["status"] == "stale_fingerprint"
    assert "text hash" in result["reason"]


def test_answer_reports_share_and_where_a_misattributed_quote_is(
    workspace: Workspace, example_page: Path, tmp_path: Path
) -> None:
    page = capture_source(workspace, str(example_page))
    notes = capture_source(workspace, str(write_text_source(tmp_path, EMOJI_TEXT)))
    answer = {
        "answerId": "a-1",
        "claims": [
            {"text": "CDNs cut origin load.", "snapshotId": page.snapshot_id, "quote": QUOTE},
            {
                "text": "Latency halved.",
                "snapshotId": page.snapshot_id,
                "quote": "halves the tail latency",
            },
            {
                "text": "The default is 42 ms.",
                "snapshotId": notes.snapshot_id,
                "quote": "now defaults to 42 milliseconds",
            },
        ],
    }
    report = verify_citations(workspace, parse_document(answer))
    summary = verify_summary_json(report)
    assert summary["shareVerified"] == pytest.approx(2 / 3, abs=1e-4)
    wrong = citation_result_json(report.results[1])
    assert wrong["status"] == "not_found"
    assert [e["snapshotId"] for e in wrong["foundElsewhere"]] == [notes.snapshot_id]


LOGIN_WALL = "<!DOCTYPE html><html><body><form>Please sign in.</form></body></html>"


def test_a_login_wall_cannot_be_checked(workspace: Workspace, tmp_path: Path) -> None:
    wall = write_text_source(tmp_path, LOGIN_WALL, name="wall.html")
    record = capture_source(workspace, str(wall))
    assert "too_short" in record.flags
    [result] = verify_document(workspace, {"snapshotId": record.snapshot_id, "quote": QUOTE})
    assert result["status"] == "could_not_check"


def test_a_short_text_file_is_checked_normally(workspace: Workspace, tmp_path: Path) -> None:
    record = capture_source(workspace, str(write_text_source(tmp_path, "The answer is 42.")))
    assert record.flags == ()
    check = {"snapshotId": record.snapshot_id, "quote": "The answer is 43"}
    [result] = verify_document(workspace, check)
    assert result["status"] == "not_found"
    assert result["closest"]["text"] == "The answer is 42"


def test_emitted_records_and_annotations_verify_again(
    workspace: Workspace, example_page: Path, tmp_path: Path
) -> None:
    record = capture_source(workspace, str(example_page))
    report = verify_citations(
        workspace,
        parse_document({"citationId": "c-emit", "snapshotId": record.snapshot_id, "quote": QUOTE}),
    )
    emitted = emit_verified(workspace, report.results)
    [citation] = emitted["citations"]
    [annotation] = emitted["annotations"]
    assert citation["hashes"]["text"] == record.text_hash
    assert annotation["target"]["state"]["cached"] == record.snapshot_id
    for document in (citation, annotation):
        path = tmp_path / "again.json"
        path.write_text(json.dumps(document))
        again = verify_citations(workspace, load_verify_input(path))
        assert [r.status for r in again.results] == ["quote_found"]
        assert again.results[0].citation_id == "c-emit"


def test_reusing_a_citation_id_for_another_quote_is_refused(
    workspace: Workspace, example_page: Path
) -> None:
    record = capture_source(workspace, str(example_page))
    verify_document(
        workspace, {"citationId": "c-1", "snapshotId": record.snapshot_id, "quote": QUOTE}
    )
    with pytest.raises(InputError, match="already recorded"):
        verify_document(
            workspace,
            {"citationId": "c-1", "snapshotId": record.snapshot_id, "quote": "a tenfold cut"},
        )


def test_audit_shows_captures_hashes_and_every_verification(
    workspace: Workspace, example_page: Path
) -> None:
    record = capture_source(workspace, str(example_page))
    for _ in range(2):
        verify_document(
            workspace, {"citationId": "c-a", "snapshotId": record.snapshot_id, "quote": QUOTE}
        )
    report = audit(workspace, citation_id="c-a", url=None, snapshot_id=None)
    assert report.snapshot.text_hash == record.text_hash
    assert report.snapshot.blobs
    assert all(blob.holds for blob in report.snapshot.blobs)
    assert [v.status for v in report.verifications] == [Status.QUOTE_FOUND] * 2
    assert [c.snapshot_id for c in report.captures] == [record.snapshot_id]


def test_fsck_is_clean_after_captures(workspace: Workspace, example_page: Path) -> None:
    record: SnapshotRecord = capture_source(workspace, str(example_page))
    report = fsck(workspace, plan_fsck(workspace))
    assert report.ok
    assert report.blobs_checked == 3  # raw, text and the manifest
    assert report.snapshots_checked == 1
    assert record.text_hash is not None


@pytest.mark.parametrize(
    "quote",
    [
        "🚀 today after the review",
        "ship it 🚀",
        "after the review [3].",
        "ship it 🚀 today after the review",
    ],
)
def test_an_emitted_record_verifies_again_when_the_quote_has_emoji_or_marks_at_its_edges(
    workspace: Workspace, tmp_path: Path, quote: str
) -> None:
    """The span snap finds leaves out an emoji or reference mark at the quote's edge, so the
    emitted quote does not have it; fed back to ``verify``, it is the same citation (a quote
    may leave those out), not an id reused for another quote."""
    source = write_text_source(
        tmp_path, "We decided to ship it 🚀 today after the review [3]. Done."
    )
    record = capture_source(workspace, str(source))
    given = {"citationId": "c-edge", "snapshotId": record.snapshot_id, "quote": quote}
    report = verify_citations(workspace, parse_document(given))
    [citation] = emit_verified(workspace, report.results)["citations"]
    path = tmp_path / "again.json"
    path.write_text(json.dumps(citation))
    again = verify_citations(workspace, load_verify_input(path))
    assert [(r.citation_id, r.status) for r in again.results] == [("c-edge", "quote_found")]
