"""Replay: pywb, as the other side runs it, indexes the exported WACZ and WARC and serves them
on loopback; the replayed body's SHA-256 is the snapshot id, and what is replayed at the page's
URL is the page, never snap's provenance.

pywb runs from its own virtual environment (``tests/exports/setup_pywb.sh``, run by
tests/run.sh; ``SNAP_TEST_PYWB`` names another folder holding ``wb-manager`` and ``wayback``).
A missing pywb fails the test with how to install it: it is never skipped quietly.
"""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.exports.support import PAGE, capture_and_cite, run_json
from tests.http_fixtures import LoopbackServer
from tests.records.conftest import Backend

ROOT = Path(__file__).resolve().parents[2]
PYWB = Path(os.environ.get("SNAP_TEST_PYWB") or ROOT / ".venv-pywb" / "bin")
NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def pywb_tool(name: str) -> Path:
    path = PYWB / name
    if not path.exists():
        pytest.fail(f"pywb's {name} is not at {path}: run `bash tests/exports/setup_pywb.sh`")
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def clean_env() -> dict[str, str]:
    """No proxy settings: every request pywb makes (its own revisit lookups) stays on loopback."""
    proxies = {"http_proxy", "https_proxy", "all_proxy", "no_proxy"}
    return {k: v for k, v in os.environ.items() if k.lower() not in proxies}


@contextmanager
def wayback(folder: Path) -> Iterator[str]:
    """pywb's server for the collections in ``folder``, on 127.0.0.1 and a free port."""
    port = free_port()
    process = subprocess.Popen(
        [str(pywb_tool("wayback")), "-p", str(port), "-b", "127.0.0.1"],
        cwd=folder,
        env=clean_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                NO_PROXY.open(base + "/", timeout=2).close()
                break
            except urllib.error.HTTPError as error:  # it answered
                error.close()
                break
            except (urllib.error.URLError, OSError):
                if time.monotonic() > deadline or process.poll() is not None:
                    pytest.fail("pywb's wayback did not start")
                time.sleep(0.3)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=20)


def add_collection(folder: Path, name: str, archive: Path) -> None:
    manager = str(pywb_tool("wb-manager"))
    subprocess.run([manager, "init", name], cwd=folder, check=True, capture_output=True)
    unpack = ["--unpack-wacz"] if archive.suffix == ".wacz" else []
    subprocess.run(
        [manager, "add", *unpack, name, str(archive)], cwd=folder, check=True, capture_output=True
    )


def timestamp(fetched_at: str) -> str:
    return "".join(ch for ch in fetched_at if ch.isdigit())[:14]


def test_pywb_replays_the_exported_page(
    backend: Backend, http_server: LoopbackServer, tmp_path: Path
) -> None:
    record = capture_and_cite(backend, http_server, tmp_path)
    archives = {}
    for fmt, name in (("wacz", "evidence.wacz"), ("warc", "evidence.warc.gz")):
        out = tmp_path / name
        code, summary = run_json(
            backend, "export", "--format", fmt, "-o", str(out), "--citation", "c-edge"
        )
        assert code == 0, summary
        archives[fmt] = out
    replay = tmp_path / "pywb"
    replay.mkdir()
    for fmt, archive in archives.items():
        add_collection(replay, fmt, archive)

    http_server.requests.clear()
    ts = timestamp(record["fetchedAt"])
    page, old = http_server.url("/page"), http_server.url("/old")
    with wayback(replay) as base:
        for collection in archives:
            with NO_PROXY.open(f"{base}/{collection}/{ts}id_/{page}", timeout=30) as response:
                body = response.read()
                content_type = response.headers["Content-Type"]
            assert "sha256:" + hashlib.sha256(body).hexdigest() == record["snapshotId"]
            assert body == PAGE
            assert content_type == "text/html; charset=utf-8"  # the page, not the provenance
            index = f"{base}/{collection}/cdx?url={quote(page, safe='')}&output=json"
            with NO_PROXY.open(index, timeout=30) as response:
                lines = response.read().decode().splitlines()
            assert len(lines) == 1, lines  # the response only: metadata is not replayable
            no_follow = urllib.request.build_opener(urllib.request.ProxyHandler({}), NoRedirect())
            with pytest.raises(urllib.error.HTTPError) as redirect:
                no_follow.open(f"{base}/{collection}/{ts}id_/{old}", timeout=30)
            redirect.value.close()
            assert redirect.value.code == 301
            assert redirect.value.headers["Location"].endswith("/page")
    assert http_server.requests == []  # replay came from the archive, never the live server
