"""Batches: bulk work split into items, whose state lives in the database, not the broker.

A broker message names an item by its id and its batch's id (a random UUID): an item id alone
is only unique in one database, and a worker claims an item only when both match in its own
(``claim_item``), so a message of another database sharing the queue never runs here
(``item_recorded`` tells the worker so). Each item goes pending -> running -> done (or failed) in
short transactions of its own, never held across a fetch or a blob read; the move to done is
a compare-and-set (``state <> 'done'``), made in the same transaction that records the
result where there is one (a capture), so a message delivered twice records its work once.
A message the broker lost leaves its item pending or running: ``resumable_items`` finds it.

The same functions run an item in a Celery worker (snap/workers) and in-process when no
broker is configured, so both paths behave alike.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import func, insert, select, update
from sqlalchemy.orm import Session

from records.capture import capture_source
from records.db import Database
from records.errors import RecordNotFound, is_transient
from records.item_results import (
    Captured,
    ItemResult,
    Reextracted,
    Reverified,
    read_item_result,
)
from records.models import Batch, BatchItem, Citation, Verification, utcnow
from records.reextract import plan_reextract as plan_reextract_jobs
from records.reextract import reextract
from records.repository import citations_matching
from records.reverify import group_by_latest_snapshot, reverify
from records.vocabulary import BatchKind, FailureKind, ItemState, Status
from records.workspace import Workspace
from snapshotter.capture import SnapshotRecord
from snapshotter.errors import InputError, SnapError
from snapshotter.weburl import InvalidURL, has_web_scheme, web_url

Item = tuple[str, dict[str, Any]]  # (key, payload)
ROWS_PER_INSERT = 500
MAX_URL_LIST_BYTES = 256 * 1024 * 1024
OPEN_STATES = tuple(state for state in ItemState if state.open)
ERRORS_SHOWN = 10


# Splitting work into items -------------------------------------------------------------------


def read_url_list(path: Path) -> list[str]:
    """One http(s) URL a line; blank lines and ``#`` comments skipped, repeats dropped. A line
    that is not a web URL (``snapshotter.weburl.web_url``: a control character, a scheme with
    no host, a bad port) is refused with its line number before anything is queued. Lines end
    at a line feed only, so a vertical tab or form feed inside a line is refused, not split on."""
    from records.inputs.reader import decode_text, read_input_bytes

    # the one bounded reader: a folder, FIFO or device is one line, and never blocks
    text = decode_text(read_input_bytes(path, MAX_URL_LIST_BYTES), str(path))
    urls: dict[str, None] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        url = line.strip(" \t\r")
        if not url or url.startswith("#"):
            continue
        if not has_web_scheme(url):
            raise InputError(f"{path}:{number}: not an http(s) URL: {url[:200]!r}")
        try:
            web_url(url)
        except InvalidURL as error:
            raise InputError(f"{path}:{number}: {error.message}") from None
        urls[url] = None
    if not urls:
        raise InputError(f"{path}: no URL in the file")
    return list(urls)


MAX_KEY = 1000  # a longer key is stored as its SHA-256: PostgreSQL's unique index has a limit


def item_key(name: str) -> str:
    if len(name.encode("utf-8")) <= MAX_KEY:
        return name
    return "sha256:" + hashlib.sha256(name.encode("utf-8")).hexdigest()


def capture_items(urls: Iterable[str], *, method: str | None = None) -> list[Item]:
    """Keyed by the URL (its hash when very long); the URL itself is in the payload, and the
    capture method asked for (``snap fetch --enqueue --browser``), if any: without one the
    worker's own SNAP_CAPTURE decides."""
    extra = {"capture": method} if method else {}
    return [(item_key(url), {"url": url, **extra}) for url in urls]


