"""Auth, problem documents, limits, metrics, and what a request may never choose."""

from __future__ import annotations

import inspect
import json
import threading
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

import snap.errors
from snap.config import Settings
from snap.errors import ConfigError, SnapError
from snap.service import auth
from snap.service.app import ServiceConfig
from snap.service.problems import MEDIA_TYPE, PROBLEMS
from tests.http_fixtures import LoopbackServer
from tests.service.conftest import TOKEN, client_for
from tests.snap_cli import run_snap

PROBLEM_KEYS = {"type", "title", "status", "detail"}


def assert_problem(response: object, status: int, detail: str | None = None) -> dict[str, object]:
    assert response.status_code == status, response.text  # type: ignore[attr-defined]
    assert response.headers["content-type"] == MEDIA_TYPE  # type: ignore[attr-defined]
    document: dict[str, object] = response.json()  # type: ignore[attr-defined]
    assert set(document) >= PROBLEM_KEYS
    assert document["status"] == status
    assert "\n" not in str(document["detail"])
    if detail is not None:
        assert document["detail"] == detail
    return document


# --- auth -----------------------------------------------------------------------------------


def test_no_token_is_401_with_a_challenge(authed_client: TestClient) -> None:
    response = authed_client.post("/v1/verify", content=b"{}")
    document = assert_problem(
        response, 401, "no bearer token given (Authorization: Bearer <token>)"
    )
    assert response.headers["www-authenticate"].startswith("Bearer")
    # a condition of HTTP, which no command meets: no CLI exit code or error class (http.md)
    assert "exitCode" not in document
    assert "errorType" not in document


@pytest.mark.parametrize(
    "header", [f"Bearer {TOKEN}x", f"Bearer {TOKEN[:-1]}", "Bearer ", f"Basic {TOKEN}", TOKEN]
)
def test_a_wrong_token_is_401(authed_client: TestClient, header: str) -> None:
    response = authed_client.get("/v1/citations/c-1", headers={"Authorization": header})
    assert_problem(response, 401)


@pytest.mark.parametrize("token", [TOKEN, "another-token-abcdefghijkl"])
def test_any_configured_token_is_let_in(authed_client: TestClient, token: str) -> None:
    response = authed_client.get("/v1/citations/c-1", headers={"Authorization": f"Bearer {token}"})
    assert_problem(response, 404)  # past auth: nothing recorded


def test_metrics_need_the_token_health_does_not(authed_client: TestClient) -> None:
    assert authed_client.get("/metrics").status_code == 401
    assert authed_client.get("/healthz").status_code == 200


def test_every_token_is_compared(monkeypatch: pytest.MonkeyPatch) -> None:
    """Constant time over all tokens: a match on the first still compares the others."""
    compared: list[bytes] = []
    real = auth.hmac.compare_digest

    def counting(a: bytes, b: bytes) -> bool:
        compared.append(b)
        return real(a, b)

    monkeypatch.setattr(auth.hmac, "compare_digest", counting)
    tokens = (b"a" * 16, b"b" * 16, b"c" * 16)
    assert auth.token_matches("a" * 16, tokens)
    assert compared == list(tokens)
    assert not auth.token_matches("z" * 16, tokens)


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("127.0.0.1", True),
        ("127.9.8.7", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.10", False),
        ("example.com", False),
        ("", False),
    ],
)
def test_without_tokens_only_loopback_binds(host: str, allowed: bool) -> None:
    if allowed:
        auth.check_bind(host, ())
    else:
        with pytest.raises(ConfigError, match="without authentication"):
            auth.check_bind(host, ())
    auth.check_bind(host, (b"x" * 16,))  # with a token any address may be used


def test_tokens_are_parsed_and_short_ones_refused() -> None:
    assert auth.parse_tokens(" a" + "x" * 15 + " ,, " + "b" * 16 + ",") == (
        b"a" + b"x" * 15,
        b"b" * 16,
    )
    assert auth.parse_tokens(None) == ()
    with pytest.raises(ConfigError, match="token 2 has 5 characters"):
        auth.parse_tokens("y" * 16 + ",short")


