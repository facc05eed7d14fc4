"""Temporary capture files: created locked, and swept when a killed capture left them behind.

A capture streams its body into ``snap-fetch-*`` in the temporary folder.  A process killed
with ``kill -9`` cannot delete it, so the next capture (and ``snap fsck --repair``) removes
such files, but only when two things say the owner is gone: the file is older than
``STALE_AGE`` seconds, and nobody holds the ``flock`` every live capture keeps on its file
until the file is deleted.  The lock alone would do; the age is a second guard for file
systems where ``flock`` is not shared between processes.

A process that ends normally, Ctrl-C included, deletes the files it still holds when the
interpreter exits (``_delete_held``): a fetch cut short on a daemon thread (``snap fetch
--from`` fetches ahead on such threads) never gets to delete its own, and would otherwise
leave it for the sweep.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import stat
import tempfile
import threading
import time
from pathlib import Path
from typing import BinaryIO

PREFIX = "snap-fetch-"
STALE_AGE = 15 * 60.0  # seconds; a live capture's file is also locked, so this is a backstop


def create_locked(workdir: Path | None) -> tuple[Path, BinaryIO]:
    """A new ``snap-fetch-*`` file, opened for writing and exclusively locked by this process.

    The lock lasts as long as the returned file object is open.
    """
    descriptor, name = tempfile.mkstemp(prefix=PREFIX, dir=workdir)
    fcntl.flock(descriptor, fcntl.LOCK_EX)  # a new file: nobody else can hold it yet
    path = Path(name)
    with _held_lock:
        _held[path] = os.getpid()
    return path, os.fdopen(descriptor, "wb")


def discard(path: Path) -> None:
    """Delete a capture file ``create_locked`` made; it is no longer held."""
    path.unlink(missing_ok=True)
    with _held_lock:
        _held.pop(path, None)


# The capture files this process made and has not deleted, each with the id of the process that
# made it: a forked child (a Celery worker's pool process) inherits the table, and must never
# delete its parent's files at its own exit.
_held: dict[Path, int] = {}
_held_lock = threading.Lock()


def _in_forked_child() -> None:
    """A fork may happen while another thread holds the lock: the child gets a new one."""
    global _held_lock
    _held_lock = threading.Lock()


os.register_at_fork(after_in_child=_in_forked_child)


@atexit.register
def _delete_held() -> None:
    """At the interpreter's exit, delete the capture files this process still holds: the
    bodies of fetches cut short on daemon threads, which die with the process."""
    me = os.getpid()
    with _held_lock:
        paths = [path for path, owner in _held.items() if owner == me]
    for path in paths:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)


def stale_temp_files(workdir: Path | None = None, *, min_age: float = STALE_AGE) -> list[Path]:
    """Capture files of this user older than ``min_age`` that no live process holds locked."""
    folder = Path(workdir or tempfile.gettempdir())
    try:
        candidates = [entry for entry in folder.iterdir() if entry.name.startswith(PREFIX)]
    except OSError:
        return []
    return sorted(path for path in candidates if _is_stale(path, min_age))


def _is_stale(path: Path, min_age: float) -> bool:
    try:
        info = path.lstat()
    except OSError:
        return False
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
        return False
    if time.time() - info.st_mtime < min_age:
        return False
    return _unlocked(path)


def _unlocked(path: Path) -> bool:
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False  # a live capture holds it
    finally:
        os.close(descriptor)
    return True


def remove_stale_temp_files(
    workdir: Path | None = None, *, min_age: float = STALE_AGE
) -> list[Path]:
    """Delete what ``stale_temp_files`` finds; returns the paths actually removed."""
    removed = []
    for path in stale_temp_files(workdir, min_age=min_age):
        try:
            path.unlink()
        except OSError:
            continue
        removed.append(path)
    return removed
