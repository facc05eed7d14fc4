"""Benchmark of HTTP capture throughput into the embedded default, against a WARC-writing loop.

Run: ``.venv/bin/python bench/bench_capture.py [--pages 200] [--rounds 5] [--latency MS]``
(also ``--instructions``, ``--json``, ``--s3``, ``--mode NAME``)

The same ``--pages`` small HTML pages (about 3 KB) are captured from a loopback HTTP server
that runs in a child process (so the CPU time measured here is the capturing side's alone),
by each of these, in rounds that take turns (``--rounds``, each into fresh folders):

- *warcio*: the baseline the issue names, ``warcio.capture_http`` around a ``requests``
  session's GET of each page, writing one WARC (uncompressed and gzipped; the faster of the two
  is the baseline). It stores what was received and nothing else: no text, no index, no fsync.
  After each run the WARC must hold a response for every page (``require_recorded``).
  The session does not read the environment (``trust_env = False``), as snap does not: a
  session that does looks up proxy variables on every request, about 0.12 ms a page here.
- *warcio + text*: the same loop doing the rest of what a citation store must do with the same
  bytes: extract the text with snap's extractor, and fsync the WARC at the end (once). The fair
  baseline: snap's extraction, normalized digest, manifest and record alone cost about twice the
  plain loop's CPU, so ≥ 1× the plain loop cannot be reached (docs/benchmarks.md, capture).
- *warcio + text, 2 fetching*: the same with ``records.capture.FETCH_THREADS`` requests in
  flight, as snap's batch has: a thread pool fetches while this thread extracts in order. With
  ``--latency`` (the server waits that long before each answer, as a remote one does) this is
  the baseline a careful engineer would write, since a loop that waits for each answer in turn
  loses to any that overlaps them.
- *snap one by one*: ``capture_source`` per page (SQLite + folder store; each blob fsynced on
  its own, one recording transaction per page), as ``snap fetch URL`` does.
- *snap batch*: ``capture_sources`` (``snap fetch --from FILE``), batches of ``--batch-size``,
  into a new home (every blob's fan-out folder is created, as in a store's first hours); its
  fetches run ahead of the rest on two threads (``records.capture.FETCH_THREADS``), up to
  ``FETCH_AHEAD`` targets queued.
- *snap batch, fetch in turn*: the same with ``fetch_ahead=0``: each page fetched when its turn
  comes, in the capturing thread (as before the fetches ran ahead), to read the overlap off.
- *snap batch, used store*: the same into a home that already holds ``--pages`` other captures
  (made before the clock starts), so most fan-out folders exist, as in a store in use.
- *file floor*: not a capture; four new files a page (raw, text, headers, manifest) created,
  written and closed in fan-out folders, nothing else: the least a store of one file per blob
  costs, to read the ratios against.
- with ``--s3``: *snap batch, S3*: the batch path into LocalStack (``$SNAP_TEST_S3_ENDPOINT``).

Read the *file floor* before the other figures. On a file system without a journal (this
machine's ext4 root has none), creating a file passes over every free inode freed in the last
minute, or six while its inode table block is not yet written back (``recently_deleted`` in
the kernel's ``fs/ext4/ialloc.c``). So for minutes after many files are deleted (a previous
run's folders, a test run) each new file costs up to 10× more, and the modes that create a file
per blob pay it four times a page. A floor near 0.1 ms a page is a clean run; several times that
means the figures carry the file system's slowdown.

Every snap mode keeps its guard, SHA-256 addressing, write-once blobs, manifests, the log and
durability (a record is committed only once its blobs are durable). Reported per mode: pages/s
(wall) and CPU ms per page (``time.process_time``), min and median over the rounds, with the
load average; the ratios are snap's pages/s ÷ the baseline's, and the baseline's CPU per page ÷
snap's (so ≥ 1 is as fast as the baseline on both clocks).
"""

from __future__ import annotations

import argparse
import importlib
import json
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from functools import partial
from http import client as http_client
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_startup import instructions  # noqa: E402

