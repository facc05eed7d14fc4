"""What other packages log is not snap's output: a Ctrl-C that lands while SQLAlchemy's pool
closes a connection is ``snap: interrupted`` and exit 130, not the pool's ``Exception closing
connection`` and its traceback first; SNAP_DEBUG=1 shows them, and snap's own loggers print as
they did. In real processes: logging's last resort is only reached when nothing (pytest here)
has set up a handler.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

# ``snap ARGS`` as the console script runs it, with SQLAlchemy's close of a pooled connection
# interrupted (MODE "interrupt": as Ctrl-C landing there does) or logging a warning from the
# logger MODE names before it closes.
RUNNER = """
import logging, sys
from sqlalchemy.engine.default import DefaultDialect

mode = sys.argv[1]

def close(self, connection):
    if mode == "interrupt":
        raise KeyboardInterrupt
    logging.getLogger(mode).warning("a warning from %s", mode)
    connection.close()

DefaultDialect.do_close = close
sys.argv = ["snap", *sys.argv[2:]]
from snap.entry import main
main()
"""


@pytest.fixture
def env(home_env: dict[str, str]) -> dict[str, str]:
    return home_env


def snap_with_pool_close(mode: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", RUNNER, mode, "fsck"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_ctrl_c_in_the_pool_s_close_is_only_interrupted(env: dict[str, str]) -> None:
    done = snap_with_pool_close("interrupt", env)
    assert (done.returncode, done.stderr) == (130, "snap: interrupted\n")


def test_snap_debug_shows_what_the_pool_logged(env: dict[str, str]) -> None:
    done = snap_with_pool_close("interrupt", env | {"SNAP_DEBUG": "1"})
    assert done.returncode == 130
    assert done.stderr.startswith("Exception closing connection <sqlite3.Connection")
    assert "Traceback (most recent call last):" in done.stderr
    assert done.stderr.endswith("KeyboardInterrupt\nsnap: interrupted\n")


@pytest.mark.parametrize(
    ("logger", "shown"), [("sqlalchemy.pool", False), ("snap.checkpoints", True)]
)
def test_only_snap_s_own_warnings_are_printed(
    env: dict[str, str], logger: str, shown: bool
) -> None:
    done = snap_with_pool_close(logger, env)
    assert done.returncode == 0, done.stderr
    assert done.stderr == (f"a warning from {logger}\n" if shown else "")