def reverify_items(
    workspace: Workspace, *, url: str | None = None, since: datetime | None = None
) -> list[Item]:
    """One item per snapshot group, as ``snap reverify`` groups them: each group's text is
    read and tokenized once, by whichever worker takes it."""
    with workspace.db.reading() as session:
        citations = citations_matching(session, url=url, since=since)
        groups = group_by_latest_snapshot(session, citations)
    items = []
    for group in groups:
        ids = [citation.id for citation in group.citations]
        key = group.latest.snapshot_id if group.latest is not None else f"unresolved:{ids[0]}"
        items.append((key, {"citations": ids}))
    return items


def reextract_items(
    workspace: Workspace,
    *,
    url: str | None = None,
    snapshot_id: str | None = None,
    since: datetime | None = None,
) -> list[Item]:
    jobs = plan_reextract_jobs(workspace, url=url, snapshot_id=snapshot_id, since=since)
    return [(job.evidence.snapshot_id, {}) for job in jobs]


def create_batch(
    db: Database, kind: BatchKind, params: dict[str, Any], items: Sequence[Item]
) -> tuple[str, list[int]]:
    """Record the batch and its items (all pending) in one transaction; returns the batch id
    and the item ids, the messages to publish."""
    batch_id = uuid.uuid4().hex
    now = utcnow()
    with db.session() as session:
        session.add(Batch(id=batch_id, kind=kind, params=params, total=len(items), created_at=now))
        session.flush()
        rows = [
            {
                "batch_id": batch_id,
                "key": key,
                "payload": payload,
                "state": ItemState.PENDING,
                "attempts": 0,
                "updated_at": now,
            }
            for key, payload in items
        ]
        for start in range(0, len(rows), ROWS_PER_INSERT):
            session.execute(insert(BatchItem), rows[start : start + ROWS_PER_INSERT])
        ids = session.scalars(
            select(BatchItem.id).where(BatchItem.batch_id == batch_id).order_by(BatchItem.id)
        ).all()
    return batch_id, list(ids)


# One item's life -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Claimed:
    item_id: int
    batch_id: str
    kind: BatchKind
    key: str
    payload: dict[str, Any]
    attempts: int  # this try included


def claim_item(db: Database, item_id: int, batch_id: str) -> Claimed | None:
    """pending/running -> running, one more attempt, for the item of that id in that batch
    only. None when there is nothing to do: the item is done or failed (a duplicate or stale
    message), or this database records no such item (``item_recorded`` tells which)."""
    with db.session() as session:
        claimed = session.execute(
            update(BatchItem)
            .where(
                BatchItem.id == item_id,
                BatchItem.batch_id == batch_id,
                BatchItem.state.in_(OPEN_STATES),
            )
            .values(state=ItemState.RUNNING, attempts=BatchItem.attempts + 1, updated_at=utcnow())
        )
        if claimed.rowcount != 1:  # type: ignore[attr-defined]
            return None
        item = session.get_one(BatchItem, item_id)
        kind = session.scalar(select(Batch.kind).where(Batch.id == item.batch_id))
        return Claimed(
            item.id, item.batch_id, BatchKind(str(kind)), item.key, item.payload, item.attempts
        )


def item_recorded(db: Database, item_id: int, batch_id: str) -> bool:
    """Whether this database records item ``item_id`` of batch ``batch_id``. Batch ids are
    random UUIDs, so a message whose pair is not recorded here was published from another
    database (or names an item that never existed): it is not this worker's to run."""
    with db.reading() as session:
        found = session.scalar(
            select(BatchItem.id).where(BatchItem.id == item_id, BatchItem.batch_id == batch_id)
        )
    return found is not None


def done_in(session: Session, item_id: int, result: ItemResult) -> bool:
    """The compare-and-set to done, inside the caller's transaction; False: already done."""
    moved = session.execute(
        update(BatchItem)
        .where(BatchItem.id == item_id, BatchItem.state != ItemState.DONE)
        .values(state=ItemState.DONE, result=result.stored(), error_kind=None, updated_at=utcnow())
    )
    return bool(moved.rowcount == 1)  # type: ignore[attr-defined]


def mark_done(db: Database, item_id: int, result: ItemResult) -> bool:
    with db.session() as session:
        return done_in(session, item_id, result)


