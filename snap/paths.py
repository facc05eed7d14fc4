"""Path arguments of the command line, checked when they are parsed.

A folder, a FIFO, a socket, a device, a missing or unreadable file where snap reads a file, or a
folder or FIFO where it writes one, is unusable input: an ``InputError`` (one line naming the
path, as JSON too with ``--json``, exit 2) before anything is read, recorded or written. (The
readers check again when they open the file: the path may change in between, and library
callers do not come through here.)
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import click

from snap.errors import InputError

STDIN = "-"


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device"


class CheckedPath(click.Path):
    """A path checked when it is parsed: ``problem`` says why it cannot be used, and that is
    one line and exit 2 (``InputError``) before anything is read, recorded or written."""

    def problem(self, path: Path) -> str | None:
        raise NotImplementedError

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        text = os.fsdecode(value) if isinstance(value, (bytes, os.PathLike)) else str(value)
        problem = self.problem(Path(text))
        if problem is not None:
            raise InputError(f"{named(param)}{text}: {problem}")
        return Path(text)


class InputFile(CheckedPath):
    """A regular file snap can open for reading (or ``-``, standard input, where allowed)."""

    name = "file"

    def __init__(self, *, allow_stdin: bool = False) -> None:
        super().__init__(path_type=Path, allow_dash=allow_stdin)
        self.allow_stdin = allow_stdin

    def problem(self, path: Path) -> str | None:
        if self.allow_stdin and str(path) == STDIN:
            return None
        return input_problem(path)


class OutputFile(CheckedPath):
    """A path snap can create or replace a regular file at."""

    name = "file"

    def __init__(self) -> None:
        super().__init__(path_type=Path)

    def problem(self, path: Path) -> str | None:
        return output_problem(path)


class OutputFolder(CheckedPath):
    """A folder snap can write files into: one that exists, or a new one it can create."""

    name = "folder"

    def __init__(self) -> None:
        super().__init__(path_type=Path, file_okay=False)

    def problem(self, path: Path) -> str | None:
        return output_folder_problem(path)


def named(param: click.Parameter | None) -> str:
    """An option is named before its value (``--documents x.json: …``); an argument is not."""
    return f"{param.opts[0]} " if isinstance(param, click.Option) else ""


def input_problem(path: Path) -> str | None:
    """Why ``path`` cannot be read as a file, or None. Opening it is the only honest test of
    permission (``os.access`` answers for the real user id, and yes for root)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return "a dangling symbolic link" if path.is_symlink() else "no such file"
    except (OSError, ValueError) as error:
        return f"cannot be read: {getattr(error, 'strerror', None) or error}"
    if stat.S_ISDIR(info.st_mode):
        return "is a folder; give a file"
    if not stat.S_ISREG(info.st_mode):
        return f"not a regular file ({_kind(info.st_mode)}); give a file"
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)))
    except OSError as error:
        return f"cannot be read: {error.strerror or error}"
    return None


def output_folder_problem(path: Path) -> str | None:
    """Why no files can be written into the folder ``path`` (made if it does not exist), or
    None."""
    try:
        info = path.stat()
    except FileNotFoundError:
        info = None
    except (OSError, ValueError) as error:
        return f"cannot be written: {getattr(error, 'strerror', None) or error}"
    if info is not None and not stat.S_ISDIR(info.st_mode):
        kind = "a file" if stat.S_ISREG(info.st_mode) else _kind(info.st_mode)
        return f"not a folder ({kind}); give the folder to write into"
    if info is None and path.is_symlink():
        return "a dangling symbolic link; give the folder to write into"
    writable = path if info is not None else path.absolute().parent
    if not writable.is_dir():
        return "cannot write there: no such folder"
    if not os.access(writable, os.W_OK):
        return "cannot write there: the folder is not writable"
    return None


def output_problem(path: Path) -> str | None:
    """Why no regular file can be written at ``path``, or None."""
    try:
        info = path.stat()
    except FileNotFoundError:
        info = None
    except (OSError, ValueError) as error:
        return f"cannot be written: {getattr(error, 'strerror', None) or error}"
    if info is not None and stat.S_ISDIR(info.st_mode):
        return "is a folder; give the path of the file to write"
    if info is not None and not stat.S_ISREG(info.st_mode):
        return f"not a regular file ({_kind(info.st_mode)}); give the path of a file to write"
    if info is None and path.is_symlink():
        return "a dangling symbolic link; give the path of a file to write"
    folder = path.absolute().parent
    if not folder.is_dir():
        return "cannot write there: no such folder"
    if not os.access(folder, os.W_OK):
        return "cannot write there: the folder is not writable"
    return None
