"""Documents served over HTTP name nothing of where the server keeps things (SNAP_HOME, the
store's location, blob keys, local paths); the CLI's documents still do."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from records.audit import audit
from snap.config import Settings
from snap.service.app import ServiceConfig
from snap.service.public import Redactor, served_json
from tests.http_fixtures import LoopbackServer
from tests.service.conftest import EXAMPLES, client_for, embedded_settings
from tests.service.test_service_guards import assert_problem

QUOTE = "the origin serves only 1 request in 10"
SERVER_HOME = Path('/srv/snap "home"')  # only named, never made; JSON escapes its quotes


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "server-home"


@pytest.fixture
def served(home: Path) -> Iterator[TestClient]:
    with client_for(ServiceConfig(embedded_settings(home, allow_private=True))) as client:
        yield client


@pytest.fixture
def recorded(served: TestClient, http_server: LoopbackServer) -> dict[str, Any]:
    """A captured page and a verified citation of it."""
    http_server.route("/cdn", body=(EXAMPLES / "cdn-caching.html").read_bytes())
    url = http_server.url("/cdn")
    created = served.post("/v1/captures", json={"url": url})
    assert created.status_code == 201
    verified = served.post("/v1/verify", json={"url": url, "quote": QUOTE})
    return {
        "url": url,
        "capture": created,
        "snapshotId": created.json()["snapshotId"],
        "citationId": verified.json()["results"][0]["citationId"],
    }


def assert_nothing_of_the_server(text: str, home: Path) -> None:
    assert str(home) not in text
    assert home.as_uri() not in text
    assert "/sha256/" not in text  # no blob key (raw/sha256/ab/abcd…)


def test_audit_documents_name_no_server_location(
    served: TestClient, recorded: dict[str, Any], home: Path
) -> None:
    answers = [
        recorded["capture"],
        served.get(f"/v1/snapshots/{recorded['snapshotId']}"),
        served.get(f"/v1/citations/{recorded['citationId']}"),
        served.get("/v1/audit", params={"url": recorded["url"]}),
    ]
    for answer in answers:
        assert answer.status_code in (200, 201)
        assert_nothing_of_the_server(answer.text, home)
    assert recorded["capture"].json()["store"] == "file"
    snapshot = answers[1].json()["snapshot"]
    assert snapshot["store"] == "file"
    assert sorted(blob["kind"] for blob in snapshot["blobs"]) == [
        "headers",
        "manifest",
        "raw",
        "text",
    ]
    assert [set(blob) for blob in snapshot["blobs"]] == [
        {"kind", "digest", "versionId", "state", "intact", "detail"}
    ] * 4
    assert {blob["state"] for blob in snapshot["blobs"]} == {"intact"}


def test_the_cli_document_keeps_the_locations(
    served: TestClient, recorded: dict[str, Any], home: Path
) -> None:
    """The operator's own view is unchanged: the store's location (a folder inside the home is
    recorded relative to it, so a moved home keeps its blobs) and each blob's key."""
    workspace = served.app.state.workspace  # type: ignore[attr-defined]
    report = audit(workspace, citation_id=None, url=None, snapshot_id=recorded["snapshotId"])
    assert report.snapshot.store == "home:store"
    assert (home / "store").is_dir()
    assert report.snapshot.blobs
    assert all(blob.key for blob in report.snapshot.blobs)


def test_a_missing_blob_is_reported_without_its_path(
    served: TestClient, recorded: dict[str, Any], home: Path
) -> None:
    text_hash = served.get(f"/v1/snapshots/{recorded['snapshotId']}").json()["snapshot"]["hashes"][
        "text"
    ]
    [blob] = list(home.rglob(text_hash.removeprefix("sha256:")))
    blob.unlink()
    audited = served.get(f"/v1/snapshots/{recorded['snapshotId']}")
    assert_nothing_of_the_server(audited.text, home)
    states = {b["kind"]: b for b in audited.json()["snapshot"]["blobs"]}
    assert states["text"]["state"] == "missing"
    assert "<store>" in states["text"]["detail"]
    gone = served.get(f"/v1/snapshots/{recorded['snapshotId']}/text")
    document = assert_problem(gone, 410)
    assert_nothing_of_the_server(gone.text, home)
    assert text_hash in str(document["detail"])


