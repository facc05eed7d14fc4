"""Capture = fetch + extract + hash + store: one source becomes one snapshot record.

The record is what an auditor needs later: which bytes, which text, hashed how, extracted by
which versioned extractor, stored where and retained until when.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from snapshotter.errors import ExtractionError
from snapshotter.extract import code_spans
from snapshotter.extract.code_spans import CODE_BLOB
from snapshotter.extract.result import Extraction, Page
from snapshotter.head_format import BROWSER_PROVENANCE as BROWSER_PROVENANCE
from snapshotter.head_format import HEAD_FORMAT as HEAD_FORMAT
from snapshotter.head_format import HEADERS_BLOB as HEADERS_BLOB
from snapshotter.store import BlobStore, StoredBlob
from snapshotter.store.hashing import source_digest

if TYPE_CHECKING:
    from snapshotter.fetch import Fetched, FetchOptions
    from verifier import CodeSpans


@dataclass(frozen=True)
class RenderedText:
    """The text a browser rendered in one capture (``snapshotter.browser``): a second
    extraction of the same snapshot, beside the one made from the raw bytes. ``decoding``
    names the capture's browser document, so the extraction's key is that capture."""

    extractor: str
    decoding: str
    content_type: str
    text_hash: str
    norm_hash: str
    text_size: int
    text_blob: StoredBlob


@dataclass(frozen=True)
class SnapshotRecord:
    """A stored capture: everything ``snap fetch --json`` prints (``records.wire``
    ``stored_capture_json``) and the database keeps."""

    snapshot_id: str
    url: str
    final_url: str
    fetched_at: str
    status: int | None
    content_type: str
    extractor: str
    normalizer: str
    raw_hash: str
    text_hash: str | None
    norm_hash: str | None
    raw_size: int
    text_size: int | None
    store: str
    raw_blob: StoredBlob
    text_blob: StoredBlob | None
    pages: tuple[Page, ...]
    flags: tuple[str, ...]
    reason: str | None
    provenance: dict[str, Any] = field(default_factory=dict)
    # What, besides the bytes and the extractor, decided the text: the declared Content-Type
    # (its charset). Part of the extraction's key in the records.
    decoding: str = ""
    # How the capture was made: http, browser, file or import ("" : told by the provenance).
    method: str = ""
    rendered: RenderedText | None = None  # a browser capture's rendered text
    # Where the text is code (snapshotter.extract.code_spans), when the extractor recorded any.
    code_hash: str | None = None
    code_blob: StoredBlob | None = None

    @property
    def capture_method(self) -> str:
        if self.method:
            return self.method
        source = self.provenance.get("source")
        return "file" if source == "file" else "import" if source == "warc" else "http"

    @property
    def lock_mode(self) -> str | None:
        return self.raw_blob.lock_mode

    @property
    def retain_until(self) -> datetime | None:
        return self.raw_blob.retain_until


def page_json(page: Page) -> dict[str, Any]:
    """A page as the records keep it and ``snap fetch --json`` shows it."""
    return {
        "index": page.index,
        "label": page.label,
        "start": page.start,
        "end": page.end,
        "furniture": list(page.furniture),
    }


def capture(
    target: str, store: BlobStore, options: FetchOptions, *, web_only: bool = False
) -> SnapshotRecord:
    """Fetch ``target`` (URL or local path), extract its text, and store both blobs.

    ``web_only``: ``target`` must be an absolute http(s) URL, never a local path.

    Raises ``FetchError`` for a failed capture (the caller records it as failed) and
    ``ExtractionError`` for bytes that claim to be text but do not decode.
    """
    # Imported here: reading records (snap verify, audit) needs SnapshotRecord, not the network
    # and extraction stack.
    from snapshotter.fetch import fetch

    fetched = fetch(target, options, web_only=web_only)
    try:
        return extract_and_store(fetched, store)
    finally:
        fetched.cleanup()


def extract_and_store(fetched: Fetched, store: BlobStore) -> SnapshotRecord:
    """Extract the text of a body already on disk and store both blobs: the half of a capture
    that does not care where the bytes came from (a fetch, or a record of a web archive).

    Raises ``ExtractionError`` (carrying what is known of the capture) when no faithful text
    can be made; the caller owns ``fetched`` and cleans it up.
    """
    from snapshotter.extract import extract

    try:
        extraction = extract(fetched.source, fetched.declared_content_type)
    except ExtractionError as error:
        raise _extraction_failure(fetched, error.message) from None
    except Exception as error:  # an extractor's own bug or limit: still a recorded failure
        reason = f"could not extract text: {type(error).__name__}: {error}"[:400]
        raise _extraction_failure(fetched, reason) from error
    return store_capture(fetched, extraction, store)


def _extraction_failure(fetched: Fetched, message: str) -> ExtractionError:
    return ExtractionError(
        message,
        url=fetched.url,
        final_url=fetched.final_url,
        status=fetched.status,
        provenance=fetched.provenance,
    )


def store_capture(fetched: Fetched, extraction: Extraction, store: BlobStore) -> SnapshotRecord:
    """Write the raw bytes, the text (if any) and the HTTP heads (if any) write-once, tagged
    with how they were made; the heads' digest and version go into the capture's provenance.

    The matcher is imported here, not with the module: reading a capture's records back (fsck,
    show) needs this module's names but never the tokenizer's patterns."""
    from verifier import NORMALIZER_ID, CodeSpans, normalized_digest

    tags = {"extractor": extraction.extractor, "normalizer": NORMALIZER_ID}
    raw_blob = store.put("raw", fetched.raw_digest, fetched.source, tags={"kind": "raw", **tags})
    provenance = dict(fetched.provenance)
    if fetched.head is not None:
        provenance[HEADERS_BLOB] = store_head(store, fetched.head, tags)
    text_blob = None
    text_hash = norm_hash = None
    text_size = None
    code_hash = code_blob = None
    if extraction.text is not None:
        text_bytes = extraction.text.encode("utf-8")
        text_hash, text_size = source_digest(text_bytes)
        code = CodeSpans(extraction.code or ())
        norm_hash = normalized_digest(extraction.text, code)
        text_blob = store.put("text", text_hash, text_bytes, tags={"kind": "text", **tags})
        if code:
            code_hash, code_blob, provenance[CODE_BLOB] = store_code(store, code, tags)
    return SnapshotRecord(
        snapshot_id=fetched.raw_digest,
        url=fetched.url,
        final_url=fetched.final_url,
        fetched_at=str(fetched.provenance.get("fetchedAt", "")),
        status=fetched.status,
        content_type=extraction.content_type,
        extractor=extraction.extractor,
        normalizer=NORMALIZER_ID,
        raw_hash=fetched.raw_digest,
        text_hash=text_hash,
        norm_hash=norm_hash,
        raw_size=fetched.size,
        text_size=text_size,
        store=store.location,
        raw_blob=raw_blob,
        text_blob=text_blob,
        pages=extraction.pages,
        flags=extraction.flags,
        reason=extraction.reason,
        provenance=provenance,
        decoding=decoding_of(fetched.declared_content_type),
        code_hash=code_hash,
        code_blob=code_blob,
    )


def store_code(
    store: BlobStore, code: CodeSpans, tags: dict[str, str]
) -> tuple[str, StoredBlob, dict[str, Any]]:
    """Store a text's code spans (``snapshotter.extract.code_spans``): the digest, the blob,
    and what a capture's provenance records of it."""
    data = code_spans.encode(code)
    digest, size = source_digest(data)
    blob = store.put("code", digest, data, tags={**tags, "kind": "code"})
    return digest, blob, {"hash": digest, "size": size, "versionId": blob.version_id}


def store_head(store: BlobStore, head: bytes, tags: dict[str, str]) -> dict[str, Any]:
    """Store the HTTP heads of one capture; what the capture's provenance records of them."""
    digest, size = source_digest(head)
    blob = store.put("headers", digest, head, tags={"kind": "headers", **tags})
    return {"hash": digest, "size": size, "versionId": blob.version_id}


def decoding_of(declared_content_type: str | None) -> str:
    """The decoding parameters of an extraction, as one comparable string of at most 300
    characters (a longer header is named by its SHA-256, so distinct headers stay distinct)."""
    value = declared_content_type or ""
    if len(value) > 200:
        value = "sha256:" + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()
    return f"declared-content-type={value}"
