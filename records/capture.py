"""Capturing a source and recording the attempt, stored or failed."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy.orm import Session

from records.repository import record_failed_capture, record_snapshot
from records.workspace import Workspace
from snapshotter.capture import SnapshotRecord, capture
from snapshotter.errors import CaptureError, ConfigError, InputError, SnapError
from snapshotter.weburl import InvalidURL, has_web_scheme, web_url


def capture_source(
    workspace: Workspace,
    target: str,
    *,
    claim: Callable[[Session, SnapshotRecord], bool] | None = None,
    web_only: bool = False,
) -> SnapshotRecord:
    """Fetch, extract and store ``target``, then record the capture and its snapshot.

    A capture that fails for any reason is recorded as a failed capture before the error is
    raised again: an auditor asking "what did snap see at that URL?" must see the failure too.
    Only input that never became a capture attempt (an empty target, a missing local file, a
    FIFO) is not recorded.  An unexpected error is recorded and raised as a CaptureError, so
    one bad source never ends a run with an internal error.

    ``claim`` (workers) runs in the transaction that records the capture; when it returns False
    (another delivery of the same task recorded it first) nothing is recorded: the blobs are
    content-addressed, so storing them twice changed nothing either.

    ``web_only`` (the HTTP service, model output, the workers): ``target`` must be an absolute
    http(s) URL with a host; a local path or ``file:`` URL is refused (InputError, exit 2).
    """
    try:
        record = capture(target, workspace.store, workspace.fetch_options, web_only=web_only)
    except (InputError, ConfigError):
        raise
    except CaptureError as error:
        _record_failure(workspace, target, error)
        raise
    except SnapError as error:  # the store failed: recorded, and still exit 3
        _record_failure(workspace, target, CaptureError(error.message, url=target))
        raise
    except Exception as error:
        summary = f"{type(error).__name__}: {error}"[:300]
        failure = CaptureError(f"could not capture {target[:300]}: {summary}", url=target)
        _record_failure(workspace, target, failure)
        raise failure from error
    with workspace.db.session() as session:
        if claim is None or claim(session, record):
            record_snapshot(session, record)
    return record


def web_url_refusal(target: str, not_web: str) -> str | None:
    """Why ``target`` is not captured on behalf of model output, or None when it may be: only
    absolute http(s) URLs with a host, so a model naming a local path (or ``http:x.txt``)
    never makes snap read a file on this machine. ``not_web`` is the line for a target that
    is no http(s) URL at all."""
    if not has_web_scheme(target):
        return not_web
    try:
        web_url(target)
    except InvalidURL as error:
        return error.message
    return None


def _record_failure(workspace: Workspace, target: str, error: CaptureError) -> None:
    with workspace.db.session() as session:
        record_failed_capture(session, target, error)