from records.capture import FETCH_THREADS, capture_source, capture_sources  # noqa: E402
from records.workspace import Workspace  # noqa: E402
from snap.config import Settings  # noqa: E402
from tests.http_fixtures import LoopbackServer  # noqa: E402


def _recording_requests() -> None:
    """Import ``requests`` so that warcio records its exchanges. ``warcio.capture_http``
    replaces ``http.client.HTTPConnection`` when it is imported, and urllib3 subclasses whatever
    stands there when it is imported: so warcio must come first, and snap's fetcher (whose
    connection class must stay the standard one) before both. The standard class is then put
    back for anything imported later."""
    import snapshotter.fetch  # noqa: F401

    if "urllib3" in sys.modules:
        raise SystemExit("urllib3 came before warcio: the warcio loops would record nothing")
    recording = importlib.import_module("warcio.capture_http")  # first, then requests
    importlib.import_module("requests")
    http_client.HTTPConnection = recording.orig_connection


_recording_requests()

WORDS = [
    "cache",
    "origin",
    "request",
    "ratio",
    "latency",
    "edge",
    "purge",
    "header",
    "cookie",
    "path",
    "deploy",
    "percent",
    "key",
    "value",
    "entry",
    "reader",
    "response",
    "network",
]


def page(n: int, rng: random.Random) -> bytes:
    paragraphs = "".join(
        "<p>" + " ".join(rng.choice(WORDS) for _ in range(60)) + f" {rng.randint(0, 999)}.</p>"
        for _ in range(6)
    )
    return (
        f"<!DOCTYPE html><html><head><title>Page {n}</title></head><body><nav>Home Blog"
        f"</nav><article><h1>Article {n}</h1>{paragraphs}</article>"
        f"<footer>© 2026</footer></body></html>"
    ).encode()


def serve(pages: int, channel: Connection, latency: float = 0.0) -> None:
    """The child process: serve the pages on loopback until told to stop, each answer
    ``latency`` seconds after its request (a remote server's round trip and think time)."""
    rng = random.Random(3)
    with LoopbackServer() as server:
        for n in range(pages):
            server.route(f"/p{n}", body=page(n, rng), delay=latency)
        channel.send(server.url("/"))
        channel.recv()


WARCIO_AHEAD = f"warcio + text, {FETCH_THREADS} fetching"

Run = Callable[[], None]
Mode = Callable[[list[str], Path], AbstractContextManager[Run]]


def warcio_loop(gzip: bool, *, extract_text: bool = False) -> Mode:
    @contextmanager
    def mode(urls: list[str], folder: Path) -> Iterator[Run]:
        import requests
        from warcio.capture_http import capture_http
        from warcio.warcwriter import WARCWriter

        from snapshotter.extract.html import extract_html

        path = folder / ("pages.warc.gz" if gzip else "pages.warc")

        def run() -> None:
            with path.open("wb") as out, requests.Session() as http:
                http.trust_env = False  # as snap: no proxy or .netrc from the environment
                with capture_http(WARCWriter(out, gzip=gzip)):
                    for url in urls:
                        response = http.get(url, timeout=10)
                        if extract_text:
                            extract_html(response.content, response.headers.get("Content-Type"))
                if extract_text:
                    out.flush()
                    os.fsync(out.fileno())

        yield run
        require_recorded(path, urls)

    return mode


def warcio_fetching_ahead(fetches: int) -> Mode:
    """*warcio + text* with ``fetches`` requests in flight, as snap's batch has: the pages
    fetched on a thread pool (a ``requests`` session per thread) while this thread extracts
    the text of each in order; the same WARC, each thread recording into it through
    ``SharedWriter``. The baseline for a network that answers slower than the CPU works
    (``--latency``)."""

    @contextmanager
    def mode(urls: list[str], folder: Path) -> Iterator[Run]:
        import requests
        from warcio.capture_http import capture_http
        from warcio.warcwriter import WARCWriter

        from snapshotter.extract.html import extract_html

        local = threading.local()
        sessions: list[requests.Session] = []
        path = folder / "pages.warc"

        def get(writer: SharedWriter, url: str) -> requests.Response:
            http = getattr(local, "http", None)
            if http is None:
                http = local.http = requests.Session()
                http.trust_env = False  # as snap: no proxy or .netrc from the environment
                sessions.append(http)
            with capture_http(writer):  # a recorder of this thread's own
                return http.get(url, timeout=10)

        def run() -> None:
            with path.open("wb") as out, ThreadPoolExecutor(fetches) as pool:
                writer = SharedWriter(WARCWriter(out, gzip=False))
                for response in pool.map(partial(get, writer), urls):
                    extract_html(response.content, response.headers.get("Content-Type"))
                out.flush()
                os.fsync(out.fileno())
            for http in sessions:
                http.close()

        yield run
        require_recorded(path, urls)

    return mode


