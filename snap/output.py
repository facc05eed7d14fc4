"""Standard output and standard error, watched while a command runs, so that the shell can tell
a failure to write them from the same error met elsewhere.

A write that fails (the reader of a pipe gone, a full disk, an I/O error) raises OSError out of
``click.echo`` deep inside a command. So can a socket, or a file a library writes, and those are
not the output's failure: they are a bug, or another layer's error to report. An errno cannot
tell the two apart (EPIPE comes from sockets too), so for the run of a command each standard
stream, and its binary buffer, is a proxy that notes the OSError its own write or flush raised;
``snap.cli`` asks it whether the error that ended the command was one of those.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any, Literal, NoReturn, TextIO, cast

from snap.errors import OutputError, exit_code_of

StreamName = Literal["stdout", "stderr"]
# 128 + SIGPIPE: what a shell reports for a process a closed pipe ended (``yes | head -1``).
BROKEN_PIPE_EXIT = 141


class WatchedStream:
    """A standard stream (or its binary buffer) as it is, except that an OSError raised by its
    ``write``, ``writelines`` or ``flush`` is noted in ``failures`` under its name before it
    propagates unchanged (whoever catches OSError meanwhile sees what it always saw)."""

    def __init__(self, stream: Any, name: StreamName, failures: dict[StreamName, OSError]) -> None:
        self._stream = stream
        self._name = name
        self._failures = failures
        self._buffer: WatchedStream | None = None

    def write(self, data: Any) -> Any:
        try:
            return self._stream.write(data)
        except OSError as error:
            self._failures[self._name] = error
            raise

    def writelines(self, lines: Any) -> None:
        try:
            self._stream.writelines(lines)
        except OSError as error:
            self._failures[self._name] = error
            raise

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as error:
            self._failures[self._name] = error
            raise

    @property
    def buffer(self) -> WatchedStream:
        """The binary stream under a text one (``snap show --raw`` writes bytes), watched too;
        AttributeError, as for the stream itself, when it has none."""
        if self._buffer is None:
            self._buffer = WatchedStream(self._stream.buffer, self._name, self._failures)
        return self._buffer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class WatchedOutput:
    """The standard streams being watched, and what their writes raised: the last OSError of
    each."""

    def __init__(self, streams: dict[StreamName, Any]) -> None:
        self.streams = streams
        self.failures: dict[StreamName, OSError] = {}

    def stream_failed_by(self, error: BaseException) -> StreamName | None:
        """The stream whose write raised ``error`` (the very exception, not one like it)."""
        for name, failure in self.failures.items():
            if failure is error:
                return name
        return None

    def discard_failed(self) -> None:
        """Point each failed stream's file descriptor at the null device.

        What is left in its buffer, and whatever is written to it until the process ends, is
        then discarded rather than failing again: Python flushes the standard streams as it
        shuts down (after exit hooks that may write), and a write that fails there prints
        ``Exception ignored … BrokenPipeError`` and may turn the exit code into 120, as
        Python's documentation on SIGPIPE warns. A stream without a descriptor of its own
        (click's test runner) is left alone."""
        for name in self.failures:
            to_null_device(self.streams[name])


def to_null_device(stream: Any) -> None:
    """Point ``stream``'s file descriptor at the null device (see ``discard_failed``); a stream
    without a descriptor of its own is left alone."""
    with suppress(OSError, ValueError, AttributeError):
        descriptor = stream.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, descriptor)
        finally:
            os.close(null)


def output_error(stream: StreamName, error: OSError) -> OutputError:
    """Why ``stream`` could not be written, as the one line snap prints for it."""
    what = "the output" if stream == "stdout" else "standard error"
    return OutputError(f"cannot write {what}: {error.strerror or error}")


def unwritable_before_cli(error: OSError) -> NoReturn:
    """The end of ``snap --version``, answered before click loads, when its line cannot be
    written: as a command's output ends (``snap.cli``), a closed pipe quietly with
    ``BROKEN_PIPE_EXIT``, any other failure with ``output_error``'s line and its exit code."""
    to_null_device(sys.stdout)
    if isinstance(error, BrokenPipeError):
        raise SystemExit(BROKEN_PIPE_EXIT)
    failure = output_error("stdout", error)
    with suppress(OSError):
        sys.stderr.write(f"snap: error: {failure.message}\n")
    raise SystemExit(exit_code_of(failure))


@contextmanager
def watched_output() -> Iterator[WatchedOutput]:
    """``sys.stdout`` and ``sys.stderr`` watched inside the block, as they were afterwards (a
    stream that is None, its descriptor closed when Python started, stays None)."""
    saved_stdout, saved_stderr = sys.stdout, sys.stderr
    output = WatchedOutput({"stdout": saved_stdout, "stderr": saved_stderr})
    if saved_stdout is not None:
        sys.stdout = cast(TextIO, WatchedStream(saved_stdout, "stdout", output.failures))
    if saved_stderr is not None:
        sys.stderr = cast(TextIO, WatchedStream(saved_stderr, "stderr", output.failures))
    try:
        yield output
    finally:
        sys.stdout, sys.stderr = saved_stdout, saved_stderr