def test_serve_refuses_a_public_bind_without_tokens(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from snap.cli import cli

    env = {"SNAP_HOME": str(tmp_path), "SNAP_API_TOKENS": ""}
    result = CliRunner().invoke(cli, ["serve", "--host", "0.0.0.0"], env=env)
    assert result.exit_code == 2
    assert result.output.startswith("snap: error: refusing to listen on 0.0.0.0")


# --- problems -------------------------------------------------------------------------------


def test_every_error_class_has_a_problem_row() -> None:
    classes = [
        cls
        for _, cls in inspect.getmembers(snap.errors, inspect.isclass)
        if issubclass(cls, (SnapError, snap.errors.VerifierError))
    ]
    assert classes
    assert [cls.__name__ for cls in classes if cls not in PROBLEMS] == []


def test_bad_json_is_the_cli_line(client: TestClient) -> None:
    document = assert_problem(client.post("/v1/verify", content=b"{nope"), 400)
    assert (
        document["detail"] == "request body: not valid JSON: Expecting property name "
        "enclosed in double quotes at line 1"
    )
    assert document["exitCode"] == 2
    assert document["errorType"] == "InputError"


def test_unknown_records_are_404(client: TestClient) -> None:
    assert_problem(client.get("/v1/citations/c-none"), 404)
    assert_problem(client.get("/v1/snapshots/" + "ab" * 32), 404)
    assert_problem(client.get("/v1/audit", params={"url": "http://127.0.0.1:9/x"}), 404)


def test_http_level_errors_are_problems_too(client: TestClient) -> None:
    assert assert_problem(client.get("/v1/nothing-here"), 404)["type"] == "about:blank"
    assert_problem(client.get("/v1/verify"), 405)
    assert_problem(client.get("/v1/snapshots/x/text", params={"around": "-1"}), 400)
    assert_problem(client.post("/v1/captures", json={"link": "x"}), 400)


def test_captures_are_web_only(client: TestClient, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("not for clients")
    for target in (str(secret), secret.as_uri()):
        response = client.post("/v1/captures", json={"url": target})
        assert_problem(response, 400)
        assert "only http and https" in response.json()["detail"]


def test_a_refused_address_is_403_and_counted(client: TestClient) -> None:
    """No --allow-private: a loopback URL is refused before any connection is made."""
    response = client.post("/v1/captures", json={"url": "http://127.0.0.1:9/page"})
    assert assert_problem(response, 403)["errorType"] == "AddressRefused"
    metrics = client.get("/metrics").text
    assert 'snap_capture_failures_total{error="AddressRefused"} 1.0' in metrics


# --- allow_private is never a request field ---------------------------------------------------


@pytest.mark.parametrize("name", ["allow_private", "allowPrivate", "ALLOW_PRIVATE"])
def test_allow_private_as_a_parameter_is_refused(client: TestClient, name: str) -> None:
    response = client.post("/v1/verify", params={name: "true"}, content=b"[]")
    assert_problem(response, 400)
    assert response.json()["detail"].startswith("allow_private is server configuration")


@pytest.mark.parametrize("name", ["allow_private", "allowPrivate"])
def test_allow_private_in_a_body_is_refused(client: TestClient, name: str) -> None:
    response = client.post("/v1/captures", json={"url": "http://127.0.0.1:9/", name: True})
    assert_problem(response, 400)
    assert response.json()["detail"].startswith("allow_private is server configuration")
    response = client.post("/v1/reverify", json={name: True})
    assert response.json()["detail"].startswith("allow_private is server configuration")


def test_allow_private_in_verify_input_is_ignored(
    client: TestClient, http_server: LoopbackServer
) -> None:
    """The input formats have no such field: a citation carrying one is checked as if it did
    not, and the loopback page is not captured (the server does not allow private addresses)."""
    http_server.route("/page", body=b"<html><main><p>hello there</p></main></html>")
    citation = {
        "url": http_server.url("/page"),
        "quote": "hello there",
        "allowPrivate": True,
        "allow_private": True,
    }
    response = client.post("/v1/verify?fetch=true", json=citation)
    assert response.status_code == 200
    result = response.json()["results"][0]
    assert result["status"] == "unknown_snapshot"
    assert "could not capture" in result["reason"]
    assert http_server.paths() == []


# --- limits ---------------------------------------------------------------------------------


def test_a_body_over_the_input_limit_is_413(settings: Settings) -> None:
    with client_for(ServiceConfig(settings, max_input_bytes=100)) as small:
        response = small.post("/v1/verify", content=b"[" + b" " * 200 + b"]")
        assert_problem(
            response,
            413,
            "request body: larger than the input limit of 100 bytes (SNAP_MAX_INPUT_BYTES)",
        )
        streamed = small.post("/v1/verify", content=iter([b"[", b" " * 60, b" " * 60, b"]"]))
        assert_problem(streamed, 413)
        fits = b'{"url": "http://127.0.0.1:9/x", "quote": "q"}'
        assert small.post("/v1/verify", content=fits).status_code == 200
        metrics = text_string_to_metric_families(small.get("/metrics").text)
        counted = {
            (s.labels["route"], s.labels["status"]): s.value
            for family in metrics
            for s in family.samples
            if s.name == "snap_http_requests_total"
        }
        assert counted[("/v1/verify", "413")] == 2  # refused before the router: still its route
        assert ("unmatched", "413") not in counted


def test_a_slow_request_is_504(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    import records.audit

    release = threading.Event()

    def slow(*_args: object, **_kwargs: object) -> None:
        release.wait(10)

    monkeypatch.setattr(records.audit, "audit", slow)
    with client_for(ServiceConfig(settings, request_timeout=0.3)) as quick:
        started = time.monotonic()
        response = quick.get("/v1/citations/c-1")
        elapsed = time.monotonic() - started
        release.set()
        assert_problem(response, 504)
        assert elapsed < 5
        assert 'status="504"' in quick.get("/metrics").text


# --- metrics --------------------------------------------------------------------------------


def test_metrics_parse_and_count(client: TestClient) -> None:
    snapshot = {"snapshotId": "sha256:" + "0" * 64, "quote": "x"}
    client.post("/v1/verify", content=json.dumps(snapshot))
    client.get("/v1/citations/c-1")
    client.get("/no/such/path/12345")
    response = client.get("/metrics")
    assert response.headers["content-type"].startswith("text/plain")
    families = {f.name: f for f in text_string_to_metric_families(response.text)}
    requests = {
        (s.labels["route"], s.labels["status"]): s.value
        for s in families["snap_http_requests"].samples
        if s.name == "snap_http_requests_total"
    }
    assert requests[("/v1/verify", "200")] == 1
    assert requests[("/v1/citations/{citation_id}", "404")] == 1
    assert requests[("unmatched", "404")] == 1
    verified = {
        s.labels["status"]: s.value
        for s in families["snap_verifications"].samples
        if s.name == "snap_verifications_total"
    }
    assert verified == {"unknown_snapshot": 1}
    buckets = [
        s
        for s in families["snap_http_request_duration_seconds"].samples
        if s.name.endswith("_count") and s.labels["route"] == "/v1/verify"
    ]
    assert buckets[0].value == 1


def test_the_sqlite_engine_is_shared_by_the_threadpool(client: TestClient) -> None:
    """One engine per process, used from FastAPI's worker threads: pysqlite connections are
    opened with check_same_thread off (SQLAlchemy's default for a file) in a pool."""
    engine = client.app.state.workspace.db.engine  # type: ignore[attr-defined]
    assert type(engine.pool).__name__ == "QueuePool"
    results: list[int] = []

    def ask() -> None:
        results.append(client.get("/healthz").status_code)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [200] * 8


def test_a_body_that_is_not_json_says_what_is_expected(client: TestClient) -> None:
    response = client.post(
        "/v1/captures",
        content=b"url=http://127.0.0.1:9/",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert_problem(
        response,
        400,
        "request body: expected a JSON object (sent as Content-Type: application/json)",
    )


def test_a_bug_is_a_500_problem_without_internals(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    import records.audit

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("secret internals /etc/snap")

    monkeypatch.setattr(records.audit, "audit", broken)
    response = client.get("/v1/citations/c-1")
    document = assert_problem(response, 500, "internal error: RuntimeError (see the log)")
    assert "secret" not in response.text
    assert document["type"] == "/problems/internal-error"
    assert 'route="/v1/citations/{citation_id}",status="500"' in client.get("/metrics").text


def test_no_more_worker_threads_than_pooled_connections(client: TestClient) -> None:
    import anyio.to_thread

    from snap.service.app import WORKER_THREADS

    engine = client.app.state.workspace.db.engine  # type: ignore[attr-defined]
    assert engine.pool.size() + engine.pool._max_overflow >= WORKER_THREADS
    limiter = client.portal.call(anyio.to_thread.current_default_thread_limiter)  # type: ignore[union-attr]
    assert limiter.total_tokens == WORKER_THREADS


def test_a_response_citing_nothing_is_its_own_problem_not_broken_input(
    client: TestClient, tmp_path: Path, home_env: dict[str, str]
) -> None:
    """A pipeline tells "nothing to check" from a broken body by the problem type (HTTP) or
    the errorType (CLI), never by reading the message."""
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": "No sources needed."}],
        "stop_reason": "end_turn",
    }
    nothing = assert_problem(client.post("/v1/verify", content=json.dumps(message)), 422)
    assert nothing["type"] == "/problems/nothing-to-check"
    assert nothing["errorType"] == "NothingToCheck"
    assert nothing["exitCode"] == 2
    broken = assert_problem(client.post("/v1/verify", content=b'{"id": '), 400)
    assert broken["type"] == "/problems/unusable-input"
    path = tmp_path / "nocite.json"
    path.write_text(json.dumps(message))
    done = run_snap(["verify", str(path), "--json"], home_env)
    assert done.returncode == 2
    assert json.loads(done.stdout)["error"]["type"] == "NothingToCheck"
    assert done.stderr.startswith(f"snap: error: {path}: (top level): this Anthropic")
