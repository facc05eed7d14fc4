"""A batch item's result, typed by its batch's kind (records.item_results): what every kind
writes reads back as it was, rows as earlier versions of snap wrote them read the same, and
a batch run in-process gives each done item's result typed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from records.item_results import (
    Captured,
    ItemResult,
    Reextracted,
    Reverified,
    UnreadableResult,
    read_item_result,
)
from records.jobs import item_results
from records.vocabulary import BatchKind
from tests.http_fixtures import LoopbackServer
from tests.records.conftest import Backend
from tests.records.test_records_wire_shapes import run_json
from tests.records.test_records_wire_shapes_checks import HARBOUR, QUOTE

counts = st.integers(min_value=0, max_value=10**9)
results = st.one_of(
    st.builds(Captured, st.from_regex(r"sha256:[0-9a-f]{64}", fullmatch=True)),
    st.builds(Reverified, counts, counts, counts),
    st.builds(Reextracted, st.lists(counts, max_size=5).map(tuple)),
)


@given(results)
def test_every_result_reads_back_as_it_was_stored(result: ItemResult) -> None:
    assert read_item_result(result.kind, result.stored()) == result


@pytest.mark.parametrize(
    ("kind", "stored", "typed"),
    [
        (BatchKind.CAPTURE, "sha256:" + "ab" * 32, Captured("sha256:" + "ab" * 32)),
        (BatchKind.REVERIFY, "3 checked, 2 passed", Reverified(3, 2)),
        (BatchKind.REVERIFY, "0 checked, 0 passed, 4 no longer recorded", Reverified(0, 0, 4)),
        (BatchKind.REEXTRACT, "[4, 5]", Reextracted((4, 5))),
        (BatchKind.REEXTRACT, "[]", Reextracted(())),
    ],
)
def test_rows_written_before_the_typed_results_read_the_same(
    kind: BatchKind, stored: str, typed: ItemResult
) -> None:
    """The forms records/jobs.py wrote since batches were added (revision 0004)."""
    assert read_item_result(kind, stored) == typed
    assert typed.stored() == stored


@pytest.mark.parametrize(
    ("kind", "stored"),
    [
        (BatchKind.REVERIFY, "3 checked"),
        (BatchKind.REVERIFY, "three checked, 2 passed"),
        (BatchKind.REEXTRACT, "4, 5"),
        (BatchKind.REEXTRACT, '["4"]'),
        (BatchKind.REEXTRACT, "[true]"),
    ],
)
def test_a_result_no_kind_writes_is_refused_in_one_line(kind: BatchKind, stored: str) -> None:
    with pytest.raises(UnreadableResult) as refused:
        read_item_result(kind, stored)
    assert "\n" not in refused.value.message
    assert repr(stored) in refused.value.message


def test_each_kind_of_batch_gives_its_items_typed_results(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    http_server.route("/harbour", body=HARBOUR)
    url = http_server.url("/harbour")
    urls = tmp_path / "urls.txt"
    urls.write_text(f"{url}\n")
    captured = run_json(backend, "fetch", "--enqueue", str(urls))
    cited = tmp_path / "citations.json"
    cited.write_text(json.dumps([{"citationId": "found", "url": url, "quote": QUOTE}]))
    assert backend.snap("verify", str(cited)).returncode == 0
    reverified = run_json(backend, "reverify", "--enqueue")
    reextracted = run_json(backend, "reextract", "--enqueue")
    workspace = backend.workspace()
    try:
        [stored] = item_results(workspace.db, captured["batchId"]).values()
        assert isinstance(stored, Captured)
        assert stored.snapshot_id.startswith("sha256:")
        snapshot = stored.snapshot_id
        assert item_results(workspace.db, reverified["batchId"]) == {snapshot: Reverified(1, 1)}
        [again] = item_results(workspace.db, reextracted["batchId"]).values()
        assert isinstance(again, Reextracted)
        assert len(again.extraction_ids) == 1
    finally:
        workspace.close()
