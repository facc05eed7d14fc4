"""Capturing a source and recording the attempt, stored or failed."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

from sqlalchemy.orm import Session

from records.repository import record_failed_capture, record_snapshot
from records.workspace import Workspace
from snap.errors import CaptureError, ConfigError, InputError, SnapError
from snapshotter.capture import SnapshotRecord, capture


def capture_source(
    workspace: Workspace,
    target: str,
    *,
    claim: Callable[[Session, SnapshotRecord], bool] | None = None,
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
    """
    attestor = workspace.attestor  # an unusable key or TSA setting is refused before fetching
    try:
        record = capture(target, workspace.store, workspace.fetch_options)
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
    from records.attest.seal import seal  # cryptography is loaded only by commands that capture

    record = seal(attestor, workspace.store, record)  # blob and TSA I/O: no transaction
    with workspace.db.session() as session:
        if claim is None or claim(session, record):
            record_snapshot(session, record)
    return record


def _record_failure(workspace: Workspace, target: str, error: CaptureError) -> None:
    with workspace.db.session() as session:
        record_failed_capture(session, target, error)


def is_web_url(target: str) -> bool:
    """Only http(s) sources may be captured on behalf of model output: a model naming a local
    path must never make snap read a file on this machine."""
    try:
        return urlsplit(target).scheme in ("http", "https")
    except ValueError:
        return False
