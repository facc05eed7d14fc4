"""Fixtures for the HTTP service: the app in-process on the embedded default, every test
process held to loopback (``netguard``)."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from snap.config import Settings
from snap.service.app import ServiceConfig, create_app
from tests.db_support import ready_home
from tests.http_fixtures import http_server  # noqa: F401  (fixture)
from tests.records.conftest import (  # noqa: F401  (fixtures)
    backend,
    postgres_url,
    s3_bucket,
    s3_env,
    workspace,
)
from tests.s3_support import s3_endpoint  # noqa: F401  (fixture)
from tests.service import netguard

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TOKEN = "test-token-0123456789abcdef"


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket, "getaddrinfo", netguard.guarded_getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", netguard.guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", netguard.guarded_connect_ex)


def embedded_settings(home: Path, **changes: object) -> Settings:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SNAP_", "AWS_"))}
    env["SNAP_HOME"] = str(home)
    return Settings.from_env(env).with_overrides(**changes)


def client_for(config: ServiceConfig) -> TestClient:
    return TestClient(create_app(config), raise_server_exceptions=False)


@pytest.fixture
def settings(tmp_path: Path, sqlite_template: Path) -> Settings:
    """The embedded default in a home whose database is migrated already."""
    return embedded_settings(ready_home(tmp_path / "home", sqlite_template))


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    """No token configured (loopback use)."""
    with client_for(ServiceConfig(settings)) as opened:
        yield opened


@pytest.fixture
def private_client(tmp_path: Path, sqlite_template: Path) -> Iterator[TestClient]:
    """Captures may reach the loopback test servers (server configuration)."""
    home = ready_home(tmp_path / "home", sqlite_template)
    config = ServiceConfig(embedded_settings(home, allow_private=True))
    with client_for(config) as opened:
        yield opened


@pytest.fixture
def authed_client(settings: Settings) -> Iterator[TestClient]:
    config = ServiceConfig(settings, tokens=(TOKEN.encode(), b"another-token-abcdefghijkl"))
    with client_for(config) as opened:
        yield opened
