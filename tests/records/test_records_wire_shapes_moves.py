"""The JSON a user's scripts read from ``snap export``, ``snap import`` and ``snap store
relocate`` (``--json``), pinned as ``test_records_wire_shapes.py`` pins the others: every key,
in order, every value's type, and the words that name a state (an import's outcomes).

Each format of the export (WARC, WACZ, the evidence page) adds counts of its own; an import
reports one result per record (a record imported, one imported before, one skipped, one
refused) and its summary; a relocation, of a folder store moved with its home, is made on the
embedded backend only (the production store is a bucket, never moved), and ``snap store
init`` of a bucket on the production backend only.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from tests.http_fixtures import LoopbackServer
from tests.imports.warcs import OTHER, PAGE, CrawlerWarc
from tests.records.conftest import Backend
from tests.records.test_records_wire_shapes import PAGE as HARBOUR
from tests.records.test_records_wire_shapes import QUOTE, run_json, shapes_found, types_not_pinned
from tests.records.wire_shapes_moves_pinned import PINNED


def crawled(path: Path) -> Path:
    """A crawler's WARC: a page to import, a request record (skipped), a page whose payload
    digest is wrong (refused)."""
    warc = CrawlerWarc(path)
    warc.request("http://example.test/cdn")
    warc.response("http://example.test/cdn", PAGE)
    warc.response(
        "http://example.test/other", OTHER, digest="sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    )
    return warc.write().path


@pytest.fixture
def documents(backend: Backend, http_server: LoopbackServer, tmp_path: Path) -> dict[str, Any]:
    """A capture and two citations of it (one cited from a page never captured), exported in
    each format and by each selection; a crawler's WARC imported, then again (its page
    imported before); on the embedded backend, the home moved and its
    store relocated."""
    http_server.route("/harbour", body=HARBOUR)
    url = http_server.url("/harbour")
    run_json(backend, "fetch", url)
    citations = tmp_path / "citations.json"
    citations.write_text(
        json.dumps(
            [
                {"citationId": "found", "url": url, "quote": QUOTE},
                {"citationId": "gone", "url": url, "quote": "The harbour wall fell in 1891"},
            ]
        )
    )
    snapshot = run_json(backend, "verify", str(citations), code=1)["results"][0]["snapshotId"]
    answer = tmp_path / "answer.json"
    never = "http://example.test/never"
    answer.write_text(
        json.dumps(
            {
                "answerId": "a-1",
                "claims": [
                    {"text": "The wall is from 1891.", "url": url, "quote": QUOTE},
                    {"text": "It was never built.", "url": never, "quote": "never built"},
                ],
            }
        )
    )
    out = tmp_path / "out"
    out.mkdir()
    crawl = crawled(tmp_path / "crawl.warc.gz")
    found: dict[str, Any] = {
        "export --format warc --snapshot": run_json(
            backend,
            "export",
            "--format",
            "warc",
            "-o",
            str(out / "a.warc.gz"),
            "--snapshot",
            snapshot,
        ),
        "export --format wacz --url": run_json(
            backend, "export", "--format", "wacz", "-o", str(out / "a.wacz"), "--url", url
        ),
        "export --format html --citation": run_json(
            backend, "export", "--format", "html", "-o", str(out / "a.html"), "--citation", "found"
        ),
        "export --format warc FILE": run_json(
            backend, "export", "--format", "warc", "-o", str(out / "b.warc.gz"), str(answer)
        ),
        "import WARC": run_json(backend, "import", str(crawl), code=1),
        "import WARC again": run_json(backend, "import", str(crawl), code=1),
    }
    if backend.name == "embedded":
        found["store relocate"] = relocated(backend, tmp_path)
    else:  # the folder store's is pinned in tests/attest/test_attest_wire_shapes.py
        found["store init S3"] = run_json(backend, "store", "init")
    return found


def relocated(backend: Backend, tmp_path: Path) -> Any:
    """The store recorded at its absolute place, the home moved, then relocated."""
    home = Path(backend.env["SNAP_HOME"])
    old = (home / "store").absolute().as_uri()
    with backend.sql() as connection:
        connection.execute(sa.text("UPDATE snapshots SET store_location = :old"), {"old": old})
    moved = tmp_path / "moved"
    shutil.move(home, moved)
    backend.env["SNAP_HOME"] = str(moved)
    return run_json(backend, "store", "relocate", old)


def of_documents(documents: dict[str, Any]) -> list[str]:
    """The pinned paths of the documents made (relocation: the embedded backend only)."""
    return [
        path
        for path in PINNED
        if any(path == name or path.startswith(f"{name}.") for name in documents)
    ]


def test_every_export_import_and_relocation_shape_is_as_pinned(
    documents: dict[str, Any],
) -> None:
    found = shapes_found(documents)
    assert list(found) == of_documents(documents)  # every key, in order, and no other
    assert types_not_pinned(found, PINNED) == {}
