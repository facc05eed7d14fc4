"""snap as an installed distribution: what the wheel carries, that it runs on its own, and that a
foreign package shadowing one of snap's import names stops every command with one line.

The wheel is built from this checkout without build isolation and without an index, so the test
never reaches a package registry: the build tools come from the dev extra.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from snap.packages import OWN_PACKAGES

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "cdn-caching.html"
PIP = [sys.executable, "-m", "pip", "--quiet", "--disable-pip-version-check"]
OFFLINE = ["--no-deps", "--no-index"]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [*PIP, "wheel", *OFFLINE, "--no-build-isolation", "--wheel-dir", str(folder), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (built,) = folder.glob("*.whl")
    return built


def test_the_wheel_has_a_distinctive_name_and_only_snaps_packages(wheel: Path) -> None:
    assert wheel.name.startswith("snap_citations-")
    names = zipfile.ZipFile(wheel).namelist()
    top_level = {name.split("/")[0] for name in names if ".dist-info/" not in name}
    assert top_level == set(OWN_PACKAGES)
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "snap = snap.entry:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_the_wheel_carries_every_migration(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    revisions = {
        f"migrations/versions/{p.name}" for p in (ROOT / "migrations/versions").glob("*.py")
    }
    assert revisions, "the checkout has migrations"
    assert revisions | {"migrations/env.py", "migrations/script.py.mako"} <= names


def test_the_wheel_carries_the_scripts_a_browser_capture_runs_in_the_page(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    scripts = {f"snapshotter/browser/{p.name}" for p in (ROOT / "snapshotter/browser").glob("*.js")}
    assert "snapshotter/browser/page_text.js" in scripts
    assert scripts <= names


def test_the_installed_wheel_creates_its_database_and_verifies(wheel: Path, tmp_path: Path) -> None:
    """Installed into a folder of its own (its dependencies from this environment), snap runs
    its migrations from the wheel, captures a page and verifies a quote from it."""
    target = tmp_path / "site"
    subprocess.run(
        [*PIP, "install", *OFFLINE, "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    env = {**os.environ, "PYTHONPATH": str(target), "SNAP_HOME": str(tmp_path / "home")}
    env.pop("SNAP_DATABASE_URL", None)
    env.pop("SNAP_STORE_URL", None)
    where = subprocess.run(
        [sys.executable, "-c", "import records, snap; print(snap.__file__, records.__file__)"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert all(path.startswith(str(target)) for path in where.stdout.split())
    fetched = subprocess.run(
        [sys.executable, "-m", "snap", "fetch", str(EXAMPLE), "--json"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert fetched.returncode == 0, fetched.stderr
    assert '"snapshotId": "sha256:' in fetched.stdout


def test_a_foreign_package_under_one_of_snaps_names_stops_every_command(tmp_path: Path) -> None:
    shadow = tmp_path / "other" / "records"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise SystemExit('the foreign package ran')\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "other"), "SNAP_HOME": str(tmp_path / "h")}
    done = subprocess.run(
        [sys.executable, "-m", "snap", "audit", "c-anything"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 3
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("snap: error: another installation shadows part of snap: records (")
    assert "pipx install snap-citations" in lines[0]
    assert not (tmp_path / "h").exists()  # nothing ran, nothing was created
