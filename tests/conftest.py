"""Fixtures shared by every test folder (each pytest-xdist worker makes its own)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.db_support import migrated_sqlite_template, ready_home


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated, empty embedded database, made once per session and copied into each test's
    snap home by the fixtures that hand out a ready home."""
    return migrated_sqlite_template(tmp_path_factory.mktemp("sqlite-template"))


@pytest.fixture
def home_env(tmp_path: Path, sqlite_template: Path) -> dict[str, str]:
    """The environment of a command on a ready embedded home: this process's without any
    ``SNAP_`` setting, and ``SNAP_HOME`` a migrated, empty home at ``tmp_path / "home"``."""
    inherited = {key: value for key, value in os.environ.items() if not key.startswith("SNAP_")}
    return inherited | {"SNAP_HOME": str(ready_home(tmp_path / "home", sqlite_template))}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules with a test marked ``slow`` run first. pytest-xdist hands out whole files in
    collection order (``--dist loadfile``); a long file handed out last keeps one core busy
    while the other has nothing left, so the long ones go out while there is work to balance
    them. Order within a module, and among the other modules, is kept."""
    slow = {item.path for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: item.path not in slow)
