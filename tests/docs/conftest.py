"""The built manual, made once per run into a temporary folder (never into the repository)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.manual import build_site


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("mkdocs", reason="MkDocs is a dev extra")
    target = tmp_path_factory.mktemp("docs") / "site"
    built = build_site(target)
    assert built.returncode == 0, f"mkdocs build --strict failed:\n{built.stderr}"
    return target
