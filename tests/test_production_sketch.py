"""The production sketch: examples/production/compose.yaml names only settings and commands snap
has, and examples/production/run.sh brings up the same topology on this machine's services
(PostgreSQL, Redis, LocalStack's S3): the HTTP service takes a capture and a verification, and a
re-verification it queues is done by the worker it started.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import yaml

from tests.db_support import throwaway_postgres
from tests.http_fixtures import (
    LoopbackServer,
    http_server,  # noqa: F401  (fixture)
)
from tests.s3_support import s3_endpoint  # noqa: F401  (fixture)

ROOT = Path(__file__).resolve().parent.parent
SKETCH = ROOT / "examples" / "production"
SNAP = Path(sys.executable).parent / "snap"
REDIS_URL = os.environ.get("SNAP_TEST_REDIS_URL", "redis://127.0.0.1:6379/9")
QUOTE = "the origin serves only 1 request in 10"

pytestmark = [pytest.mark.postgres, pytest.mark.s3, pytest.mark.slow]


def compose() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((SKETCH / "compose.yaml").read_text())
    return document


def test_compose_names_only_settings_snap_reads() -> None:
    settings_source = (ROOT / "snap" / "config.py").read_text()
    for name in ("serve", "worker"):
        environment = compose()["services"][name]["environment"]
        for key in environment:
            if key.startswith("SNAP_"):
                assert f'"{key}"' in settings_source or key == "SNAP_API_TOKENS", key
        assert environment["SNAP_STORE"].startswith("s3://")
        assert environment["SNAP_BROKER_URL"].startswith("redis://")


@pytest.mark.parametrize("service", ["serve", "worker"])
def test_compose_commands_are_snap_commands(service: str, tmp_path: Path) -> None:
    shell = compose()["services"][service]["command"][-1]
    for command in re.findall(r"snap ([a-z][^&]*?)(?:&&|$)", shell):
        args = command.split()
        # a broker on loopback: `snap worker --help` is celery's help, and nothing is resolved;
        # a home of its own, so no database the user or another run left is read
        env = {**os.environ, "SNAP_BROKER_URL": REDIS_URL, "SNAP_HOME": str(tmp_path)}
        env.pop("SNAP_DATABASE_URL", None)
        done = subprocess.run(
            [str(SNAP), *args, "--help"], env=env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, (args, done.stderr)
    assert not (tmp_path / "snap.db").exists(), "a command's --help opened the database"


def call(port: int, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        data = None if body is None else json.dumps(body).encode()
        connection.request(method, path, body=data, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"null")
    finally:
        connection.close()


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def sketch(s3_endpoint: str) -> Iterator[tuple[subprocess.Popen[bytes], int, Path]]:  # noqa: F811
    queue = f"test-{uuid.uuid4().hex[:12]}"
    port = free_port()
    with throwaway_postgres() as database_url:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SNAP_", "AWS_"))}
        env |= {
            "SNAP_COMMAND": str(SNAP),
            "SNAP_DATABASE_URL": database_url,
            "SNAP_STORE": f"s3://snap-sketch-{uuid.uuid4().hex[:10]}/evidence",
            "SNAP_BROKER_URL": REDIS_URL,
            "SNAP_QUEUE": queue,
            "SNAP_PORT": str(port),
            "SNAP_ALLOW_PRIVATE": "1",  # the test's pages are on loopback
            "SNAP_HOST_DELAY": "0",
            "AWS_ENDPOINT_URL": s3_endpoint,
        }
        log = Path(os.environ.get("TMPDIR", "/tmp")) / f"snap-sketch-{queue}.log"
        with log.open("wb") as output:
            process = subprocess.Popen(
                ["bash", str(SKETCH / "run.sh")],
                env=env,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            yield process, port, log
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            client = redis.Redis.from_url(REDIS_URL)
            for key in client.scan_iter(match=f"*{queue}*", count=1000):
                client.delete(key)
            client.close()
            log.unlink(missing_ok=True)


def wait_for(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text(errors="replace")
        try:
            if call(port, "GET", "/healthz")[0] == 200:
                return
        except OSError:
            time.sleep(0.2)
    raise AssertionError("the sketch did not answer /healthz: " + log.read_text(errors="replace"))


def test_the_sketch_serves_and_its_worker_reverifies(
    sketch: tuple[subprocess.Popen[bytes], int, Path],
    http_server: LoopbackServer,  # noqa: F811
) -> None:
    process, port, log = sketch
    http_server.route("/cdn", body=(ROOT / "examples" / "cdn-caching.html").read_bytes())
    page = http_server.url("/cdn")
    wait_for(port, process, log)
    status, captured = call(port, "POST", "/v1/captures", {"url": page})
    assert status == 201, captured
    citation = {"citationId": "c-sketch", "url": page, "selector": {"quote": {"exact": QUOTE}}}
    status, verified = call(port, "POST", "/v1/verify", citation)
    assert status == 200, verified
    assert verified["results"][0]["status"] == "quote_found"
    status, queued = call(port, "POST", "/v1/reverify", {})
    assert status == 202, queued
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status, progress = call(port, "GET", queued["progress"])
        if progress["done"] + progress["failed"] == progress["total"]:
            break
        time.sleep(0.5)
    assert (progress["done"], progress["failed"]) == (1, 0), log.read_text(errors="replace")
    status, audited = call(port, "GET", "/v1/citations/c-sketch")
    assert [v["status"] for v in audited["verifications"]] == ["quote_found", "quote_found"]
