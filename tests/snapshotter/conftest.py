"""Fixtures for fetch and extract tests: the loopback server and fetch options for it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from snapshotter.fetch import FetchOptions
from tests.http_fixtures import http_server

__all__ = ["http_server"]

OptionsFactory = Callable[..., FetchOptions]


@pytest.fixture
def options() -> OptionsFactory:
    """FetchOptions for the loopback server (which needs allow_private), overridable."""

    def make(**changes: Any) -> FetchOptions:
        settings: dict[str, Any] = {
            "max_bytes": 1024 * 1024,
            "timeout": 5.0,
            "max_redirects": 5,
            "allow_private": True,
        }
        settings.update(changes)
        return FetchOptions(**settings)

    return make


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """Where fetch puts its temporary files, so tests can check nothing is left behind."""
    folder = tmp_path / "work"
    folder.mkdir()
    return folder
