"""The endpoints answer what the matching ``snap`` commands print with ``--json``."""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from snap.cli import cli
from snap.config import Settings
from snap.service.app import ServiceConfig, create_app
from tests.http_fixtures import LoopbackServer
from tests.inputs.conftest import FIXTURES, fixture_text
from tests.service.conftest import EXAMPLES

PAGE = (EXAMPLES / "cdn-caching.html").read_bytes()
QUOTE = "the origin serves only 1 request in 10"


def without_run_ids(document: Any) -> Any:
    """A report with what differs between two runs (verification and run ids) blanked."""
    if isinstance(document, dict):
        return {
            key: None if key in ("verificationId", "runId") else without_run_ids(value)
            for key, value in document.items()
        }
    if isinstance(document, list):
        return [without_run_ids(item) for item in document]
    return document


def cli_json(home: Path, *args: str) -> tuple[int, Any]:
    env = {"SNAP_HOME": str(home), "SNAP_ALLOW_PRIVATE": "1"}
    result = CliRunner().invoke(cli, [*args], env=env)
    return result.exit_code, json.loads(result.stdout) if result.stdout.strip() else None


def capture(client: TestClient, url: str) -> dict[str, Any]:
    response = client.post("/v1/captures", json={"url": url})
    assert response.status_code == 201, response.text
    return dict(response.json())


@pytest.fixture
def page_url(http_server: LoopbackServer) -> str:
    http_server.route("/cdn", body=PAGE)
    return http_server.url("/cdn")


def test_capture_answers_the_snapshot_record_with_its_location(
    private_client: TestClient, page_url: str
) -> None:
    record = capture(private_client, page_url)
    assert record["snapshotId"].startswith("sha256:")
    assert record["url"] == page_url
    again = private_client.post("/v1/captures", json={"url": page_url})
    assert again.headers["location"] == f"/v1/snapshots/{record['snapshotId']}"
    assert again.json()["hashes"] == record["hashes"]


def test_verify_answers_as_the_cli_does(
    private_client: TestClient, settings: Settings, page_url: str, tmp_path: Path
) -> None:
    snapshot_id = capture(private_client, page_url)["snapshotId"]
    citation = {
        "citationId": "c-1",
        "snapshotId": snapshot_id,
        "selector": {"quote": {"exact": QUOTE}},
    }
    answer = {
        "answerId": "a-1",
        "claims": [
            {"text": "one in ten", "url": page_url, "quote": QUOTE},
            {"text": "x", "url": page_url, "quote": "not in the page at all"},
        ],
    }
    home = Path(str(private_client.app.state.workspace.settings.home))  # type: ignore[attr-defined]
    for document in (citation, answer, [citation]):
        response = private_client.post("/v1/verify", content=json.dumps(document))
        assert response.status_code == 200
        path = tmp_path / "input.json"
        path.write_text(json.dumps(document))
        code, printed = cli_json(home, "verify", "--json", str(path))
        assert code in (0, 1)
        assert without_run_ids(response.json()) == without_run_ids(printed)


def test_verify_answer_is_encoded_as_every_json_answer(
    private_client: TestClient, page_url: str
) -> None:
    """The verify route encodes its answer itself (in its worker thread): the bytes are those
    FastAPI made of the returned document, and those of every other JSON answer: non-ASCII as
    is, default separators, ``application/json``."""
    capture(private_client, page_url)
    answer = {"answerId": "a-é", "claims": [{"text": "ü", "url": page_url, "quote": QUOTE}]}
    response = private_client.post("/v1/verify", json=answer)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    document = response.json()
    assert "a-é" in response.content.decode("utf-8")
    assert response.content == json.dumps(document, ensure_ascii=False).encode("utf-8")


def test_verify_answers_the_closest_passage_aligned_with_the_quote(
    private_client: TestClient, page_url: str
) -> None:
    """Issue 23: the answer lines the closest passage up with the quote, word by word."""
    snapshot_id = capture(private_client, page_url)["snapshotId"]
    changed = QUOTE.replace(" 1 ", " one ")
    citation = {"snapshotId": snapshot_id, "selector": {"quote": {"exact": changed}}}
    [result] = private_client.post("/v1/verify", json=citation).json()["results"]
    closest = result["closest"]
    assert closest["text"] == QUOTE
    differing = [step for step in closest["alignment"] if step["op"] != "equal"]
    at = closest["start"] + QUOTE.index(" 1 ") + 1
    assert differing == [{"op": "replace", "quote": "one", "source": {"start": at, "end": at + 1}}]


def provider_inputs() -> list[str]:
    return sorted(p.name for p in FIXTURES.iterdir() if p.suffix in (".json", ".sse"))


