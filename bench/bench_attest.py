"""Benchmark of sealing captures: what manifests, signatures, RFC 3161 timestamps and the
Merkle log add to a bulk capture of loopback pages.

Run: ``.venv/bin/python bench/bench_attest.py [--pages 1000] [--json]``.

Each mode captures the same ``--pages`` loopback pages (about 5 KB of HTML each) one after the
other with ``capture_source`` into a fresh embedded home (SQLite + folder store), then makes
the batch's checkpoint. Modes: *baseline* (sealing and the log switched off: today's capture),
*unsigned* (manifest blob and log, no key, no TSA), *per batch* (signed, one TSA request for the
batch checkpoint; ``SNAP_TSA_PER=batch``) and *per capture* (signed, one TSA request per
manifest). The TSA is the tests' local one: ``openssl ts -reply`` behind a loopback handler, a
process per request, so a TSA request costs what starting openssl costs here.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from records.attest import log as attest_log  # noqa: E402
from records.attest import seal as attest_seal  # noqa: E402
from records.attest.checkpoints import checkpoint_if_grown  # noqa: E402
from records.attest.signing import KeyType, write_new_key  # noqa: E402
from records.capture import capture_source  # noqa: E402
from records.workspace import Workspace  # noqa: E402
from snap.config import Settings  # noqa: E402
from tests.attest.tsa import LocalTsa, local_tsa  # noqa: E402
from tests.http_fixtures import LoopbackServer  # noqa: E402

WORDS = ["cache", "origin", "edge", "ratio", "request", "purge", "deploy", "header"]


def page(index: int) -> bytes:
    words = " ".join(WORDS[(index + i) % len(WORDS)] for i in range(700))
    return f"<html><body><main><h1>Page {index}</h1><p>{words}</p></main></body></html>".encode()


@contextmanager
def switched_off() -> Iterator[None]:
    """Today's capture: no manifest, no log append."""
    with (
        mock.patch.object(attest_seal, "seal", side_effect=lambda _a, _s, record: record),
        mock.patch.object(attest_log, "append", return_value=[]),
    ):
        yield


def run(mode: str, urls: list[str], tsa: LocalTsa) -> float:
    with tempfile.TemporaryDirectory(prefix="snap-bench-attest-") as name:
        home = Path(name)
        env = {"SNAP_HOME": str(home), "SNAP_ALLOW_PRIVATE": "1"}
        if mode in ("per batch", "per capture"):
            write_new_key(home / "signing-key.pem", KeyType.ECDSA_P256)
            env |= {"SNAP_TSA_URL": tsa.url, "SNAP_TSA_CHAIN": str(tsa.chain_path)}
            env |= {"SNAP_TSA_PER": "batch" if mode == "per batch" else "capture"}
        workspace = Workspace.open(Settings.from_env(env))
        try:
            capture_source(workspace, urls[0])  # warm-up: migrations, imports
            context = switched_off() if mode == "baseline" else contextmanager(iter_none)()
            with context:
                started = time.perf_counter()
                for url in urls:
                    capture_source(workspace, url)
                if mode != "baseline":
                    checkpoint_if_grown(workspace)
                return time.perf_counter() - started
        finally:
            workspace.close()


def iter_none() -> Iterator[None]:
    yield


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results: dict[str, Any] = {}
    with LoopbackServer() as server, local_tsa() as tsa:
        urls = []
        for index in range(args.pages):
            server.route(f"/p/{index}", body=page(index))
            urls.append(server.url(f"/p/{index}"))
        for mode in ("baseline", "unsigned", "per batch", "per capture"):
            best = min(run(mode, urls, tsa) for _ in range(args.rounds))
            results[mode] = best
        results["tsaRequests"] = len(tsa.requests)
    base = results["baseline"]
    if args.json:
        print(json.dumps({"pages": args.pages, **results}, indent=2))
        return
    for mode in ("baseline", "unsigned", "per batch", "per capture"):
        seconds = results[mode]
        rate = args.pages / seconds
        print(f"{mode:12} {seconds:7.2f} s  {rate:7.1f} pages/s  {seconds / base:5.2f}x")


if __name__ == "__main__":
    main()