def mark_failed(
    db: Database,
    item_id: int,
    error: SnapError,
    *,
    retrying: bool,
    transient: bool | None = None,
) -> None:
    """A failure: back to pending when a retry is coming, else failed, with its kind (a
    transient one is re-queued by ``snap jobs --resume``). A done item stays done.
    ``transient``: the caller's judgement (the workers know their broker's errors); by
    default ``records.errors.is_transient``."""
    if transient is None:
        transient = is_transient(error)
    with db.session() as session:
        session.execute(
            update(BatchItem)
            .where(BatchItem.id == item_id, BatchItem.state != ItemState.DONE)
            .values(
                state=ItemState.PENDING if retrying else ItemState.FAILED,
                error_kind=FailureKind.TRANSIENT if transient else FailureKind.PERMANENT,
                last_error=error.message,
                updated_at=utcnow(),
            )
        )


def run_item(workspace: Workspace, claimed: Claimed) -> ItemResult:
    """Do the work of a claimed item and mark it done; returns what it did.
    Errors of the hierarchy propagate: the caller decides between a retry and a failure."""
    if claimed.kind is BatchKind.CAPTURE:
        return capture_item(workspace, claimed)
    result: ItemResult
    if claimed.kind is BatchKind.REVERIFY:
        result = reverify_item(workspace, claimed)
    else:
        result = reextract_item(workspace, claimed)
    mark_done(workspace.db, claimed.item_id, result)
    return result


def capture_item(workspace: Workspace, claimed: Claimed) -> Captured:
    """The capture is recorded in the same transaction that marks the item done, and only if
    that compare-and-set wins: a second delivery stores the same blobs (content-addressed) and
    records nothing. Each failed attempt is recorded as a failed capture, as ``snap fetch``
    does: an auditor sees every try."""

    def claim(session: Session, record: SnapshotRecord) -> bool:
        return done_in(session, claimed.item_id, Captured(record.snapshot_id))

    target = str(claimed.payload.get("url", claimed.key))
    method = claimed.payload.get("capture")
    chosen = str(method) if method in ("http", "browser", "auto") else None
    record = capture_source(workspace, target, claim=claim, web_only=True, method=chosen)
    return Captured(record.snapshot_id)


def reverify_item(workspace: Workspace, claimed: Claimed) -> Reverified:
    """The group's checks are recorded under the batch id as run id, with idempotency keys:
    a second try of the item finds them and records nothing twice."""
    ids = [str(i) for i in claimed.payload.get("citations", [])]
    with workspace.db.reading() as session:
        citations: list[Citation] = []
        for start in range(0, len(ids), ROWS_PER_INSERT):
            chunk = ids[start : start + ROWS_PER_INSERT]
            citations += session.scalars(select(Citation).where(Citation.id.in_(chunk))).all()
    citations.sort(key=lambda c: (c.created_at, c.id))
    report = reverify(workspace, citations, run_id=claimed.batch_id)
    found = sum(1 for result in report.results if result.passed)
    return Reverified(len(report.results), found, missing=len(ids) - len(citations))


def reextract_item(workspace: Workspace, claimed: Claimed) -> Reextracted:
    jobs = plan_reextract_jobs(workspace, snapshot_id=claimed.key)
    results = reextract(workspace, jobs)
    return Reextracted(tuple(result.extraction_id for result in results))


def item_results(db: Database, batch_id: str) -> dict[str, ItemResult]:
    """What each done item of a batch did, by its key, typed by the batch's kind
    (``records.item_results``)."""
    with db.reading() as session:
        kind = BatchKind(str(session.scalar(select(Batch.kind).where(Batch.id == batch_id))))
        rows = session.execute(
            select(BatchItem.key, BatchItem.result)
            .where(BatchItem.batch_id == batch_id, BatchItem.state == ItemState.DONE)
            .order_by(BatchItem.id)
        ).all()
    return {key: read_item_result(kind, stored) for key, stored in rows if stored is not None}