@pytest.mark.parametrize("name", provider_inputs())
def test_every_provider_format_as_the_cli(
    private_client: TestClient, http_server: LoopbackServer, tmp_path: Path, name: str
) -> None:
    """``fetch=true`` captures the cited loopback pages (the server allows private addresses);
    statuses, summaries and any input error are those of ``snap verify --fetch --json``."""
    for page in ("report.txt", "guide.txt", "report.txt?utm_source=openai"):
        body = (FIXTURES / page.partition("?")[0]).read_bytes()
        http_server.route(f"/{page}", body=body, content_type="text/plain; charset=utf-8")
    text = fixture_text(name, http_server.url("").rstrip("/"))
    response = private_client.post("/v1/verify?fetch=true", content=text.encode())
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    home = Path(str(private_client.app.state.workspace.settings.home))  # type: ignore[attr-defined]
    code, printed = cli_json(home, "verify", "--fetch", "--json", str(path))
    if code == 2:
        assert response.status_code == 400
        message = printed["error"]["message"].removeprefix(f"{path}: ")
        assert response.json()["detail"] == f"request body: {message}"
        return
    assert response.status_code == 200, response.text
    assert without_run_ids(response.json()) == without_run_ids(printed)


def test_snapshot_text_and_audits(private_client: TestClient, page_url: str) -> None:
    snapshot_id = capture(private_client, page_url)["snapshotId"]
    citation = {"citationId": "c-9", "url": page_url, "selector": {"quote": {"exact": QUOTE}}}
    assert private_client.post("/v1/verify", json=citation).status_code == 200
    text = private_client.get(f"/v1/snapshots/{snapshot_id}/text").json()
    assert QUOTE in text["text"]
    around = private_client.get(f"/v1/snapshots/{snapshot_id[7:19]}/text", params={"around": 10})
    assert around.json()["start"] == 0
    assert around.json()["end"] == 210
    audited = private_client.get(f"/v1/snapshots/{snapshot_id}").json()
    assert all(blob["intact"] for blob in audited["snapshot"]["blobs"])
    by_citation = private_client.get("/v1/citations/c-9").json()
    assert by_citation["citation"]["citationId"] == "c-9"
    assert by_citation["verifications"][0]["status"] == "quote_found"
    by_url = private_client.get("/v1/audit", params={"url": page_url}).json()
    assert [c["citationId"] for c in by_url["citations"]] == ["c-9"]


def test_reverify_runs_with_the_cli_filters(private_client: TestClient, page_url: str) -> None:
    capture(private_client, page_url)
    citation = {"citationId": "c-r", "url": page_url, "selector": {"quote": {"exact": QUOTE}}}
    private_client.post("/v1/verify", json=citation)
    response = private_client.post("/v1/reverify", json={"url": page_url})
    assert response.status_code == 200
    assert response.json()["summary"]["byStatus"] == {"quote_found": 1}
    nothing = private_client.post("/v1/reverify", json={"url": page_url + "/other"})
    assert nothing.status_code == 404
    assert nothing.json()["detail"] == "no recorded citation matches url/since"


def test_healthz(client: TestClient) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"


def test_shared_texts_never_hide_damage(private_client: TestClient, page_url: str) -> None:
    """The server keeps tokenized texts between requests, but every request re-reads and
    re-hashes the blobs: a text damaged after it was cached is reported, not matched."""
    from snapshotter.store import blob_key

    record = capture(private_client, page_url)
    citation = {"snapshotId": record["snapshotId"], "quote": QUOTE}
    first = private_client.post("/v1/verify", json=citation).json()["results"][0]
    assert first["status"] == "quote_found"
    workspace = private_client.app.state.workspace  # type: ignore[attr-defined]
    assert workspace.prepared is not None
    path = Path(workspace.settings.store_url) / blob_key("text", record["hashes"]["text"])
    path.chmod(0o644)
    data = bytearray(path.read_bytes())
    data[10] ^= 0x01
    path.write_bytes(bytes(data))
    again = private_client.post("/v1/verify", json=citation).json()["results"][0]
    assert again["status"] == "integrity_failure"


def test_shared_texts_are_bounded_by_code_points() -> None:
    from records.texts import PreparedCache

    cache = PreparedCache(max_code_points=25)
    first = cache.prepared("sha256:a", b"one two three")  # 13 code points
    assert cache.prepared("sha256:a", b"ignored: the digest was checked") is first
    cache.prepared("sha256:b", b"four five six")  # 26 held: the oldest goes
    assert cache.prepared("sha256:a", b"one two three") is not first


