"""The one reader for every file or stream snap reads as input (citations, answers, model
responses, document maps).

Every input may be hostile (it is model output, or chosen by one), so reading is bounded before
anything is parsed: only a regular file or standard input (a FIFO or device given by name would
block or never end), at most ``SNAP_MAX_INPUT_BYTES`` bytes (default 64 MiB), JSON nested at
most ``MAX_DEPTH`` deep, numbers of at most ``MAX_NUMBER_DIGITS`` digits and finite, and text
that a database can store (no NUL, no lone UTF-16 surrogate). Each refusal is one
``InputError`` line naming the file.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO, Final

from records.errors import InputTooLarge
from snapshotter.errors import ConfigError, InputError

DEFAULT_MAX_INPUT_BYTES: Final = 64 * 1024 * 1024
MAX_DEPTH: Final = 64
MAX_NUMBER_DIGITS: Final = 100  # Python refuses int() of more than 4,300 digits with ValueError
STDIN: Final = "-"
# the only ways strict JSON from valid UTF-8 can carry a NUL or a lone surrogate
SUSPECT_ESCAPE: Final = re.compile(r"\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})")


def max_input_bytes(environ: Mapping[str, str] | None = None) -> int:
    """``SNAP_MAX_INPUT_BYTES``: a whole number of bytes, at least 1."""
    raw = (os.environ if environ is None else environ).get("SNAP_MAX_INPUT_BYTES")
    if raw is None or raw.strip() == "":
        return DEFAULT_MAX_INPUT_BYTES
    if not raw.strip().isdigit() or int(raw) < 1 or len(raw.strip()) > 18:
        raise ConfigError(f"SNAP_MAX_INPUT_BYTES must be a whole number of bytes, got {raw!r}")
    return int(raw)


def read_input_bytes(path: Path, limit: int | None = None) -> bytes:
    """The bytes of ``path`` (``-`` is standard input), refused past ``limit`` bytes."""
    limit = max_input_bytes() if limit is None else limit
    if str(path) == STDIN:
        return read_bounded(sys.stdin.buffer, limit, "standard input")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise InputError(f"{path}: {open_problem(error)}") from None
    try:  # checked before fdopen, which raises IsADirectoryError on a folder
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise InputError(f"{path}: is a folder; give a file")
        if not stat.S_ISREG(mode):
            raise InputError(
                f"{path}: not a regular file (a FIFO, device or socket); "
                "give a file, or pipe it to standard input as '-'"
            )
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as stream:
        return read_bounded(stream, limit, str(path))


def open_problem(error: OSError) -> str:
    if error.errno == errno.ENOENT:
        return "no such file"
    if error.errno == errno.EISDIR:
        return "is a folder; give a file"
    return f"cannot read: {error.strerror or error}"


def read_bounded(stream: BinaryIO, limit: int, name: str) -> bytes:
    try:
        data = stream.read(limit + 1)
    except OSError as error:
        raise InputError(f"{name}: cannot read: {error.strerror or error}") from None
    if len(data) > limit:
        raise InputTooLarge(
            f"{name}: larger than the input limit of {limit} bytes (SNAP_MAX_INPUT_BYTES)"
        )
    return data


def decode_text(data: bytes, name: str) -> str:
    """UTF-8, with or without a byte-order mark."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"{name}: not UTF-8 text") from None


def parse_json(text: str, *, one_line: bool = False) -> Any:
    """``json.loads`` with every number checked and the tree checked (see ``check_tree``).

    ``one_line``: ``text`` is one line of a larger file (an event's data), which names the
    line itself; an error then says the column instead."""
    try:
        document = json.loads(
            text, parse_int=safe_int, parse_float=safe_float, parse_constant=no_constant
        )
    except json.JSONDecodeError as error:
        where = f"column {error.colno}" if one_line else f"line {error.lineno}"
        raise InputError(f"not valid JSON: {error.msg} at {where}") from None
    except RecursionError:
        raise InputError(f"the JSON is nested more than {MAX_DEPTH} deep") from None
    check_tree(document, strings=may_hold_unstorable(text))
    return document


