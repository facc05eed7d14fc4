"""Fixtures shared by every test folder (each pytest-xdist worker makes its own)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.db_support import migrated_sqlite_template


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated, empty embedded database, made once per session and copied into each test's
    snap home by the fixtures that hand out a ready home."""
    return migrated_sqlite_template(tmp_path_factory.mktemp("sqlite-template"))
