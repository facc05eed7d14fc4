"""Each command imports only what it needs: checked by the modules a real process had loaded.

Start-up time is mostly imports, and a stray top-level import (SQLAlchemy's PostgreSQL dialect
for a SQLite user, Alembic on every start, boto3 without S3, trafilatura without HTML) brings
the cost back silently.  Timing is too noisy to guard this; ``sys.modules`` is not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from snap.cli import COMMANDS as COMMAND_TABLE
from snap.cli import cli
from snap.entry import VERSION_LINE
from tests.snap_cli import subcommands

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
# Runs ``snap ARGS`` the way the console script does and writes the loaded module names to the
# file named first; atexit, because click ends the process with sys.exit.
RUNNER = """
import atexit, json, sys
out = sys.argv[1]
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
sys.argv = ["snap", *sys.argv[2:]]
from snap.entry import main
main()
"""
HEAVY = ("sqlalchemy", "alembic", "boto3", "botocore", "trafilatura", "pypdf", "psycopg")
NOT_FOR_SQLITE = ("alembic", "boto3", "botocore", "psycopg", "sqlalchemy.dialects.postgresql")
# The folder store is the default: the S3 backend is loaded only for an s3:// store.
NOT_FOR_FOLDER = ("snapshotter.store.s3", "boto3", "botocore")
# Turning bytes into text: only a command that extracts loads an extractor, and only its own.
HTML_EXTRACTION = (
    "trafilatura",
    "htmldate",
    "courlan",
    "justext",
    "urllib3",
    "lxml",
    "snapshotter.extract.html",
    "snapshotter.extract.html_render",
    "snapshotter.extract.html_visible",
)
PDF_EXTRACTION = ("pypdf", "snapshotter.extract.pdf", "snapshotter.extract.pdf_furniture")
EXTRACTION = (
    *HTML_EXTRACTION,
    *PDF_EXTRACTION,
    "snapshotter.extract.sniff",
    "snapshotter.extract.text",
)
# The tokenizer's scanner is compiled when verifier.tokenizer is imported (its other patterns on
# first use).
MATCHING = ("regex", "verifier.matcher", "verifier.tokenizer")
# Making a capture (and the one-off windows of a quote checked against an unprepared text): a
# command that reads stored records back or checks a citation against a stored capture does not.
CAPTURING = ("snapshotter.capture", "records.capture", "verifier.oneoff")
# What the shell needs of the layers below it just to parse options and map errors: their
# errors, option objects, the version, the closest passage's marks, the vocabulary's enums and
# the time format (pure code with no backend and no matcher).
FOUNDATIONS = frozenset(
    {
        "records",
        "records.attest",
        "records.attest.errors",
        "records.errors",
        "records.options",
        "records.passage_marks",
        "records.vocabulary",
        "snapshotter",
        "snapshotter.errors",
        "snapshotter.options",
        "snapshotter.special_addresses",
        "snapshotter.times",
        "snapshotter.version",
        "verifier",
        "verifier.closest",
        "verifier.errors",
        "verifier.status",
    }
)
# The typed ORM's mapped classes and the queries of them: a command that only reads and writes
# plain rows through the Core tables (``records.tables``, ``records.rows``) never builds the
# mappers, the largest part of a one-citation ``snap verify`` above the ORM's import (issue 25).
ORM_MODELS = ("records.models", "records.repository", "records.emit")
# The HTTP service and the queue: loaded by ``snap serve`` and ``snap worker`` (or --enqueue) only.
SERVICE = ("fastapi", "starlette", "uvicorn", "prometheus_client", "pydantic", "snap.service")
QUEUE = ("celery", "kombu", "redis", "snap.workers")
# The provider adapters: only an input in a provider's format needs its parser.
PROVIDER_ADAPTERS = (
    "records.inputs.anthropic",
    "records.inputs.gemini",
    "records.inputs.openai",
    "records.inputs.perplexity",
)
# Signing and time-stamping: only with a key or a TSA configured, or a signature or token to
# check (the homes below have neither: every command that records still makes a checkpoint).
SIGNING = ("cryptography", "rfc3161_client", "records.attest.signing", "records.attest.timestamps")
# What no command below uses, on an embedded SQLite database and a folder store.
NEVER_HERE = (*NOT_FOR_SQLITE, *NOT_FOR_FOLDER, *PDF_EXTRACTION, *SERVICE, *QUEUE, *SIGNING)


def loaded(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run ``snap ARGS`` in a fresh interpreter (embedded SQLite + folder store in tmp_path)."""
    listing = tmp_path / "modules.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SNAP_", "AWS_"))}
    env["SNAP_HOME"] = str(tmp_path / "home")
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, str(listing), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done, set(json.loads(listing.read_text()))