class SharedWriter:
    """One WARC writer for the pool's threads. warcio's recorder follows one exchange at a
    time and is found through the thread (``capture_http``), so each thread records with its
    own, into this writer, which writes each request and response pair whole."""

    def __init__(self, writer: Any) -> None:
        self.writer = writer
        self.lock = threading.Lock()

    def create_warc_record(self, *args: Any, **kwargs: Any) -> Any:
        return self.writer.create_warc_record(*args, **kwargs)

    def write_request_response_pair(self, *args: Any, **kwargs: Any) -> None:
        with self.lock:
            self.writer.write_request_response_pair(*args, **kwargs)


def require_recorded(path: Path, urls: list[str]) -> None:
    """Stop the bench unless the WARC at ``path`` holds a response for each of ``urls``
    (checked after the clock stops): a loop that recorded nothing would be a baseline doing
    less than it claims."""
    from warcio.archiveiterator import ArchiveIterator

    with path.open("rb") as stream:
        recorded = [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(stream)
                    if r.rec_type == "response"]  # fmt: skip
    if sorted(recorded) != sorted(urls):
        raise SystemExit(f"{path} holds {len(recorded)} responses for {len(urls)} pages")


@contextmanager
def file_floor(urls: list[str], folder: Path) -> Iterator[Run]:
    """Not a capture: the least a store of one file per blob does per page, timed alone. Four
    new files (a capture's raw, text, headers and manifest) of a page's size in fan-out folders,
    each created, written and closed; no fetch, hashing, link or fsync."""
    body = page(0, random.Random(3))
    names = [f"{n:064x}" for n in range(4 * len(urls))]
    for name in names:
        (folder / name[-2:]).mkdir(exist_ok=True)

    def run() -> None:
        for name in names:
            descriptor = os.open(folder / name[-2:] / name, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            os.write(descriptor, body)
            os.close(descriptor)

    yield run


@contextmanager
def opened(folder: Path, extra: dict[str, str] | None = None) -> Iterator[Workspace]:
    """A migrated embedded home (the schema is made before the clock starts)."""
    env = {"SNAP_HOME": str(folder / "home"), "SNAP_ALLOW_PRIVATE": "1", **(extra or {})}
    workspace = Workspace.open(Settings.from_env(env))
    try:
        yield workspace
    finally:
        workspace.close()


@contextmanager
def snap_one_by_one(urls: list[str], folder: Path) -> Iterator[Run]:
    with opened(folder) as workspace:

        def run() -> None:
            for url in urls:
                capture_source(workspace, url)

        yield run


def snap_batch(
    batch_size: int,
    extra: dict[str, str] | None = None,
    *,
    filled_with: tuple[str, ...] = (),
    fetch_ahead: int | None = None,
) -> Mode:
    """The batch path; ``filled_with``: pages captured first, untimed, so the store already
    has its fan-out folders (a store in use) instead of creating one for most blobs."""

    @contextmanager
    def mode(urls: list[str], folder: Path) -> Iterator[Run]:
        with opened(folder, extra) as workspace:
            if filled_with:
                list(capture_sources(workspace, filled_with, batch_size=batch_size))

            def run() -> None:
                ahead = {} if fetch_ahead is None else {"fetch_ahead": fetch_ahead}
                outcomes = capture_sources(workspace, urls, batch_size=batch_size, **ahead)
                failed = [outcome for outcome in outcomes if outcome.error]
                assert not failed, failed[0].error

            yield run

    return mode


def timed(mode: Mode, urls: list[str], folder: Path) -> tuple[float, float]:
    """Seconds of wall and of CPU for one run of ``mode`` into ``folder``."""
    folder.mkdir(parents=True)
    with mode(urls, folder) as run:
        wall, cpu = time.perf_counter(), time.process_time()
        run()
        return time.perf_counter() - wall, time.process_time() - cpu


def warm_up(urls: list[str], folder: Path) -> None:
    """Imports and the extractor's first use, outside every timed run."""
    for name, mode in (
        ("batch", snap_batch(10)),
        ("single", snap_one_by_one),
        ("warcio", warcio_loop(True, extract_text=True)),
    ):
        timed(mode, urls[:2], folder / name)


def summary(runs: list[tuple[float, float]], pages: int) -> dict[str, Any]:
    rates = sorted(pages / wall for wall, _ in runs)
    cpu = sorted(spent / pages * 1000 for _, spent in runs)
    return {
        "pagesPerSecond": {
            "max": round(rates[-1], 1),
            "median": round(statistics.median(rates), 1),
        },
        "cpuMsPerPage": {"min": round(cpu[0], 3), "median": round(statistics.median(cpu), 3)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--s3", action="store_true", help="also the batch path into S3")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--latency",
        type=float,
        default=0.0,
        help="milliseconds the server waits before each answer (default 0: loopback speed)",
    )
    parser.add_argument(
        "--mode",
        action="append",
        help="run only this mode (repeatable; the warcio baselines always run)",
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions a page under callgrind instead (--pages and twice as many)",
    )
    parser.add_argument("--count", help=argparse.SUPPRESS)  # the child run under callgrind
    parser.add_argument("--base", help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    modes: dict[str, Mode] = {
        "warcio": warcio_loop(False),
        "warcio gzip": warcio_loop(True),
        "warcio + text": warcio_loop(False, extract_text=True),
        WARCIO_AHEAD: warcio_fetching_ahead(FETCH_THREADS),
        "snap one by one": snap_one_by_one,
        "snap batch": snap_batch(args.batch_size),
        "snap batch, fetch in turn": snap_batch(args.batch_size, fetch_ahead=0),
        "file floor": file_floor,
    }
    if args.count:
        urls = [f"{args.base}p{n}" for n in range(args.pages)]
        timed(modes[args.count], urls, args.folder)
        return
    if args.s3:
        endpoint = os.environ.get("SNAP_TEST_S3_ENDPOINT", "http://127.0.0.1:4566")
        modes["snap batch, S3"] = s3_mode(endpoint, args.batch_size)
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    server = context.Process(
        target=serve, args=(2 * args.pages, theirs, args.latency / 1000), daemon=True
    )
    server.start()
    base = ours.recv()
    urls = [f"{base}p{n}" for n in range(args.pages)]
    if args.instructions:
        try:
            report_instructions(base, args)
        finally:
            ours.send("stop")
            server.join(10)
        return
    others = [f"{base}p{n}" for n in range(args.pages, 2 * args.pages)]
    modes["snap batch, used store"] = snap_batch(args.batch_size, filled_with=tuple(others))
    if args.mode:
        kept = {"warcio", "warcio gzip", "warcio + text", WARCIO_AHEAD, *args.mode}
        modes = {name: mode for name, mode in modes.items() if name in kept}
    runs: dict[str, list[tuple[float, float]]] = {mode: [] for mode in modes}
    load = [os.getloadavg()[0]]
    try:
        with tempfile.TemporaryDirectory(prefix="snap-bench-capture-") as name:
            warm_up(urls, Path(name) / "warm")
            for round_ in range(args.rounds):
                order = list(modes) if round_ % 2 == 0 else list(reversed(modes))
                for mode in order:
                    folder = Path(name) / f"{round_}-{mode.replace(' ', '_')}"
                    runs[mode].append(timed(modes[mode], urls, folder))
                load.append(os.getloadavg()[0])
    finally:
        ours.send("stop")
        server.join(10)
    report = report_of(runs, args, load)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print_report(report)


COUNTED = ("warcio + text", "snap batch, fetch in turn")
"""The modes counted in instructions: the fair baseline, and snap's batch on one thread (its
fetch threads' work would count the same, as instructions do not overlap)."""


def report_instructions(base: str, args: argparse.Namespace) -> None:
    """Instructions a page of each ``COUNTED`` mode: a run of twice ``--pages`` less a run of
    ``--pages``, each a child process under callgrind, so imports and set-up cancel out."""
    per_page: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="snap-bench-capture-") as name:
        for mode in COUNTED:
            counts = []
            for pages in (args.pages, 2 * args.pages):
                folder = Path(name) / f"{mode.replace(' ', '_')}-{pages}"
                argv = [__file__, "--count", mode, "--base", base, "--pages", str(pages),
                        "--batch-size", str(args.batch_size)]  # fmt: skip
                counts.append(instructions([*argv, "--folder", str(folder)], dict(os.environ)))
            per_page[mode] = (counts[1] - counts[0]) / args.pages
    ratio = per_page[COUNTED[1]] / per_page[COUNTED[0]]
    if args.json:
        print(json.dumps({"pages": args.pages, "instructionsPerPage": per_page, "ratio": ratio}))
        return
    for mode, count in per_page.items():
        print(f"  {mode:26} {count / 1e6:6.2f} M instructions a page")
    print(f"  {COUNTED[1]} / {COUNTED[0]}: {ratio:.2f}x")


def s3_mode(endpoint: str, batch_size: int) -> Mode:
    @contextmanager
    def mode(urls: list[str], folder: Path) -> Iterator[Run]:
        from tests.s3_support import new_s3_store

        store = new_s3_store(endpoint)
        extra = {"SNAP_STORE": store.location, "AWS_ENDPOINT_URL": endpoint}
        with snap_batch(batch_size, extra)(urls, folder) as run:
            yield run

    return mode


def report_of(
    runs: dict[str, list[tuple[float, float]]], args: argparse.Namespace, load: list[float]
) -> dict[str, Any]:
    modes = {mode: summary(found, args.pages) for mode, found in runs.items()}
    fastest = max(("warcio", "warcio gzip"), key=lambda m: modes[m]["pagesPerSecond"]["median"])
    ratios: dict[str, Any] = {}
    for baseline in (fastest, "warcio + text", WARCIO_AHEAD):
        for mode in (
            "snap one by one",
            "snap batch",
            "snap batch, fetch in turn",
            "snap batch, used store",
        ):
            if mode not in modes:
                continue
            ours, theirs = modes[mode], modes[baseline]
            ratios[f"{mode} / {baseline}"] = {
                "pagesPerSecond": round(
                    ours["pagesPerSecond"]["median"] / theirs["pagesPerSecond"]["median"], 3
                ),
                "cpu": round(theirs["cpuMsPerPage"]["median"] / ours["cpuMsPerPage"]["median"], 3),
            }
    return {
        "pages": args.pages,
        "rounds": args.rounds,
        "batchSize": args.batch_size,
        "latencyMs": args.latency,
        "loadAverage": {"min": min(load), "max": max(load)},
        "baseline": fastest,
        "modes": modes,
        "ratios": ratios,
    }


def print_report(report: dict[str, Any]) -> None:
    load = report["loadAverage"]
    print(
        f"{report['pages']} pages, {report['rounds']} rounds, batches of {report['batchSize']},"
        f" {report['latencyMs']:g} ms latency;"
        f" load average {load['min']:.1f}-{load['max']:.1f}"
    )
    for mode, found in report["modes"].items():
        rate, cpu = found["pagesPerSecond"], found["cpuMsPerPage"]
        print(
            f"  {mode:26} {rate['median']:7.1f} pages/s (best {rate['max']:7.1f})"
            f"  {cpu['median']:6.2f} ms CPU/page (best {cpu['min']:6.2f})"
        )
    for name, ratio in report["ratios"].items():
        print(f"  {name:45} {ratio['pagesPerSecond']:5.2f}x pages/s  {ratio['cpu']:5.2f}x CPU")


if __name__ == "__main__":
    main()
