"""SNAP_USER_AGENT: what a capture calls itself. Some servers show a robot other text than a
reader (the other side's expert served one); the name sent is recorded in the capture's
provenance and headers blob either way, so the evidence says what asked."""

from __future__ import annotations

import json

import pytest

from snapshotter.fetch import DEFAULT_USER_AGENT
from tests.http_fixtures import LoopbackServer, http_server  # noqa: F401  (fixture)
from tests.snap_cli import run_snap

BROWSER_LIKE = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko)"


@pytest.mark.parametrize("named", [None, BROWSER_LIKE])
def test_every_request_carries_the_configured_name_and_the_capture_records_it(
    home_env: dict[str, str],
    http_server: LoopbackServer,  # noqa: F811
    named: str | None,
) -> None:
    http_server.route("/page", body=b"<html><body><main><p>Robots read this.</p></main></body>")
    env = home_env | {"SNAP_ALLOW_PRIVATE": "1", "SNAP_CAPTURE": "http"}
    if named is not None:
        env["SNAP_USER_AGENT"] = named
    done = run_snap(["fetch", "--json", http_server.url("/page")], env)
    assert done.returncode == 0, done.stderr
    expected = named or DEFAULT_USER_AGENT
    assert {request.headers.get("user-agent") for request in http_server.requests} == {expected}
    snapshot = json.loads(done.stdout)["snapshotId"]
    shown = run_snap(["show", "--headers", "--json", snapshot], env)
    assert expected in shown.stdout


@pytest.mark.parametrize("value", ["snap\r\nX-Injected: 1", "é", "x" * 513])
def test_a_name_that_is_no_header_value_is_one_line_exit_2(
    home_env: dict[str, str], value: str
) -> None:
    done = run_snap(["fetch", "http://127.0.0.1:9/"], home_env | {"SNAP_USER_AGENT": value})
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "snap: error: SNAP_USER_AGENT must be printable ASCII of at most 512 characters"
    ]