def present(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


def test_version_loads_no_command_line_at_all(tmp_path: Path) -> None:
    done, modules = loaded(tmp_path, "--version")
    assert done.returncode == 0
    assert done.stdout == VERSION_LINE + "\n"
    assert present(modules, (*HEAVY, "click", "regex", "records", "verifier")) == []
    # the version lives in the lowest layer that reports it (WARC records, manifests)
    assert present(modules, ("snapshotter",)) == ["snapshotter", "snapshotter.version"]


def test_the_fast_version_line_is_clicks(tmp_path: Path) -> None:
    assert CliRunner().invoke(cli, ["--version"]).output == VERSION_LINE + "\n"


def test_help_loads_no_backend(tmp_path: Path) -> None:
    done, modules = loaded(tmp_path, "--help")
    assert done.returncode == 0
    assert "Usage: snap" in done.stdout
    assert present(modules, (*HEAVY, *MATCHING)) == []
    layers = present(modules, ("records", "snapshotter", "verifier"))
    assert [module for module in layers if module not in FOUNDATIONS] == []


@pytest.fixture
def captured_text(tmp_path: Path) -> tuple[Path, str]:
    """A plain-text file captured once (which creates and migrates the database)."""
    source = tmp_path / "note.txt"
    source.write_text("The origin serves only 1 request in 10 when the hit ratio is 90 percent.")
    done, _ = loaded(tmp_path, "fetch", "--json", str(source))
    assert done.returncode == 0, done.stderr
    return source, json.loads(done.stdout)["snapshotId"]


def test_fetch_of_text_on_sqlite(tmp_path: Path, captured_text: tuple[Path, str]) -> None:
    done, modules = loaded(tmp_path, "fetch", str(captured_text[0]))
    assert done.returncode == 0, done.stderr
    assert "sqlalchemy.orm" in modules  # it really recorded the capture
    assert "snapshotter.extract.text" in modules
    unneeded = (*NOT_FOR_SQLITE, *NOT_FOR_FOLDER, *HTML_EXTRACTION, *PDF_EXTRACTION, *SIGNING)
    assert present(modules, unneeded) == []


def test_verify_on_sqlite(tmp_path: Path, captured_text: tuple[Path, str]) -> None:
    citation = tmp_path / "citation.json"
    quote = {"exact": "serves only 1 request in 10"}
    citation.write_text(json.dumps({"snapshotId": captured_text[1], "selector": {"quote": quote}}))
    done, modules = loaded(tmp_path, "verify", str(citation))
    assert done.returncode == 0, done.stderr + done.stdout
    assert "quote found" in done.stdout
    unneeded = (*NOT_FOR_SQLITE, *NOT_FOR_FOLDER, *EXTRACTION, *SIGNING, "snapshotter.fetch")
    assert present(modules, (*unneeded, *CAPTURING, *ORM_MODELS)) == []
    assert "records.tables" in modules  # the control: it read and recorded through the tables


def test_verify_of_a_captured_page_on_sqlite(tmp_path: Path) -> None:
    """What the start-up benchmark times: verify against an HTML capture loads no extractor
    (the text is stored), although fetching that page loaded trafilatura and lxml."""
    done, _ = loaded(tmp_path, "fetch", "--json", str(EXAMPLES / "cdn-caching.html"))
    assert done.returncode == 0, done.stderr
    citation = tmp_path / "citation.json"
    quote = {"exact": "the origin serves only 1 request in 10"}
    snapshot_id = json.loads(done.stdout)["snapshotId"]
    citation.write_text(json.dumps({"snapshotId": snapshot_id, "selector": {"quote": quote}}))
    done, modules = loaded(tmp_path, "verify", str(citation))
    assert done.returncode == 0, done.stderr + done.stdout
    assert "quote found" in done.stdout
    unneeded = (*NOT_FOR_SQLITE, *NOT_FOR_FOLDER, *EXTRACTION, *SIGNING, "snapshotter.fetch")
    assert present(modules, (*unneeded, *CAPTURING, *ORM_MODELS)) == []
    assert "records.tables" in modules  # the control: it read and recorded through the tables


def test_fetch_of_html_loads_the_html_extractor_only(tmp_path: Path) -> None:
    """The control: the check above can fail, because HTML does load trafilatura."""
    done, modules = loaded(tmp_path, "fetch", str(EXAMPLES / "cdn-caching.html"))
    assert done.returncode == 0, done.stderr
    assert "trafilatura" in modules
    assert "snapshotter.extract.html" in modules
    # the first command on a new database migrates it, so Alembic is loaded here
    assert present(modules, ("psycopg", *NOT_FOR_FOLDER, *PDF_EXTRACTION)) == []


# Every command, run for real on an embedded home with one captured text and one recorded
# check: what it must load (the control that it did the work) and what it may load beyond
# NEVER_HERE's exclusions (Alembic for ``db upgrade``, the text extractor for ``reextract``).
COMMANDS = {
    "verify": (
        ("verify", "{citation}"),
        ("sqlalchemy.orm", "verifier.matcher", "records.tables", "records.rows"),
        (),
    ),
    "show": (("show", "{snapshot}"), ("sqlalchemy.orm",), ()),
    "audit": (("audit", "--url", "{url}"), ("sqlalchemy.orm",), ()),
    "fsck": (("fsck",), ("sqlalchemy.orm",), ()),
    "reverify": (("reverify", "--url", "{url}"), ("sqlalchemy.orm", "verifier.matcher"), ()),
    "jobs": (("jobs",), ("sqlalchemy.orm",), ()),
    # attest and export hand over the proofs (tokens and signatures, checked), keys the key
    "attest": (("attest", "{snapshot}"), ("sqlalchemy.orm", "records.attest.attest"), SIGNING),
    "export": (
        ("export", "--format", "warc", "-o", "{archive}", "--url", "{url}"),
        ("sqlalchemy.orm", "warcio"),
        SIGNING,
    ),
    # an imported record is stored as a fetched one is (snapshotter.fetch's Fetched)
    "import": (("import", "{archive}"), ("sqlalchemy.orm", "warcio"), ("snapshotter.fetch",)),
    "reextract": (
        ("reextract", "--url", "{url}"),
        ("sqlalchemy.orm", "snapshotter.extract.text"),
        ("snapshotter.extract.sniff", "snapshotter.extract.text"),
    ),
    "log": (("log", "verify"), ("sqlalchemy.orm", "records.attest.log_checks"), ()),
    "keys": (("keys", "show"), (), SIGNING),
    "store": (("store", "init"), ("snapshotter.store.local",), ()),
    "db": (("db", "upgrade"), ("sqlalchemy",), ("alembic",)),
    # the servers and the worker are started by other tests; here only their --help, which
    # must load none of what serving needs
    "serve": (("serve", "--help"), (), ()),
    "mcp": (("mcp", "--help"), (), ()),
    "worker": (("worker", "--help"), (), ()),
}


# The commands that check no quote and make no capture: they load neither the matcher (its
# patterns cost more to compile than the rest of such a command's own code) nor the capture code.
CHECKS_NO_QUOTE = frozenset({"show", "audit", "fsck", "attest", "log", "keys", "store", "db"})
# The commands that read and write plain rows only: they never import the ORM's models.
PLAIN_ROWS = frozenset({"verify"})


def command_module(name: str) -> str:
    return COMMAND_TABLE[name].partition(":")[0]


# The helpers that hand a batch to workers live beside snap worker and snap jobs; fetch,
# reextract and reverify (--enqueue) use them.
SHARED_COMMAND_MODULES = frozenset({"snap.commands.batches"})


def test_each_command_is_loaded_under_its_name() -> None:
    """The lazy table and the commands agree: each entry is a command of that name."""
    for name in COMMAND_TABLE:
        command = cli.get_command(click.Context(cli), name)
        assert isinstance(command, click.Command)
        assert command.name == name


def test_the_table_names_every_command() -> None:
    """A new command cannot be added without its line above (fetch has tests of its own)."""
    assert {*COMMANDS, "fetch"} == set(subcommands(cli)), "add the command to COMMANDS"


@pytest.mark.parametrize(("command", "uses", "allowed"), COMMANDS.values(), ids=list(COMMANDS))
def test_each_command_loads_what_it_uses_and_nothing_else(
    tmp_path: Path,
    captured_text: tuple[Path, str],
    command: tuple[str, ...],
    uses: tuple[str, ...],
    allowed: tuple[str, ...],
) -> None:
    """The list per command: none loads the service, the queue, boto3, an extractor it does not
    run or a provider's adapter for a file in snap's own format; each loads what it uses (the
    control: the listing is of a process that did the work)."""
    source, snapshot_id = captured_text
    citation = tmp_path / "citation.json"
    quote = {"exact": "serves only 1 request in 10"}
    citation.write_text(json.dumps({"snapshotId": snapshot_id, "selector": {"quote": quote}}))
    done, _ = loaded(tmp_path, "verify", str(citation))  # something to audit and reverify
    assert done.returncode == 0, done.stderr
    archive = tmp_path / "out.warc.gz"
    if command[0] == "import":
        done, _ = loaded(
            tmp_path, "export", "--format", "warc", "-o", str(archive), "--url", source.as_uri()
        )
        assert done.returncode == 0, done.stderr
    values = {
        "citation": str(citation),
        "snapshot": snapshot_id,
        "url": source.as_uri(),
        "archive": str(archive),
    }
    done, modules = loaded(tmp_path, *(part.format(**values) for part in command))
    assert done.returncode in (0, 1, 2), done.stderr
    assert "internal error" not in done.stderr
    assert all(present(modules, (name,)) for name in uses), uses
    unneeded = (*NEVER_HERE, *EXTRACTION, *PROVIDER_ADAPTERS, "snapshotter.fetch")
    if command[0] in CHECKS_NO_QUOTE:
        unneeded = (*unneeded, *MATCHING, *CAPTURING)
    if command[0] in PLAIN_ROWS:
        unneeded = (*unneeded, *ORM_MODELS)
    # only the invoked command's options are built: no other family of commands is imported
    own = command_module(command[0])
    assert own in modules
    others = {command_module(name) for name in COMMAND_TABLE} - {own, *SHARED_COMMAND_MODULES}
    unneeded = (*unneeded, *others)
    assert present(modules, tuple(n for n in unneeded if n not in allowed)) == []


def test_a_provider_file_loads_its_own_adapter_only(tmp_path: Path) -> None:
    """The control for the check above: an Anthropic response loads the Anthropic adapter."""
    message = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": "A claim.", "citations": []}],
    }
    answer = tmp_path / "answer.json"
    answer.write_text(json.dumps(message))
    done, modules = loaded(tmp_path, "verify", str(answer))
    assert "records.inputs.anthropic" in modules, done.stderr
    others = tuple(name for name in PROVIDER_ADAPTERS if not name.endswith("anthropic"))
    assert present(modules, (*others, *SERVICE, *QUEUE)) == []
