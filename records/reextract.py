"""``snap reextract``: make the text of stored raw bytes again with the current extractor.

No source is fetched: the raw bytes are read from the snapshot's recorded store and version and
re-hashed, then extracted once per Content-Type the snapshot was served with (the declared
charset decides the text). A new text is stored and recorded as a new extraction beside the old
ones; the same text under the same key adds nothing; a different text under the same key is
refused (ExtractionConflict), never recorded.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select

from records.errors import RecordNotFound
from records.evidence import Evidence
from records.ids import resolve_snapshot_id
from records.models import Extraction, Snapshot, utcnow
from records.repository import captures_of, captures_of_snapshot, record_extraction
from records.workspace import Workspace
from snapshotter.capture import decoding_of, page_json, store_code
from snapshotter.extract import extract
from snapshotter.store.hashing import source_digest
from verifier import NORMALIZER_ID, CodeSpans, normalized_digest


@dataclass(frozen=True)
class Reextracted:
    """One extraction made again: ``new`` when it was not recorded before."""

    snapshot_id: str
    extraction_id: int
    extractor: str
    decoding: str
    text_hash: str | None
    new: bool


@dataclass(frozen=True)
class Job:
    evidence: Evidence
    declared: tuple[str | None, ...]  # each Content-Type the snapshot was captured with


def plan_reextract(
    workspace: Workspace,
    *,
    url: str | None = None,
    snapshot_id: str | None = None,
    since: datetime | None = None,
) -> list[Job]:
    with workspace.db.reading() as session:
        query = select(Snapshot).order_by(Snapshot.created_at, Snapshot.id)
        if snapshot_id is not None:
            query = query.where(Snapshot.id == resolve_snapshot_id(session, snapshot_id))
        if url is not None:
            ids = {c.snapshot_id for c in captures_of(session, url) if c.snapshot_id}
            query = query.where(Snapshot.id.in_(ids))
        if since is not None:
            query = query.where(Snapshot.created_at >= since)
        jobs = []
        for snapshot in session.scalars(query):
            captures = captures_of_snapshot(session, snapshot.id)
            declared = {(c.provenance.get("headers") or {}).get("contentType") for c in captures}
            jobs.append(Job(Evidence.of(snapshot, None), tuple(sorted(declared, key=str))))
    if not jobs and (url or snapshot_id or since):
        raise RecordNotFound("no recorded snapshot matches --url/--snapshot/--since")
    return jobs


def reextract(
    workspace: Workspace, jobs: list[Job], *, progress: Callable[[int], None] | None = None
) -> list[Reextracted]:
    results = []
    workspace.stores.check_all([job.evidence for job in jobs])
    for job in jobs:
        for declared in job.declared or (None,):
            results.append(reextract_one(workspace, job.evidence, declared))
        if progress is not None:
            progress(1)
    return results


def reextract_one(workspace: Workspace, evidence: Evidence, declared: str | None) -> Reextracted:
    """Read and re-hash the raw bytes, extract, store the text; then one short write."""
    store = workspace.stores.store_for(evidence)
    raw = store.get("raw", evidence.raw_hash, version_id=evidence.raw_version_id)
    with tempfile.TemporaryDirectory(prefix="snap-reextract-") as folder:
        path = Path(folder) / "raw"
        path.write_bytes(raw)
        extraction = extract(path, declared)
    values: dict[str, Any] = {
        "snapshot_id": evidence.snapshot_id,
        "extractor": extraction.extractor,
        "decoding": decoding_of(declared),
        "content_type": extraction.content_type,
        "text_hash": None,
        "norm_hash": None,
        "text_size": None,
        "normalizer": NORMALIZER_ID,
        "text_version_id": None,
        "pages": [page_json(page) for page in extraction.pages],
        "flags": list(extraction.flags),
        "created_at": utcnow(),
    }
    if extraction.text is not None:
        data = extraction.text.encode("utf-8")
        text_hash, size = source_digest(data)
        tags = {"kind": "text", "extractor": extraction.extractor, "normalizer": NORMALIZER_ID}
        blob = store.put("text", text_hash, data, tags=tags)
        code = CodeSpans(extraction.code or ())
        values |= {
            "text_hash": text_hash,
            "norm_hash": normalized_digest(extraction.text, code),
            "text_size": size,
            "text_version_id": blob.version_id,
        }
        if code:
            code_hash, code_blob, _ = store_code(store, code, tags)
            values |= {"code_hash": code_hash, "code_version_id": code_blob.version_id}
    with workspace.db.session() as session:
        known = set(
            session.scalars(
                select(Extraction.id).where(Extraction.snapshot_id == evidence.snapshot_id)
            )
        )
        recorded = record_extraction(session, values)
    return Reextracted(
        evidence.snapshot_id,
        recorded.id,
        recorded.extractor,
        recorded.decoding,
        recorded.text_hash,
        recorded.id not in known,
    )