def test_messages_lose_locations_and_keys_but_keep_the_digest(tmp_path: Path) -> None:
    home = tmp_path / "h"
    redactor = Redactor(embedded_settings(home))
    digest = "ab" * 32
    key = f"{home}/store/raw/sha256/ab/{digest}"
    shown = redactor.message(f"integrity failure at {key}: expected sha256:{digest}, got x")
    assert (
        shown
        == f"integrity failure at the raw blob sha256:{digest}: expected sha256:{digest}, got x"
    )
    assert redactor.message(f"no raw blob in {home.as_uri()}/store") == "no raw blob in <store>"
    s3 = Redactor(Settings.from_env({"SNAP_HOME": str(home), "SNAP_STORE": "s3://bucket/pre"}))
    assert s3.message("cannot read s3://bucket/pre: denied") == "cannot read <store>: denied"
    url = "postgresql+psycopg://snap:secret@db.internal:5432/evidence"
    postgres = Redactor(Settings.from_env({"SNAP_HOME": str(home), "SNAP_DATABASE_URL": url}))
    shown = "the database at postgresql+psycopg://snap:***@db.internal:5432/evidence refused"
    assert postgres.message(shown) == "the database at <database> refused"


def test_a_local_file_capture_shows_its_name_only(tmp_path: Path) -> None:
    redactor = Redactor(embedded_settings(tmp_path / "h"))
    provenance = {"source": "file", "path": "/srv/private/report.pdf", "mtime": "x"}
    document = {"captures": [{"provenance": provenance, "store": "s3://bucket/prefix"}]}
    shown = redactor.document(document)
    assert shown == {
        "captures": [{"provenance": {**provenance, "path": "report.pdf"}, "store": "s3"}]
    }
    assert document["captures"][0]["store"] == "s3://bucket/prefix"  # the original is kept


def test_a_message_hides_a_store_the_document_names_only_after_it(tmp_path: Path) -> None:
    """The document is walked once: a message is rewritten after the walk, so a store location
    listed later in the document (or only under a left-out blob key) is hidden in it too."""
    redactor = Redactor(embedded_settings(tmp_path / "h"))
    document = {
        "results": [{"reason": "cannot read s3://other/pre/text/x: denied"}],
        "blob": {"digest": "sha256:00", "key": {"store": "s3://hidden/only-here"}},
        "snapshots": [{"store": "s3://other/pre"}],
        "note": {"error": "s3://hidden/only-here refused"},
    }
    shown = redactor.document(document)
    assert shown == {
        "results": [{"reason": "cannot read <store>/text/x: denied"}],
        "blob": {"digest": "sha256:00"},
        "snapshots": [{"store": "s3"}],
        "note": {"error": "<store> refused"},
    }
    assert list(shown) == list(document)  # the fields keep their order


def redactable_documents(home: Path, *, fields: bool) -> st.SearchStrategy[Any]:
    """JSON documents made of the pieces redaction looks for: the server's locations (as paths
    and URIs, inside longer strings), blob keys, characters JSON escapes, messages, and (with
    ``fields``) the fields it rewrites or leaves out. Without them, only a message can change,
    so the probe for each location is what keeps the walk."""
    digest = "cd" * 32
    pieces = st.sampled_from(
        [
            str(home),
            home.as_uri(),
            f"{home}/store/text/sha256/cd/{digest}",
            f"raw/sha256/cd/{digest}",
            "s3://bucket/prefix",
            '"key": ',
            "store",
            "/sha256/",
            '"',
            "\\",
            "é\n",
            "plain words",
        ]
    )
    strings = st.lists(pieces, max_size=4).map("".join)
    names = ["detail", "reason", "error", "digest", "source", "url", "x"]
    keys = st.sampled_from([*names, "key", "store", "path"] if fields else names)
    scalars = st.none() | st.booleans() | st.integers() | strings | st.just("file")
    return st.recursive(
        scalars,
        lambda children: (
            st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=5)
        ),
        max_leaves=20,
    )


@pytest.mark.parametrize("fields", [True, False])
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_encoded_is_the_redacted_document_as_json(fields: bool, data: st.DataObject) -> None:
    """The served bytes are the walked document's JSON whether or not the walk is skipped."""
    redactor = Redactor(embedded_settings(SERVER_HOME))
    document = data.draw(redactable_documents(SERVER_HOME, fields=fields))
    assert redactor.encoded(document) == served_json(redactor.document(document))


def test_encoded_skips_the_walk_only_when_nothing_could_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "h"
    redactor = Redactor(embedded_settings(home))
    found = {"status": "quote_found", "reason": None, "url": "https://example.test/a"}
    failed = {"status": "unverifiable", "reason": f"no raw blob in {home}/store"}
    walked: list[Any] = []
    monkeypatch.setattr(Redactor, "document", lambda _self, document: walked.append(document))
    redactor.encoded({"results": [found]})
    assert walked == []
    redactor.encoded({"results": [failed]})
    assert walked == [{"results": [failed]}]
