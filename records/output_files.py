"""Files written where the user says (``snap export -o``, ``snap show -o``, ``snap verify
--emit``), all by the same rule, so that no command loses a file another one would keep.

A file that is already there is refused unless the command was given ``--force``: the user may
have named the wrong file, and what was there cannot be had back. The file appears whole or
not at all: it is written to a temporary file beside the target, flushed to disk, and only then
linked into place (``os.link`` refuses an existing file, so two writers cannot overwrite each
other; ``--force`` replaces instead). Any failure on the way removes the temporary file and
leaves whatever was at the target as it was.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from snapshotter.errors import InputError


def check_output(path: Path, *, force: bool) -> None:
    """Before anything is read: the target can be written, and is not there unless forced."""
    folder = path.resolve().parent
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        raise InputError(f"{path}: cannot write there (no such folder, or not writable)")
    if path.is_dir():
        raise InputError(f"{path} is a folder; give the path of the file to write")
    if path.exists() and not force:
        raise InputError(f"{path} exists; give --force to replace it")


@contextmanager
def staged(out: Path, *, force: bool) -> Iterator[Path]:
    """A temporary path beside ``out``, put in place only when the body finishes."""
    try:
        handle, name = tempfile.mkstemp(
            dir=out.resolve().parent, prefix=f".{out.name}.", suffix=".tmp"
        )
    except OSError as error:
        raise _unwritable(out, error) from None
    os.close(handle)
    temporary = Path(name)
    try:
        yield temporary
        _put_in_place(temporary, out, force=force)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()


def write_file(path: Path, data: bytes, *, force: bool) -> None:
    """``data`` as the whole of ``path``, by the rule above."""
    with staged(path, force=force) as temporary:
        try:
            temporary.write_bytes(data)
        except OSError as error:
            raise _unwritable(path, error) from None


def _put_in_place(temporary: Path, out: Path, *, force: bool) -> None:
    try:
        with temporary.open("rb+") as written:
            os.fsync(written.fileno())
        if force:
            temporary.replace(out)
        else:
            os.link(temporary, out)
    except FileExistsError:
        raise InputError(f"{out} exists; give --force to replace it") from None
    except OSError as error:
        raise _unwritable(out, error) from None


def _unwritable(path: Path, error: OSError) -> InputError:
    return InputError(f"cannot write {path}: {error.strerror or error}")
