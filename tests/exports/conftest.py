"""Exports are tested on records made the way a user makes them: pages captured from a loopback
HTTP server and citations checked by the ``snap`` command (in this process: tests/snap_cli.py), in
a temporary snap home."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from records.exports.evidence_page import render_evidence_page
from records.workspace import Workspace
from snap.config import Settings
from tests.db_support import ready_home
from tests.http_fixtures import LoopbackServer, http_server  # noqa: F401  (fixture)
from tests.records.conftest import (  # noqa: F401  (fixtures: export tests run on both backends)
    backend,
    postgres_url,
    s3_bucket,
    s3_env,
)
from tests.s3_support import s3_endpoint  # noqa: F401  (fixture)
from tests.snap_cli import run_snap

ARTICLE = """<!DOCTYPE html><html lang="en"><head><title>Caching at the edge</title></head><body>
<nav><a href="/">Home</a></nav>
<main><h1>Caching at the edge</h1>
<p>A cache hit ratio of 90 percent means the origin serves only 1 request in 10.
Raising it to 99 percent means the origin serves only 1 request in 100, a tenfold cut.</p>
<p>Short lifetimes, cookies on static files and query strings that vary per reader all split
the cache into many small entries. Normalizing cache keys often lifts the ratio noticeably.</p>
</main></body></html>"""
FOUND = "the origin serves only 1 request in 10"
CHANGED = "Raising it to 99 percent means the origin serves only 1 request in 1000"


@dataclass
class Home:
    """A snap home of its own: the CLI and the same records, both in this process."""

    env: dict[str, str]
    folder: Path

    def snap(self, *args: str) -> subprocess.CompletedProcess[str]:
        """The CLI in this process, with this home's environment (tests/snap_cli.py)."""
        return run_snap(args, self.env)

    def snap_json(self, *args: str) -> tuple[int, Any]:
        done = self.snap(*args, "--json")
        assert "Traceback" not in done.stderr, done.stderr
        return done.returncode, json.loads(done.stdout)

    def fetch(self, url: str) -> dict[str, Any]:
        code, record = self.snap_json("fetch", url)
        assert code == 0, record
        return record  # type: ignore[no-any-return]

    def verify(self, document: Any, name: str = "citations.json") -> list[dict[str, Any]]:
        """``snap verify`` of ``document``; its results, one per citation."""
        path = self.folder / name
        path.write_text(json.dumps(document), encoding="utf-8")
        _, report = self.snap_json("verify", str(path))
        return report["results"]  # type: ignore[no-any-return]

    def workspace(self) -> Workspace:
        return Workspace.open(Settings.from_env(self.env), existing=True)

    def page(self, *citation_ids: str) -> str:
        """The evidence page, rendered in process from this home's records."""
        workspace = self.workspace()
        try:
            return render_evidence_page(workspace, citation_ids)
        finally:
            workspace.close()


@pytest.fixture
def home(tmp_path: Path, sqlite_template: Path) -> Home:
    """A home whose database is migrated already (a copy of the session's template)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("SNAP_")}
    folder = ready_home(tmp_path / "home", sqlite_template)
    env |= {"SNAP_HOME": str(folder), "SNAP_ALLOW_PRIVATE": "1"}
    return Home(env, tmp_path)


def recorded_article(home: Home, server: LoopbackServer, body: str = ARTICLE) -> str:
    """Capture the article from the loopback server; its URL."""
    server.route("/cdn", body=body.encode())
    url = server.url("/cdn")
    home.fetch(url)
    return url
