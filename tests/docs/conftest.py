"""The built manual, made once per run into a temporary folder (never into the repository)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.manual import ROOT


def build_site(target: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict``: any warning (a broken link or anchor, a page not in the
    navigation, a hook that fails) fails the build."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
         "-d", str(target)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("mkdocs", reason="MkDocs is a dev extra")
    target = tmp_path_factory.mktemp("docs") / "site"
    built = build_site(target)
    assert built.returncode == 0, f"mkdocs build --strict failed:\n{built.stderr}"
    return target
