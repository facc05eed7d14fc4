"""Benchmark of sealing captures: what manifests, signatures, RFC 3161 timestamps and the
Merkle log add to a bulk capture of loopback pages.

Run: ``.venv/bin/python bench/bench_attest.py [--pages 1000] [--json]``, or
``.venv/bin/python bench/bench_attest.py --verify [--runs 300]`` for what checking a seal adds
to ``snap verify`` (below).

Each mode captures the same ``--pages`` loopback pages (about 5 KB of HTML each) through the
batch path (``capture_sources``, as ``snap fetch --from FILE``; batches of ``--batch-size``)
into a fresh embedded home (SQLite + folder store; the schema made before the clock starts),
then makes the run's checkpoint. Modes: *baseline* (the same batch path with sealing and the log
switched off: the fastest capture there is, and the fair baseline), *unsigned* (manifest blobs
and the log, no key, no TSA), *per batch* (signed, one TSA request per batch, for the batch's
checkpoint; ``SNAP_TSA_PER=batch``) and *per capture* (signed, one TSA request per manifest).
Rounds take turns between the modes; the best and the median of each are reported, in wall and
CPU time (``time.process_time``: this process alone, so the TSA's openssl processes are not in
it), with the load average. The TSA is the tests' local one: ``openssl ts -reply`` behind a
loopback handler, a process per request, so a TSA request costs what starting openssl costs
here.

``--verify``: CPU time (``time.process_time``, independent of other processes' load) of one
in-process ``verify_citations`` of one citation against a signed and stamped capture, recorded
each time: with the seal checked as verify checks it (its manifest and token re-hashed, the
signature and token verified once per process), without any seal check (the baseline: verify
as it was), and with the signature and token verified afresh each time (a process's first
check). Rounds alternate the three; the best of each is reported.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from records.attest import log as attest_log  # noqa: E402
from records.attest import seal as attest_seal  # noqa: E402
from records.attest.checkpoints import checkpoint_if_grown  # noqa: E402
from records.attest.signing import KeyType, write_new_key  # noqa: E402
from records.capture import capture_source, capture_sources  # noqa: E402
from records.workspace import Workspace  # noqa: E402
from snap.config import Settings  # noqa: E402
from tests.attest.tsa import LocalTsa, local_tsa  # noqa: E402
from tests.http_fixtures import LoopbackServer  # noqa: E402

MODES = ("baseline", "unsigned", "per batch", "per capture")
WORDS = ["cache", "origin", "edge", "ratio", "request", "purge", "deploy", "header"]


def page(index: int) -> bytes:
    words = " ".join(WORDS[(index + i) % len(WORDS)] for i in range(700))
    return f"<html><body><main><h1>Page {index}</h1><p>{words}</p></main></body></html>".encode()


def serve(pages: int, channel: Connection) -> None:
    """A child process serving the pages on loopback (so this process's CPU time is the
    capture's alone) until told to stop."""
    with LoopbackServer() as server:
        for index in range(pages):
            server.route(f"/p/{index}", body=page(index))
        channel.send(server.url("/"))
        channel.recv()


@contextmanager
def stopping(channel: Connection, server: Any) -> Iterator[None]:
    try:
        yield
    finally:
        channel.send("stop")
        server.join(10)


@contextmanager
def switched_off() -> Iterator[None]:
    """Today's capture: no manifest, no log append."""
    with (
        mock.patch.object(attest_seal, "seal", side_effect=lambda _a, _s, record: record),
        mock.patch.object(attest_log, "append", return_value=[]),
    ):
        yield


def run(mode: str, urls: list[str], tsa: LocalTsa, batch_size: int) -> tuple[float, float]:
    """Seconds of wall and CPU time of one run of ``mode``."""
    with tempfile.TemporaryDirectory(prefix="snap-bench-attest-") as name:
        home = Path(name)
        env = {"SNAP_HOME": str(home), "SNAP_ALLOW_PRIVATE": "1"}
        if mode in ("per batch", "per capture"):
            write_new_key(home / "signing-key.pem", KeyType.ECDSA_P256)
            env |= {"SNAP_TSA_URL": tsa.url, "SNAP_TSA_CHAIN": str(tsa.chain_path)}
            env |= {"SNAP_TSA_PER": "batch" if mode == "per batch" else "capture"}
        workspace = Workspace.open(Settings.from_env(env))
        try:
            capture_source(workspace, urls[0])  # warm-up: the schema, imports
            context = switched_off() if mode == "baseline" else contextmanager(iter_none)()
            with context:
                wall, cpu = time.perf_counter(), time.process_time()
                outcomes = list(capture_sources(workspace, urls, batch_size=batch_size))
                if mode != "baseline":
                    checkpoint_if_grown(workspace)
                spent = time.perf_counter() - wall, time.process_time() - cpu
            assert all(outcome.record is not None for outcome in outcomes)
            return spent
        finally:
            workspace.close()


def iter_none() -> Iterator[None]:
    yield


@contextmanager
def unchecked(verify_module: Any) -> Iterator[None]:
    """verify as it was before seals: no capture attached to the evidence, no seal checks."""
    with (
        mock.patch.object(verify_module._Lookups, "sealed", lambda _self, _r, evidence: evidence),
        mock.patch.object(verify_module, "seal_checks_of", return_value=None),
    ):
        yield


def prepare_verify_home(home: Path, tsa: LocalTsa) -> dict[str, str]:
    """A home with one signed, stamped capture of a loopback page and a citation of it."""
    write_new_key(home / "signing-key.pem", KeyType.ECDSA_P256)
    env = {"SNAP_HOME": str(home), "SNAP_ALLOW_PRIVATE": "1"}
    env |= {"SNAP_TSA_URL": tsa.url, "SNAP_TSA_CHAIN": str(tsa.chain_path)}
    (home / "tsa-chain.pem").write_bytes(tsa.chain_path.read_bytes())
    with LoopbackServer() as server:
        server.route("/p", body=page(1))
        workspace = Workspace.open(Settings.from_env(env))
        try:
            record = capture_source(workspace, server.url("/p"))
        finally:
            workspace.close()
    quote = " ".join(WORDS[1 + i] for i in range(3))
    citation = {"snapshotId": record.snapshot_id, "quote": quote}
    (home / "citation.json").write_text(json.dumps(citation))
    return env


def verify_modes(workspace: Workspace) -> dict[str, Any]:
    from records import verify as verify_module
    from records.attest.checks import SealChecks, seal_checks_of

    chain = seal_checks_of(workspace).chain
    return {
        "sealed": contextmanager(iter_none),
        "unchecked": lambda: unchecked(verify_module),
        "first in process": lambda: mock.patch.object(
            verify_module, "seal_checks_of", side_effect=lambda _ws: SealChecks(chain)
        ),
    }


def verify_runs(home: Path, modes: list[str], runs: int, rounds: int) -> dict[str, float]:
    """Milliseconds of CPU per verify in each mode, best of ``rounds`` alternating rounds."""
    from records.inputs import load_verify_input
    from records.inputs.documents import NO_DOCUMENTS
    from records.verify import verify_citations

    env = {"SNAP_HOME": str(home), "SNAP_TSA_CHAIN": str(home / "tsa-chain.pem")}
    workspace = Workspace.open(Settings.from_env(env))
    try:
        given = load_verify_input(home / "citation.json", NO_DOCUMENTS)
        contexts = verify_modes(workspace)
        best = dict.fromkeys(modes, float("inf"))
        verify_citations(workspace, given)  # warm-up: imports, the engine's pool
        for _ in range(rounds):
            for mode in modes:
                with contexts[mode]():
                    started = time.process_time()
                    for _ in range(runs):
                        assert verify_citations(workspace, given).passed
                    spent = (time.process_time() - started) / max(runs, 1) * 1000
                best[mode] = min(best[mode], spent)
        return best
    finally:
        workspace.close()


def verify_cost(runs: int, rounds: int, tsa: LocalTsa) -> dict[str, float]:
    """Milliseconds of CPU per verify: sealed (as shipped), unchecked, and first-in-process."""
    with tempfile.TemporaryDirectory(prefix="snap-bench-verify-") as name:
        prepare_verify_home(Path(name), tsa)
        return verify_runs(Path(name), ["sealed", "unchecked", "first in process"], runs, rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--verify", action="store_true", help="what a seal check adds to verify")
    parser.add_argument("--runs", type=int, default=300, help="verifies per round (--verify)")
    parser.add_argument("--verify-home", type=Path, help="run --mode in this prepared home")
    parser.add_argument("--prepare", action="store_true", help="prepare --verify-home first")
    parser.add_argument("--mode", default="sealed", help="sealed, unchecked, first in process")
    parser.add_argument(
        "--modes",
        default=",".join(MODES),
        help="comma-separated modes to run (baseline always runs): " + ", ".join(MODES),
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.verify_home is not None:
        if args.prepare:
            with local_tsa() as tsa:
                prepare_verify_home(args.verify_home, tsa)
            return
        print(json.dumps(verify_runs(args.verify_home, [args.mode], args.runs, 1)))
        return
    if args.verify:
        with local_tsa() as tsa:
            cost = verify_cost(args.runs, max(args.rounds, 3), tsa)
        if args.json:
            print(json.dumps({"runs": args.runs, "cpuMsPerVerify": cost}, indent=2))
            return
        for mode, ms in cost.items():
            ratio = ms / cost["unchecked"]
            print(f"{mode:17} {ms:7.3f} ms CPU per verify  {ratio:5.3f}x unchecked")
        return
    wanted = {mode.strip() for mode in args.modes.split(",")} | {"baseline"}
    if not wanted <= set(MODES):
        parser.error(f"--modes: unknown {', '.join(sorted(wanted - set(MODES)))}")
    modes = tuple(mode for mode in MODES if mode in wanted)
    runs: dict[str, list[tuple[float, float]]] = {mode: [] for mode in modes}
    load = [os.getloadavg()[0]]
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    server = context.Process(target=serve, args=(args.pages, theirs), daemon=True)
    server.start()
    base = ours.recv()
    urls = [f"{base}p/{index}" for index in range(args.pages)]
    with local_tsa() as tsa, stopping(ours, server):
        for round_ in range(args.rounds):
            for mode in modes if round_ % 2 == 0 else tuple(reversed(modes)):
                runs[mode].append(run(mode, urls, tsa, args.batch_size))
            load.append(os.getloadavg()[0])
        tsa_requests = len(tsa.requests)
    report = attest_report(runs, args.pages, tsa_requests, load)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(
        f"{args.pages} pages, batches of {args.batch_size}, {args.rounds} rounds;"
        f" load average {min(load):.1f}-{max(load):.1f}"
    )
    for mode, found in report["modes"].items():
        print(
            f"  {mode:12} {found['wall']['best']:7.2f} s (median {found['wall']['median']:7.2f})"
            f" {found['wallRatio']:5.2f}x   CPU {found['cpu']['best']:6.2f} s"
            f" (median {found['cpu']['median']:6.2f}) {found['cpuRatio']:5.2f}x"
            + (
                f"   over unsigned: wall {found['overUnsigned']['wall']:5.2f}x"
                f" CPU {found['overUnsigned']['cpu']:5.2f}x"
                if "overUnsigned" in found
                else ""
            )
        )


def attest_report(
    runs: dict[str, list[tuple[float, float]]], pages: int, tsa_requests: int, load: list[float]
) -> dict[str, Any]:
    """Best and median wall and CPU seconds per mode; ratios of the medians to the baseline's,
    and of the signed modes to the unsigned one's (what signing and timestamping add to a
    capture that already writes its manifest and log entries)."""
    modes: dict[str, Any] = {}
    for mode, found in runs.items():
        walls = sorted(wall for wall, _ in found)
        cpus = sorted(cpu for _, cpu in found)
        modes[mode] = {
            "wall": {"best": round(walls[0], 3), "median": round(statistics.median(walls), 3)},
            "cpu": {"best": round(cpus[0], 3), "median": round(statistics.median(cpus), 3)},
            "pagesPerSecond": round(pages / statistics.median(walls), 1),
        }
    base = modes["baseline"]
    for found in modes.values():
        found["wallRatio"] = round(found["wall"]["median"] / base["wall"]["median"], 3)
        found["cpuRatio"] = round(found["cpu"]["median"] / base["cpu"]["median"], 3)
    unsigned = modes.get("unsigned")
    for mode in ("per batch", "per capture"):
        if unsigned is not None and mode in modes:
            modes[mode]["overUnsigned"] = {
                clock: round(modes[mode][clock]["median"] / unsigned[clock]["median"], 3)
                for clock in ("wall", "cpu")
            }
    return {
        "pages": pages,
        "tsaRequests": tsa_requests,
        "loadAverage": {"min": min(load), "max": max(load)},
        "modes": modes,
    }


if __name__ == "__main__":
    main()
