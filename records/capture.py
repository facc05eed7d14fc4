"""Capturing a source and recording the attempt, stored or failed."""

from __future__ import annotations

from urllib.parse import urlsplit

from records.repository import record_failed_capture, record_snapshot
from records.workspace import Workspace
from snap.errors import CaptureError
from snapshotter.capture import SnapshotRecord, capture


def capture_source(workspace: Workspace, target: str) -> SnapshotRecord:
    """Fetch, extract and store ``target``, then record the capture and its snapshot.

    A failed fetch is recorded as a failed capture before the error is raised again: an auditor
    asking "what did snap see at that URL?" must see the failure too.
    """
    try:
        record = capture(target, workspace.store, workspace.fetch_options)
    except CaptureError as error:
        with workspace.db.session() as session:
            record_failed_capture(session, target, error)
        raise
    with workspace.db.session() as session:
        record_snapshot(session, record)
    return record


def is_web_url(target: str) -> bool:
    """Only http(s) sources may be captured on behalf of model output: a model naming a local
    path must never make snap read a file on this machine."""
    try:
        return urlsplit(target).scheme in ("http", "https")
    except ValueError:
        return False
