"""One queue-or-run rule for a re-verification, whoever submits it (snap/reverify_submission.py):
the command line queues only when asked and refuses what cannot be queued; the service queues
whenever a broker is configured and the request can be queued. Both answer a filter that
matches nothing with the same line."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from snap.config import Settings
from snap.errors import InputError
from snap.reverify_submission import (
    CANNOT_QUEUE,
    NOTHING_MATCHES,
    Queueing,
    ReverifyRequest,
    queued,
)
from tests.db_support import ready_home
from tests.snap_cli import run_snap

PLAIN = ReverifyRequest(url="https://example.test/a", since=datetime(2026, 11, 5, tzinfo=UTC))
REFETCH = ReverifyRequest(refetch=True)
CONTINUED = ReverifyRequest(run_id="0123456789abcdef")


def workspace_with(tmp_path: Path, *, broker: bool) -> Any:
    env = {"SNAP_HOME": str(tmp_path / "home")}
    if broker:
        env["SNAP_BROKER_URL"] = "redis://127.0.0.1:6379/3"
    return SimpleNamespace(config=Settings.from_env(env))


@pytest.mark.parametrize(
    ("queueing", "broker", "expected"),
    [
        (Queueing.ASKED, False, [True, CANNOT_QUEUE, CANNOT_QUEUE]),
        (Queueing.ASKED, True, [True, CANNOT_QUEUE, CANNOT_QUEUE]),
        (Queueing.WITH_BROKER, False, [False, False, False]),
        (Queueing.WITH_BROKER, True, [True, False, False]),
        (Queueing.NEVER, False, [False, False, False]),
        (Queueing.NEVER, True, [False, False, False]),
    ],
)
def test_the_one_rule(
    tmp_path: Path, queueing: Queueing, broker: bool, expected: list[bool | str]
) -> None:
    workspace = workspace_with(tmp_path, broker=broker)
    found: list[bool | str] = []
    for request in (PLAIN, REFETCH, CONTINUED):
        try:
            found.append(queued(workspace, request, queueing))
        except InputError as error:
            found.append(error.message)
    assert found == expected


def test_the_batch_records_the_filters_as_given() -> None:
    assert PLAIN.params() == {"url": "https://example.test/a", "since": "2026-11-05T00:00:00+00:00"}
    assert ReverifyRequest().params() == {"url": None, "since": None}


def test_the_command_line_says_what_the_service_says(tmp_path: Path, sqlite_template: Path) -> None:
    home = ready_home(tmp_path / "home", sqlite_template)
    env = {"SNAP_HOME": str(home), "PATH": "/usr/bin:/bin"}
    for args in (
        ["reverify", "--url", "https://nothing.test/"],
        ["reverify", "--enqueue", "--since", "2026-01-01"],
    ):
        done = run_snap(args, env)
        assert (done.returncode, done.stderr) == (1, f"snap: error: {NOTHING_MATCHES}\n")
    refused = run_snap(["reverify", "--enqueue", "--refetch"], env)
    assert (refused.returncode, refused.stderr) == (2, f"snap: error: {CANNOT_QUEUE}\n")