def run_here(
    workspace: Workspace,
    batch_id: str,
    item_ids: Sequence[int],
    progress: Callable[[int], None] | None = None,
) -> None:
    """No broker: every item of the batch in this process, one after the other, with the same
    state changes a worker makes (a failure fails its item, never the batch)."""
    for item_id in item_ids:
        claimed = claim_item(workspace.db, item_id, batch_id)
        if claimed is not None:
            try:
                run_item(workspace, claimed)
            except SnapError as error:
                mark_failed(workspace.db, item_id, error, retrying=False)
        if progress is not None:
            progress(1)
    from records.attest.checkpoints import checkpoint_if_grown

    checkpoint_if_grown(workspace)  # the batch's records, signed and stamped once


def checkpoint_when_finished(workspace: Workspace, batch_id: str) -> None:
    """A worker that finishes a batch's last item checkpoints the log (two finishing at once
    make two checkpoints, both true)."""
    with workspace.db.reading() as session:
        open_items = session.scalar(
            select(func.count())
            .select_from(BatchItem)
            .where(BatchItem.batch_id == batch_id, BatchItem.state.in_(OPEN_STATES))
        )
    if not open_items:
        from records.attest.checkpoints import checkpoint_if_grown

        checkpoint_if_grown(workspace)


# Reading a batch's state ---------------------------------------------------------------------


def resolve_batch(session: Session, given: str) -> Batch:
    """A batch by its id, or by a unique prefix of 6+ characters."""
    batch = session.get(Batch, given)
    if batch is not None:
        return batch
    found = []
    if len(given) >= 6 and given.isalnum():
        found = list(session.scalars(select(Batch).where(Batch.id.startswith(given)).limit(2)))
    if len(found) == 1:
        return found[0]
    if found:
        raise InputError(f"several batches start with {given!r}: give more of the id")
    raise RecordNotFound(f"no batch {given[:100]!r} is recorded")


@dataclass(frozen=True)
class Failure:
    """A failed item, as ``snap jobs`` lists the first few."""

    key: str  # a capture's URL, even when the item's key is its hash
    failure_kind: FailureKind | None
    error: str | None
    attempts: int


@dataclass(frozen=True)
class BrokenCitation:
    citation_id: str
    status: Status
    reason: str | None


@dataclass(frozen=True)
class ReverifyOutcomes:
    """What a re-verification batch found, from the checks recorded under its run id: a task
    that ran to the end is done even when every citation it checked broke, so the items'
    states alone would hide the very thing the batch was run to find out."""

    still_found: int
    broke: int
    by_status: Mapping[Status, int]  # sorted by status
    broken: tuple[BrokenCitation, ...]  # the first ERRORS_SHOWN
    refetch_failed: int = 0  # a queued re-verification never captures again (no --refetch)


@dataclass(frozen=True)
class BatchProgress:
    """A batch's state, from the database: how many items are in each state, the first
    failures and, for a re-verification, what its checks found."""

    batch_id: str
    kind: BatchKind
    params: Mapping[str, Any]
    created_at: datetime
    total: int
    counts: Mapping[ItemState, int]  # every state, in ItemState's order
    failed_transient: int
    failures: tuple[Failure, ...]  # the first ERRORS_SHOWN
    outcomes: ReverifyOutcomes | None = None  # a re-verification batch only

    def count(self, state: ItemState) -> int:
        return self.counts[state]

    @property
    def finished(self) -> bool:
        return not any(self.counts[state] for state in OPEN_STATES)

    @property
    def unfinished(self) -> int:
        """Items a resume re-queues: pending, running, and failed for a transient reason."""
        return sum(self.counts[state] for state in OPEN_STATES) + self.failed_transient

    @property
    def passed(self) -> bool:
        """No item failed and, for a re-verification, no citation broke: ``snap jobs`` exits 1
        otherwise, as ``snap reverify`` does in-process."""
        outcomes = self.outcomes
        broke = outcomes is not None and bool(outcomes.broke or outcomes.refetch_failed)
        return not self.counts[ItemState.FAILED] and not broke


