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
    method: str | None = None,
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
    ``method`` (http, browser or auto; default ``SNAP_CAPTURE``) picks the HTTP path or the
    browser (``snapshotter.browser``); the record says which was used.
    """
    from records.attest.seal import attestor_of, seal  # cryptography: only commands that capture

    attestor = attestor_of(workspace)  # an unusable key or TSA setting is refused before fetching
    chosen = capture_method(workspace, target, method or workspace.settings.capture)
    try:
        if chosen == "browser":
            record = _capture_in_browser(workspace, target)
        else:
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
    record = seal(attestor, workspace.store, record)  # blob and TSA I/O: no transaction
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


def capture_method(workspace: Workspace, target: str, asked: str) -> str:
    """``http`` or ``browser`` for ``asked``: auto is the browser when one is installed and the
    target is an http(s) URL, HTTP otherwise. An explicit browser capture that cannot be made
    (no Chromium, a local file) is refused before anything is fetched (exit 2)."""
    if asked == "http":
        return "http"
    from snapshotter.browser import BrowserUnavailable, browser_installed

    installed = browser_installed(workspace.browser_options)
    if asked == "auto":
        return "browser" if installed and has_web_scheme(target) else "http"
    if not installed:
        raise BrowserUnavailable(
            "a browser capture needs Chromium and Playwright: apt-get install chromium,"
            " or name the executable with SNAP_BROWSER"
        )
    if not has_web_scheme(target):
        raise InputError(
            "a browser capture takes an http(s) URL; capture a local file without --browser"
        )
    return "browser"


def _capture_in_browser(workspace: Workspace, target: str) -> SnapshotRecord:
    from snapshotter.browser import capture_in_browser

    return capture_in_browser(
        target,
        workspace.store,
        workspace.fetch_options,
        workspace.browser_options,
        workspace.browser_session,
    )


def _record_failure(workspace: Workspace, target: str, error: CaptureError) -> None:
    with workspace.db.session() as session:
        record_failed_capture(session, target, error)