@pytest.mark.postgres
@pytest.mark.s3
def test_one_citation_id_twice_in_one_input(workspace: Any, tmp_path: Path) -> None:
    """Citations are recorded in one multi-row insert: an id given twice in one input for the
    same citation is recorded once; an id recorded before for another quote is refused, and
    nothing of that input is recorded."""
    from records.capture import capture_source
    from records.inputs import verify_input_from_bytes
    from records.verify import verify_citations
    from snap.errors import InputError

    page = tmp_path / "page.txt"
    page.write_text("The origin serves only 1 request in 10 at a 90 percent hit ratio.")
    snapshot_id = capture_source(workspace, str(page)).snapshot_id
    same = {"citationId": "c-twice", "snapshotId": snapshot_id, "quote": "1 request in 10"}
    body = json.dumps([same, same]).encode()
    report = verify_citations(workspace, verify_input_from_bytes(body, "request body"))
    assert [r.citation_id for r in report.results] == ["c-twice", "c-twice"]
    fresh = {"citationId": "c-new", "snapshotId": snapshot_id, "quote": "1 request in 10"}
    changed = same | {"quote": "a 90 percent hit ratio"}
    body = json.dumps([fresh, changed]).encode()  # c-new is fine, c-twice was recorded before
    with pytest.raises(InputError, match="'c-twice' is already recorded for a different quote"):
        verify_citations(workspace, verify_input_from_bytes(body, "request body"))
    with workspace.db.reading() as session:
        from records.models import Citation

        assert session.get(Citation, "c-new") is None  # nothing of a refused input is recorded


def test_documents_map_as_a_parameter(
    private_client: TestClient, http_server: LoopbackServer
) -> None:
    """A streaming transcript citing a document by title, mapped as ``--documents`` maps it."""
    body = (FIXTURES / "report.txt").read_bytes()
    http_server.route("/report.txt", body=body, content_type="text/plain; charset=utf-8")
    transcript = (FIXTURES / "claude_stream.sse").read_bytes()
    mapping = json.dumps({"Edge caching report": http_server.url("/report.txt")})
    response = private_client.post(
        "/v1/verify", params={"fetch": "true", "documents": mapping}, content=transcript
    )
    assert response.status_code == 200, response.text
    assert [r["status"] for r in response.json()["results"]] == ["quote_found"]
    unmapped = private_client.post("/v1/verify", params={"fetch": "true"}, content=transcript)
    assert unmapped.json()["results"][0]["status"] == "unknown_snapshot"
    bad = private_client.post("/v1/verify", params={"documents": "[1"}, content=transcript)
    assert bad.status_code == 400
    assert bad.json()["detail"].startswith("documents: not valid JSON")
    wrong = private_client.post("/v1/verify", params={"documents": '{"0": 5}'}, content=transcript)
    assert wrong.status_code == 400
    assert wrong.json()["detail"].startswith("documents: ")


def test_jobs_answers_from_the_database(client: TestClient) -> None:
    """Without a broker nothing is queued; an unknown batch is a 404 problem. (The queued path,
    202 then the batch done by a worker, runs end to end in tests/test_production_sketch.py:
    Celery's app keeps one broker connection per process, so it is tested in processes of its
    own.)"""
    missing = client.get("/v1/jobs/no-such-batch")
    assert missing.status_code == 404
    assert missing.json()["detail"] == "no batch 'no-such-batch' is recorded"


def test_reverify_continues_only_a_recorded_run(private_client: TestClient, page_url: str) -> None:
    """``run`` names a recorded run, whole or by a unique prefix, as ``snap reverify --run``
    does; an unknown id is refused instead of starting a new run under it."""
    capture(private_client, page_url)
    citation = {"citationId": "c-run", "url": page_url, "selector": {"quote": {"exact": QUOTE}}}
    private_client.post("/v1/verify", json=citation)
    first = private_client.post("/v1/reverify", json={"url": page_url})
    run_id = first.json()["summary"]["runId"]
    unknown = private_client.post("/v1/reverify", json={"run": "no-such-run-id"})
    assert unknown.status_code == 400
    assert "no-such-run-id" in unknown.json()["detail"]
    again = private_client.post("/v1/reverify", json={"url": page_url, "run": run_id[:8]})
    assert again.status_code == 200
    assert again.json()["summary"]["runId"] == run_id


def test_every_dependency_runs_on_the_event_loop() -> None:
    """FastAPI runs a plain ``def`` dependency in its threadpool, a hand-over to a thread and
    back for a few microseconds of work: each route's dependencies are ``async def`` (the
    endpoints that touch the database stay plain ``def``, in the threadpool)."""
    app = create_app(ServiceConfig(Settings.from_env({"SNAP_HOME": "/nonexistent"})))

    def calls(dependant: Dependant) -> Iterator[Any]:
        for dependency in dependant.dependencies:
            yield dependency.call
            yield from calls(dependency)

    checked = 0
    for route in app.routes:
        if not isinstance(route, APIRoute):
            continue
        for call in calls(route.dependant):
            method = call if inspect.isfunction(call) else type(call).__call__
            asynchronous = inspect.iscoroutinefunction(method) or inspect.isasyncgenfunction(method)
            assert asynchronous, (route.path, call)
            checked += 1
    assert checked >= 40
