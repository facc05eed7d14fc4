"""``snap serve`` checkpoints the log itself: requests that recorded anything are followed by
one signed checkpoint per interval (a burst makes one), one more at shutdown, and one on
demand with ``POST /v1/log/checkpoint``; on the in-process app and on a real uvicorn."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from fastapi.testclient import TestClient

from records.attest.signing import KeyType, write_new_key
from snap.config import Settings
from snap.service.app import ServiceConfig, create_app
from tests.db_support import ready_home
from tests.service.conftest import embedded_settings
from tests.service.server import Served, service_env


def unknown(n: int) -> dict[str, Any]:
    """A citation of a URL never captured: checked and recorded (unknown_snapshot), nothing
    fetched."""
    return {"url": f"https://example.test/page-{n}", "quote": f"words {n}"}


def log_state(home: Path) -> tuple[int, list[int]]:
    """The log's size and each checkpoint's size, read straight from the database."""
    engine = sa.create_engine(f"sqlite:///{home / 'snap.db'}")
    try:
        with engine.connect() as connection:
            entries = connection.execute(sa.text("SELECT count(*) FROM log_entries")).scalar_one()
            sizes = connection.execute(sa.text("SELECT tree_size FROM log_checkpoints ORDER BY id"))
            return int(entries), [int(row[0]) for row in sizes]
    finally:
        engine.dispose()


def signed_home(tmp_path: Path, sqlite_template: Path) -> tuple[Path, Settings]:
    home = ready_home(tmp_path / "home", sqlite_template)
    write_new_key(home / "signing-key.pem", KeyType.ED25519)
    return home, embedded_settings(home)


def wait_for_checkpoints(home: Path, count: int, seconds: float = 60) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        _entries, sizes = log_state(home)
        if len(sizes) >= count:
            return sizes
        time.sleep(0.1)
    raise AssertionError(f"no checkpoint {count} within {seconds} s: {log_state(home)}")


def test_a_burst_of_requests_makes_one_checkpoint_per_interval(
    tmp_path: Path, sqlite_template: Path
) -> None:
    home, settings = signed_home(tmp_path, sqlite_template)
    interval = 4.0
    with TestClient(create_app(ServiceConfig(settings, checkpoint_interval=interval))) as client:
        started = time.monotonic()
        for n in range(3):
            assert client.post("/v1/verify", json=unknown(n)).status_code == 200
        burst = time.monotonic() - started
        assert log_state(home)[1] == [] or burst >= interval  # none before the interval ends
        sizes = wait_for_checkpoints(home, 1)
        time.sleep(1.0)  # nothing more comes of the same burst
        entries, sizes = log_state(home)
        if burst < interval:
            assert sizes == [entries] == [3]
        assert client.post("/v1/verify", json=unknown(9)).status_code == 200
        sizes = wait_for_checkpoints(home, len(sizes) + 1)
        assert sizes[-1] == 4
        checkpoint = client.post("/v1/log/checkpoint").json()
        assert checkpoint["created"] is False  # the newest already covers every entry
        assert checkpoint["treeSize"] == 4
        assert checkpoint["signature"]["state"] == "signed"
    assert log_state(home)[1] == sizes  # nothing appended since: no checkpoint at shutdown


def test_shutdown_and_demand_make_checkpoints(tmp_path: Path, sqlite_template: Path) -> None:
    home, settings = signed_home(tmp_path, sqlite_template)
    config = ServiceConfig(settings, checkpoint_interval=3600)
    with TestClient(create_app(config)) as client:
        assert client.post("/v1/verify", json=unknown(1)).status_code == 200
        made = client.post("/v1/log/checkpoint").json()
        assert made["created"] is True
        assert made["treeSize"] == 1
        assert client.post("/v1/verify", json=[unknown(2), unknown(3)]).status_code == 200
        assert log_state(home) == (3, [1])  # the interval has not passed
    assert log_state(home) == (3, [1, 3])  # the lifespan's last checkpoint


def test_a_failed_request_that_recorded_a_capture_is_checkpointed(
    tmp_path: Path, sqlite_template: Path
) -> None:
    """A capture refused by the address guard is recorded as a failed capture: in the log,
    and in the next checkpoint, though the request was answered with a problem."""
    home, settings = signed_home(tmp_path, sqlite_template)
    with TestClient(create_app(ServiceConfig(settings, checkpoint_interval=0.2))) as client:
        answered = client.post("/v1/captures", json={"url": "http://127.0.0.1:9/page"})
        assert answered.status_code >= 400
        entries, _ = log_state(home)
        assert entries == 1
        assert wait_for_checkpoints(home, 1) == [1]


def test_real_uvicorn_checkpoints_after_requests_on_demand_and_at_sigterm(
    tmp_path: Path, sqlite_template: Path
) -> None:
    home = ready_home(tmp_path / "home", sqlite_template)
    write_new_key(home / "signing-key.pem", KeyType.ECDSA_P256)
    env = service_env({"SNAP_HOME": str(home)})
    server = Served(env, "--checkpoint-interval", "1")
    try:
        assert server.call("POST", "/v1/verify", unknown(1)).status == 200
        assert server.call("POST", "/v1/verify", unknown(2)).status == 200
        assert wait_for_checkpoints(home, 1)[-1] in (1, 2)
        sizes = wait_for_checkpoints(home, 1)
        deadline = time.monotonic() + 30
        while sizes[-1] < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
            sizes = log_state(home)[1]
        assert sizes[-1] == 2
        demanded = server.call("POST", "/v1/log/checkpoint")
        assert demanded.status == 200
        assert demanded.json()["treeSize"] == 2
        assert demanded.json()["created"] is False
        assert server.call("POST", "/v1/verify", unknown(3)).status == 200
    finally:
        _code, output = server.stop()
    entries, sizes = log_state(home)
    assert entries == 3
    assert sizes[-1] == 3, output  # at the latest, the checkpoint made at shutdown


def test_snap_mcp_tools_that_record_are_checkpointed(tmp_path: Path, sqlite_template: Path) -> None:
    """``snap mcp`` keeps the same schedule: a tool that recorded a check is checkpointed."""
    import asyncio

    from records.attest.schedule import CheckpointSchedule
    from records.workspace import Workspace
    from snap.mcp import build_server

    home, settings = signed_home(tmp_path, sqlite_template)
    workspace = Workspace.open(settings)
    schedule = CheckpointSchedule(workspace, 0.2)
    try:
        server = build_server(workspace, checkpoints=schedule)
        asyncio.run(server.call_tool("verify_quote", unknown(1)))
        assert wait_for_checkpoints(home, 1) == [1]
        asyncio.run(server.call_tool("verify_quote", unknown(2)))
    finally:
        schedule.close()
        workspace.close()
    assert log_state(home) == (2, [1, 2])