def may_hold_unstorable(text: str) -> bool:
    """Whether parsed ``text`` may hold a NUL or lone surrogate: through a ``\\u`` escape, or
    (for text not decoded from UTF-8 by this module) a raw lone surrogate."""
    if SUSPECT_ESCAPE.search(text):
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def safe_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_NUMBER_DIGITS:
        raise InputError(f"a number has more than {MAX_NUMBER_DIGITS} digits")
    return int(digits)


def safe_float(literal: str) -> float:
    if len(literal) > 4 * MAX_NUMBER_DIGITS:
        raise InputError(f"a number is written with more than {4 * MAX_NUMBER_DIGITS} characters")
    value = float(literal)
    if not math.isfinite(value):
        raise InputError(f"the number {literal[:40]} is too large")
    return value


def no_constant(name: str) -> Any:
    raise InputError(f"{name} is not a JSON number")


def check_tree(document: Any, *, strings: bool = True) -> None:
    """Depth and storable text, walked without recursion (a deep tree cannot crash the walk).

    ``strings=False`` skips the text check: strict JSON decoded from valid UTF-8 can only hold
    a NUL or a lone surrogate through a ``\\u`` escape, so text without such an escape
    needs no look at its strings (``SUSPECT_ESCAPE``).
    """
    stack: list[tuple[Any, int]] = [(document, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            refuse_unstorable(value)
            continue
        if not isinstance(value, (dict, list)):
            continue
        if depth > MAX_DEPTH:
            raise InputError(f"the JSON is nested more than {MAX_DEPTH} deep")
        children = [*value.keys(), *value.values()] if isinstance(value, dict) else value
        stack.extend(
            (child, depth + 1) for child in children if strings or isinstance(child, (dict, list))
        )


def refuse_unstorable(value: str) -> None:
    """NUL (PostgreSQL refuses it) or a lone surrogate (``\\ud800`` is valid JSON but not
    Unicode text): refused at the door rather than half-recorded."""
    problem = None
    if "\x00" in value:
        problem = "a NUL character (\\u0000)"
    else:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            problem = "a lone UTF-16 surrogate (such as \\ud800)"
    if problem is not None:
        raise InputError(f"the input contains {problem}, which is not text snap can store")


def parse_sse(text: str, first_line: int = 1) -> list[Any] | None:
    """A server-sent-events transcript (a saved streaming response) as the list of its
    ``data:`` objects; ``None`` when ``text`` is not one.

    A ``data:`` line that is not JSON is named by its line in the transcript (``first_line``
    is the number of ``text``'s first line there): the JSON parser only knows the event's own
    line, always line 1. The last one is most often a stream cut short, and is said to be."""
    lines = text.splitlines()
    if not any(line.startswith("event:") or line.startswith("data:") for line in lines[:5]):
        return None
    events = []
    last = max((n for n, line in enumerate(lines) if line.startswith("data:")), default=-1)
    for number, line in enumerate(lines):
        if line.startswith("data:"):
            payload = line.removeprefix("data:").strip()
            if payload and payload != "[DONE]":
                events.append(_event_data(payload, first_line + number, cut=number == last))
    return events


def _event_data(payload: str, line: int, *, cut: bool) -> Any:
    try:
        return parse_json(payload, one_line=True)
    except InputError as error:
        why = " (the stream is cut short inside its last event?)" if cut else ""
        raise InputError(f"line {line}, an event's data: {error.message}{why}") from None


def load_json_input(path: Path, limit: int | None = None) -> Any:
    """Read, decode and parse ``path`` within every limit; errors name the file."""
    name = "standard input" if str(path) == STDIN else str(path)
    return parse_input_bytes(read_input_bytes(path, limit), name)


def parse_input_bytes(data: bytes, name: str) -> Any:
    """Decode and parse bytes already read within the size limit (a file's, or an HTTP request
    body's): JSON, or a saved server-sent-events transcript; errors name ``name``."""
    text = decode_text(data, name)
    try:
        stripped = text.lstrip()
        if stripped.startswith(("event:", "data:")):
            events = parse_sse(stripped, 1 + text[: len(text) - len(stripped)].count("\n"))
            if events is not None:
                return events
        return parse_json(text)
    except InputError as error:
        raise InputError(f"{name}: {error.message}") from None
