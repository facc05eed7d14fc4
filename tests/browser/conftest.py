"""Fixtures for browser captures: Debian's Chromium (skipped, saying so, when absent), one
browser session shared by the tests of a module, a snap home on SQLite and a folder store,
and the loopback server pages are served from."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from records.workspace import Workspace
from snap.config import Settings
from snapshotter.browser.chromium import find_executable
from snapshotter.browser.session import BrowserSession
from tests.http_fixtures import http_server
from tests.workers.conftest import postgres_url, queue, snap_pg  # noqa: F401  (fixtures)

__all__ = ["http_server"]


@pytest.fixture(scope="module")
def chromium() -> str:
    found = find_executable(None)
    if found is None:
        pytest.skip(
            "SKIPPED LOUDLY: Debian's chromium is not installed; tests/run.sh installs it "
            "(apt-get install -y chromium) before pytest, or install it yourself"
        )
    return found


@pytest.fixture(scope="module")
def session(chromium: str) -> Iterator[BrowserSession]:
    """One browser for the module's captures, as a worker keeps one across its tasks."""
    shared = BrowserSession(chromium)
    yield shared
    shared.close()


def home_env(home: Path, **more: str) -> dict[str, str]:
    return {
        "SNAP_HOME": str(home),
        "SNAP_STORE": str(home / "store"),
        "SNAP_DATABASE_URL": f"sqlite:///{home / 'snap.db'}",
        "SNAP_ALLOW_PRIVATE": "1",
        **more,
    }


OpenWorkspace = Callable[..., Workspace]


@pytest.fixture
def open_workspace(tmp_path: Path, session: BrowserSession) -> Iterator[OpenWorkspace]:
    """Workspaces on one snap home, each using the module's browser session."""
    opened: list[Workspace] = []

    def make(**settings: object) -> Workspace:
        base = Settings.from_env(home_env(tmp_path / "home"))
        workspace = Workspace.open(base.with_overrides(**settings))
        workspace._browser = session
        opened.append(workspace)
        return workspace

    yield make
    for workspace in opened:
        workspace._browser = None  # the session outlives the workspace
        workspace.close()
