"""Files written where the user says (``snap export -o``, ``snap show -o``, ``snap verify
--emit``), all by the same rule, so that no command loses a file another one would keep.

A file that is already there is refused unless the command was given ``--force``: the user may
have named the wrong file, and what was there cannot be had back. The file appears whole or
not at all: it is written to a temporary file beside the target, flushed to disk, and only then
linked into place (``os.link`` refuses an existing file, so two writers cannot overwrite each
other; ``--force`` replaces instead). Any failure on the way removes the temporary file and
leaves whatever was at the target as it was.

A target that cannot be written for what the user chose (no such folder, no permission, a file
already there) is unusable input, ``InputError``; a write that fails on the way (a full disk, a
quota, an I/O error) is ``OutputError``, as standard output's is.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from records.errors import OutputError
from snapshotter.errors import InputError, SnapError

# What a write meets when the disk, not the user's choice, is the problem.
_NO_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS})


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
        temporary = _new_temporary(out)
    except OSError as error:
        raise _unwritable(out, error) from None
    try:
        try:
            yield temporary
        except OSError as error:
            if error.errno not in _NO_ROOM:
                raise
            raise _unwritable(out, error) from None
        _put_in_place(temporary, out, force=force)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()


def _new_temporary(out: Path) -> Path:
    """An empty file beside ``out`` with the mode a new file gets here, 0666 less the umask,
    as the shell's ``>`` makes it (``mkstemp``'s 0600 would keep an evidence file from the
    group it is written for), or the mode of the file ``--force`` replaces."""
    folder, kept = out.resolve().parent, _mode_of(out)
    while True:
        temporary = folder / f".{out.name}.{secrets.token_hex(6)}.tmp"
        try:
            handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        except FileExistsError:
            continue
        try:
            if kept is not None:
                os.fchmod(handle, kept)
        finally:
            os.close(handle)
        return temporary


def _mode_of(path: Path) -> int | None:
    """The permission bits of the regular file at ``path``, or None when there is none."""
    try:
        info = path.stat()
    except OSError:
        return None
    return stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else None


def write_file(path: Path, data: bytes, *, force: bool) -> None:
    """``data`` as the whole of ``path``, by the rule above."""
    with staged(path, force=force) as temporary:
        try:
            temporary.write_bytes(data)
        except OSError as error:
            raise _unwritable(path, error) from None


def write_files_into(folder: Path, pieces: dict[str, bytes], *, force: bool) -> list[Path]:
    """Each of ``pieces`` (file name -> bytes) as a file in ``folder``, made if missing. A file
    already there with the same bytes is kept as it is, so writing the same evidence twice
    into one folder just works; one with other bytes is refused, before anything is written,
    unless ``force``: it may be a proof or checkpoint someone was given, and an older one still
    checks."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise _unwritable(folder, error) from None
    paths = {name: folder / name for name in pieces}
    differing = [name for name, data in pieces.items() if not _holds(paths[name], data)]
    replaced = [paths[name] for name in differing if paths[name].exists()]
    if replaced and not force:
        more = f" (and {len(replaced) - 1} more)" if len(replaced) > 1 else ""
        raise InputError(
            f"{replaced[0]} exists with other content{more}; give --force to replace it"
        )
    for name in differing:
        write_file(paths[name], pieces[name], force=force)
    return list(paths.values())


def _holds(path: Path, data: bytes) -> bool:
    """Whether ``path`` is a file holding exactly ``data``."""
    try:
        return path.is_file() and path.stat().st_size == len(data) and path.read_bytes() == data
    except OSError:
        return False


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


def _unwritable(path: Path, error: OSError) -> SnapError:
    message = f"cannot write {path}: {error.strerror or error}"
    if error.errno in _NO_ROOM:
        return OutputError(message)
    return InputError(message)