def batch_progress(db: Database, given: str) -> BatchProgress:
    with db.reading() as session:
        batch = resolve_batch(session, given)
        return progress_of(session, batch)


def progress_of(session: Session, batch: Batch) -> BatchProgress:
    counts = dict.fromkeys(ItemState, 0)
    rows = session.execute(
        select(BatchItem.state, BatchItem.error_kind, func.count())
        .where(BatchItem.batch_id == batch.id)
        .group_by(BatchItem.state, BatchItem.error_kind)
    )
    transient = 0
    for state, kind, count in rows:
        counts[ItemState(state)] += count
        if state == ItemState.FAILED and kind == FailureKind.TRANSIENT:
            transient += count
    errors = session.execute(
        select(BatchItem.key, BatchItem.payload, BatchItem.error_kind, BatchItem.last_error)
        .add_columns(BatchItem.attempts)
        .where(BatchItem.batch_id == batch.id, BatchItem.state == ItemState.FAILED)
        .order_by(BatchItem.id)
        .limit(ERRORS_SHOWN)
    )
    kind = BatchKind(batch.kind)
    return BatchProgress(
        batch_id=batch.id,
        kind=kind,
        params=dict(batch.params),
        created_at=batch.created_at,
        total=batch.total,
        counts=counts,
        failed_transient=transient,
        failures=tuple(
            Failure(
                str(payload.get("url", key)),
                None if failure is None else FailureKind(failure),
                error,
                attempts,
            )
            for key, payload, failure, error, attempts in errors
        ),
        outcomes=reverify_outcomes(session, batch.id) if kind is BatchKind.REVERIFY else None,
    )


def reverify_outcomes(session: Session, run_id: str) -> ReverifyOutcomes:
    """The checks recorded under a re-verification batch's run id, counted by status."""
    by_status: dict[Status, int] = {}
    rows = session.execute(
        select(Verification.status, func.count())
        .where(Verification.run_id == run_id)
        .group_by(Verification.status)
    )
    for status, count in rows:
        by_status[Status(status)] = int(count)
    broken = session.execute(
        select(Verification.citation_id, Verification.status, Verification.reason)
        .where(
            Verification.run_id == run_id,
            Verification.status.not_in([s.value for s in Status if s.passed]),
        )
        .order_by(Verification.id)
        .limit(ERRORS_SHOWN)
    )
    still = sum(n for status, n in by_status.items() if status.passed)
    return ReverifyOutcomes(
        still_found=still,
        broke=sum(by_status.values()) - still,
        by_status=dict(sorted(by_status.items())),
        broken=tuple(
            BrokenCitation(citation_id, Status(status), reason)
            for citation_id, status, reason in broken
        ),
    )


def recent_batches(db: Database, limit: int = 20) -> list[BatchProgress]:
    with db.reading() as session:
        batches = session.scalars(
            select(Batch).order_by(Batch.created_at.desc(), Batch.id).limit(limit)
        ).all()
        return [progress_of(session, batch) for batch in batches]


def resumable_items(db: Database, given: str) -> tuple[str, list[int]]:
    """The items a resume re-queues: pending or running (a lost message, or a worker killed
    mid-task) and failed for a transient reason, which go back to pending here. A message
    that was not lost after all is then delivered twice, which the compare-and-set absorbs."""
    with db.session() as session:
        batch = resolve_batch(session, given)
        session.execute(
            update(BatchItem)
            .where(
                BatchItem.batch_id == batch.id,
                BatchItem.state == ItemState.FAILED,
                BatchItem.error_kind == FailureKind.TRANSIENT,
            )
            .values(state=ItemState.PENDING, updated_at=utcnow())
        )
        ids = session.scalars(
            select(BatchItem.id)
            .where(BatchItem.batch_id == batch.id, BatchItem.state.in_(OPEN_STATES))
            .order_by(BatchItem.id)
        ).all()
        return batch.id, list(ids)


def kind_of(db: Database, batch_id: str) -> BatchKind:
    with db.reading() as session:
        return BatchKind(resolve_batch(session, batch_id).kind)
