"""End to end over loopback: a real uvicorn process on PostgreSQL and LocalStack S3."""

from __future__ import annotations

import signal
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.http_fixtures import LoopbackServer
from tests.service.conftest import EXAMPLES, TOKEN
from tests.service.server import Served, service_env

pytestmark = [pytest.mark.postgres, pytest.mark.s3, pytest.mark.slow]
QUOTE = "the origin serves only 1 request in 10"


@pytest.fixture
def served(
    postgres_url: str, s3_bucket: str, s3_env: dict[str, str], tmp_path: Path
) -> Iterator[Served]:
    env = service_env(
        s3_env
        | {
            "SNAP_HOME": str(tmp_path / "home"),
            "SNAP_DATABASE_URL": postgres_url,
            "SNAP_STORE": f"s3://{s3_bucket}/{uuid.uuid4().hex}",
            "SNAP_API_TOKENS": f"{TOKEN},second-token-0123456789",
        }
    )
    server = Served(env, "--allow-private", token=TOKEN)
    yield server
    if server.process.poll() is None:
        server.stop()


def test_capture_verify_audit_reverify_over_http(
    served: Served, http_server: LoopbackServer
) -> None:
    http_server.route("/cdn", body=(EXAMPLES / "cdn-caching.html").read_bytes())
    url = http_server.url("/cdn")
    created = served.call("POST", "/v1/captures", {"url": url})
    assert created.status == 201, created.body
    record = created.json()
    assert record["store"] == "s3"  # the kind only: a client is not told the bucket
    assert record["versionIds"]["raw"]  # a versioned S3 object, read back under Object Lock
    answer = {
        "answerId": "a-1",
        "claims": [
            {"text": "a tenth", "url": url, "quote": QUOTE},
            {"text": "wrong", "url": url, "quote": "the origin serves only 1 request in 1000"},
        ],
    }
    verified = served.call("POST", "/v1/verify", answer)
    assert verified.status == 200
    statuses = [r["status"] for r in verified.json()["results"]]
    assert statuses == ["quote_found", "not_found"]
    text = served.call("GET", f"/v1/snapshots/{record['snapshotId']}/text").json()
    assert QUOTE in text["text"]
    audited = served.call("GET", f"/v1/snapshots/{record['snapshotId']}").json()
    assert {b["state"] for b in audited["snapshot"]["blobs"]} == {"intact"}
    citation_id = verified.json()["results"][0]["citationId"]
    assert len(served.call("GET", f"/v1/citations/{citation_id}").json()["verifications"]) == 1
    by_url = served.call("GET", f"/v1/audit?url={url}").json()
    assert len(by_url["citations"]) == 2
    reverified = served.call("POST", "/v1/reverify", {"url": url})
    assert reverified.json()["summary"]["byStatus"] == {"not_found": 1, "quote_found": 1}
    metrics = served.call("GET", "/metrics").body.decode()
    families = {f.name: f for f in text_string_to_metric_families(metrics)}
    checked = {
        s.labels["status"]: s.value
        for s in families["snap_verifications"].samples
        if s.name == "snap_verifications_total"
    }
    assert checked == {"quote_found": 2.0, "not_found": 2.0}
    code, output = served.stop()
    assert code in (0, -signal.SIGTERM), output
    assert "Application shutdown complete" in output


def test_auth_and_problems_over_the_wire(served: Served) -> None:
    missing = served.call("POST", "/v1/verify", raw=b"{}", token="")
    wrong = served.call("POST", "/v1/verify", raw=b"{}", token="x" * 20)
    for answer in (missing, wrong):
        assert answer.status == 401
        assert answer.headers["content-type"] == "application/problem+json"
        assert answer.headers["www-authenticate"].startswith("Bearer")
    other = served.call("POST", "/v1/verify", raw=b"{", token="second-token-0123456789")
    assert other.status == 400
    assert other.json()["detail"].startswith("request body: not valid JSON")
    assert served.call("GET", "/healthz", token="").status == 200


def test_a_database_that_is_not_migrated_stops_serve_with_one_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.db_support import throwaway_postgres
    from tests.service.server import GUARDED_SNAP, ROOT

    with throwaway_postgres() as empty:
        env = service_env({"SNAP_HOME": str(tmp_path), "SNAP_DATABASE_URL": empty})
        done = subprocess.run(
            [sys.executable, "-c", GUARDED_SNAP, "serve", "--port", "0"],
            env={**env, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 3
    assert done.stderr.startswith("snap: error: the database at")
    assert done.stderr.count("\n") == 1
