"""``snap import``: the ``response`` records of a WARC or WACZ made by another tool become
captures and snapshots, exactly as if snap had fetched them.

Per record:

- ``response`` (http/https): the payload is read, checked against ``WARC-Payload-Digest``
  (see ``records.imports.payload``), decoded and stored through the same extract-and-store
  path as a fetch (``snapshotter.capture.extract_and_store``); the capture is recorded with
  the record's own time (``WARC-Date``), status, IP, status line and headers (the head also
  as a content-addressed ``headers`` blob), record id, file, offset and the software named in
  the ``warcinfo`` record. Any HTTP status is imported as a capture with that status: the
  archive recorded what the server answered.
- ``revisit``: resolved after the whole archive is read, to the original in the same archive
  (``WARC-Refers-To`` record id, else the payload digest, else ``WARC-Refers-To-Target-URI``
  and ``WARC-Refers-To-Date``) and recorded as a capture of the original's snapshot; when the
  original is not in the archive it is reported as skipped.
- a redirect (a 3xx ``response`` with ``Location``) is recorded once the archive is read: when
  the page it leads to (after further redirects, up to ``MAX_REDIRECT_HOPS``) is a response of
  the same archive, as that page, captured from the redirecting URL at the redirect's time, with
  the chain and the redirect's own body (stored) in its provenance; otherwise as it stands.
  This is what ``snap fetch`` records for a URL that redirects, so a citation of the
  redirecting URL is checked against the page a reader reached, not the redirect's body.
- ``warcinfo`` is read for the software name; ``request``, ``metadata``, ``resource``,
  ``conversion`` and ``continuation`` records, and responses of non-HTTP schemes (``dns:``),
  are skipped: they are not what a page said. So is the ``urn:snap:headers:…`` resource of
  snap's own exports: an imported capture's ``headers`` blob is the head its response record
  carries, as for any archive (its capture is recorded, and sealed, before that record is read).

An archive's attestations (a WACZ's ``attestations.jsonl``, a WARC export's attestations
record) are checked, and its bytes against the manifests they sign (``records.imports.attested``,
read before any record is imported): each capture recorded says in its provenance whether its
archive's attestation holds for it; what does not hold is reported, never refused.

Importing the same archive again records nothing twice: snapshots are content-addressed, and a
capture is unique by URL and time, so a record already imported (same record id, same WARC
file) is reported as ``exists``. Another record claiming the same URL at the same second is
refused as a conflict. No database transaction is held while bytes are read or stored.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from records.attest.seal import attestor_of, seal
from records.imports.attestations import Attestations
from records.imports.attested import AttestationCheck
from records.imports.contents import ArchiveContents, read_contents
from records.imports.fields import (
    capture_date,
    head_bytes,
    http_status,
    provenance_of,
    same_record,
    software_of,
    target_host,
    warc_date,
)
from records.imports.payload import (
    DeclaredDigest,
    PayloadRefused,
    normalized_digest,
    parse_digest,
    read_payload,
)
from records.imports.report import ImportReport, RecordResult
from records.imports.sources import Archive, WarcSource, open_archive
from records.repository import record_snapshot_once
from records.urls import canonical_url
from records.vocabulary import ImportOutcome
from records.workspace import Workspace
from snapshotter.capture import HEADERS_BLOB, SnapshotRecord, extract_and_store, store_head
from snapshotter.errors import CaptureError, InputError, SnapError, printable_line, shown

Progress = Callable[[int], None]
MAX_REDIRECT_HOPS = 10
# How warcio's ArchiveLoadFailed begins for a record header it cannot read (recordloader.py).
UNKNOWN_FORMAT = "Unknown archive format, first line:"
INVALID_RECORD = "Invalid WARC record, first line:"


def total_bytes(path: Path) -> int:
    """The size the progress bar counts towards (0 when the path is not a file)."""
    try:
        return path.stat().st_size if path.is_file() else 0
    except OSError:
        return 0


def import_archive(
    workspace: Workspace,
    path: Path,
    *,
    progress: Progress | None = None,
    as_latest: bool = False,
) -> ImportReport:
    """Import every capture of the WARC or WACZ at ``path``; see the module docstring.

    ``as_latest``: the imported captures may become their URL's latest snapshot over captures
    snap made itself (by default they never do: ``records.repository.latest_capture``).

    Raises InputError (exit 2) before anything is recorded when the path cannot be imported
    (missing, a folder, not a WARC/WACZ, a WACZ whose hashes do not match)."""
    with open_archive(path) as archive:
        run = _ImportRun(workspace, archive, progress or (lambda _n: None), as_latest)
        return run.run()


@dataclass
class _PendingRevisit:
    source: WarcSource
    offset: int
    uri: str
    record_id: str | None
    fetched_at: str
    status: int | None
    head: bytes | None
    refers_to: str | None
    refers_to_uri: str | None
    refers_to_date: str | None
    digest: str | None
    provenance: dict[str, object]


class _ImportRun:
    def __init__(
        self, workspace: Workspace, archive: Archive, progress: Progress, as_latest: bool
    ) -> None:
        self.workspace = workspace
        self.archive = archive
        self.progress = progress
        self.as_latest = as_latest
        scale = sum(w.size for w in archive.warcs) or 1
        self.scale = total_bytes(archive.path) / scale if archive.kind == "wacz" else 1.0
        self.report = ImportReport(path=str(archive.path), kind=archive.kind)
        self.attested = _attestation_check(archive)  # read before any record is imported
        self.by_record_id: dict[str, SnapshotRecord] = {}
        self.by_digest: dict[str, SnapshotRecord] = {}
        self.by_uri_date: dict[tuple[str, str], SnapshotRecord] = {}
        self.revisits: list[_PendingRevisit] = []
        self.latest: dict[str, SnapshotRecord] = {}  # canonical URL -> its latest response
        self.redirects: list[_Redirect] = []

    def run(self) -> ImportReport:
        for source in self.archive.warcs:
            self._read_warc(source)
        for revisit in self.revisits:
            self.report.results.append(self._resolve(revisit))
        for redirect in self.redirects:
            self.report.results.append(self._follow(redirect))
        self.report.attestation_problems = self.attested.problems()
        return self.report

    # --- reading ---------------------------------------------------------------------

    def _read_warc(self, source: WarcSource) -> None:
        from warcio.archiveiterator import ArchiveIterator

        software: dict[str | None, str] = {}
        done = 0
        with self.archive.open(source) as handle:
            iterator = ArchiveIterator(handle)
            offset = 0
            try:
                for record in _records(iterator):
                    offset = int(iterator.offset)
                    self._advance(offset, done)
                    done = offset
                    result = self._record(source, offset, record, software)
                    if result is not None and result.outcome != ImportOutcome.DEFERRED:
                        self.report.results.append(result)
            except _AnArc:
                if self.archive.kind == "warc":
                    raise InputError(_convert_arc(self.archive.path)) from None
                self._damaged(source, offset, "it is an ARC file, not a WARC")
            except _NotAWarc:
                if self.archive.kind == "warc":  # its only WARC: nothing was read
                    raise InputError(
                        f"{shown(self.archive.path)} is not a WARC (.warc, .warc.gz) or WACZ file"
                    ) from None
                self._damaged(source, offset, "it is not a WARC")
            except _Damaged as damaged:
                self._damaged(source, offset, str(damaged))
        self._advance(source.size, done)

    def _damaged(self, source: WarcSource, offset: int, reason: str) -> None:
        """One line for a WARC that breaks off; what came before it stays imported (and the
        line says so only when there was something before it)."""
        line = f"{source.name} is damaged after offset {offset}: {printable_line(reason)[:300]}"
        if self.report.results:
            line += " (records before it were imported)"
        self.report.damaged.append(line)

    def _advance(self, position: int, done: int) -> None:
        if position > done:
            self.progress(int((position - done) * self.scale))

    def _record(
        self, source: WarcSource, offset: int, record: Any, software: dict[str | None, str]
    ) -> RecordResult | None:
        try:
            return self._classify(source, offset, record, software)
        except SnapError:  # the store or the database: the whole import stops (exit 3)
            raise
        except _Damaged:
            raise
        except Exception as error:  # the archive broke off inside this record
            raise _Damaged(_reason(error)) from error

    def _classify(
        self, source: WarcSource, offset: int, record: Any, software: dict[str | None, str]
    ) -> RecordResult | None:
        headers = record.rec_headers
        if not record.rec_type:  # WARC/1.x followed by anything but a record's headers
            raise _Damaged("a record without a WARC-Type header: not a WARC record")
        kind = str(record.rec_type)
        uri = headers.get_header("WARC-Target-URI")
        record_id = headers.get_header("WARC-Record-ID")
        if kind == "warcinfo":
            name = software_of(record)
            software[record_id] = name
            software[None] = name
            return None
        base = RecordResult(
            source.name, offset, kind, uri, ImportOutcome.SKIPPED, record_id=record_id
        )
        if kind not in ("response", "revisit"):
            return dataclasses.replace(base, reason=f"a {kind} record is not a capture")
        if not uri or not uri.lower().startswith(("http://", "https://")):
            return dataclasses.replace(base, reason="not an HTTP(S) response")
        tool = software.get(headers.get_header("WARC-Warcinfo-ID")) or software.get(None)
        try:
            target_host(uri)
            return self._capture(source, offset, record, base, tool)
        except PayloadRefused as refused:
            return dataclasses.replace(base, outcome=ImportOutcome.REFUSED, reason=str(refused))
        except CaptureError as error:
            return dataclasses.replace(base, outcome=ImportOutcome.REFUSED, reason=error.message)

    def _capture(
        self,
        source: WarcSource,
        offset: int,
        record: Any,
        base: RecordResult,
        tool: str | None,
    ) -> RecordResult:
        headers = record.rec_headers
        uri = str(base.uri)
        fetched_at = capture_date(headers.get_header("WARC-Date"))
        http = record.http_headers
        has_head = http is not None and bool(getattr(http, "statusline", None))
        digest_text = headers.get_header("WARC-Payload-Digest")
        declared = parse_digest(digest_text) if digest_text else None
        if base.record_type == "revisit":  # its HTTP head is optional
            status = http_status(http) if has_head else None
            head = head_bytes(http) if has_head else None
            provenance = provenance_of(source, offset, record, fetched_at, http, tool)
            self.revisits.append(
                _PendingRevisit(
                    source=source,
                    offset=offset,
                    uri=uri,
                    record_id=base.record_id,
                    fetched_at=fetched_at,
                    status=status,
                    head=head,
                    refers_to=headers.get_header("WARC-Refers-To"),
                    refers_to_uri=headers.get_header("WARC-Refers-To-Target-URI"),
                    refers_to_date=headers.get_header("WARC-Refers-To-Date"),
                    digest=normalized_digest(declared) if declared else None,
                    provenance=provenance,
                )
            )
            return dataclasses.replace(base, outcome=ImportOutcome.DEFERRED)
        if not has_head:
            raise PayloadRefused("the record has no HTTP status line")
        status = http_status(http)
        head = head_bytes(http)
        provenance = provenance_of(source, offset, record, fetched_at, http, tool)
        payload = read_payload(
            record,
            url=uri,
            status=status,
            declared=declared,
            max_bytes=self.workspace.settings.max_bytes,
            provenance=provenance,
        )
        try:
            warc_fields = provenance["warc"]
            assert isinstance(warc_fields, dict)
            warc_fields["payloadDigestChecked"] = payload.digest_checked
            self._store_head(head, provenance)
            snapshot = extract_and_store(payload.fetched, self.workspace.store)
        finally:
            payload.fetched.cleanup()
        self._remember(snapshot, base.record_id, declared, uri, fetched_at)
        location = http.get_header("Location") if 300 <= status < 400 else None
        if location:  # recorded once the archive is read: see _follow
            self.redirects.append(_Redirect(uri, status, location, snapshot, base))
            return dataclasses.replace(base, outcome=ImportOutcome.DEFERRED)
        return self._record_capture(snapshot, base)

    def _store_head(self, head: bytes, provenance: dict[str, object]) -> None:
        """The archived response head, as a ``headers`` blob named the way a fetch names its
        own (``snapshotter.capture.store_head``); the blob's text tells the two formats apart."""
        provenance[HEADERS_BLOB] = store_head(self.workspace.store, head, {})

    def _remember(
        self,
        snapshot: SnapshotRecord,
        record_id: str | None,
        declared: DeclaredDigest | None,
        uri: str,
        fetched_at: str,
    ) -> None:
        if record_id:
            self.by_record_id[record_id] = snapshot
        if declared is not None:
            self.by_digest[normalized_digest(declared)] = snapshot
        self.by_uri_date[(canonical_url(uri), fetched_at)] = snapshot
        key = canonical_url(uri)
        if key not in self.latest or self.latest[key].fetched_at <= fetched_at:
            self.latest[key] = snapshot

    def _record_capture(self, snapshot: SnapshotRecord, base: RecordResult) -> RecordResult:
        snapshot, attestation = self.attested.mark(snapshot)
        # its manifest says "import", names the archive and whether the archive's attestation
        # holds for it; blob and TSA I/O, no transaction
        snapshot = seal(attestor_of(self.workspace), self.workspace.store, snapshot)
        with self.workspace.db.session() as session:
            capture, created = record_snapshot_once(session, snapshot, as_latest=self.as_latest)
            same = same_record(capture.provenance, snapshot.provenance)
            if same and self.as_latest and not capture.as_latest:  # imported before, asked now
                capture.as_latest = True
            capture_id, recorded = capture.id, capture.provenance
        done = dataclasses.replace(
            base, snapshot_id=snapshot.snapshot_id, capture_id=capture_id, status=snapshot.status
        )
        if created or same:
            outcome = ImportOutcome.IMPORTED if created else ImportOutcome.EXISTS
            return dataclasses.replace(done, outcome=outcome, attestation=attestation)
        other = (recorded.get("warc") or {}).get("recordId") or "a fetch"
        return dataclasses.replace(
            done,
            outcome=ImportOutcome.REFUSED,
            reason=f"capture {capture_id} already records this URL at {snapshot.fetched_at}"
            f" (from {other}); not recorded twice",
        )

    # --- redirects -------------------------------------------------------------------

    def _follow(self, redirect: _Redirect) -> RecordResult:
        """A redirect whose page (after any further redirects) is in this archive is recorded as
        ``snap fetch`` records one: the redirecting URL at the redirect's time, captured as that
        page (its record and head), with the chain, the redirect's record, head and own body in
        its provenance. Otherwise the redirect is recorded as it stands, its body the snapshot."""
        chain = [{"url": redirect.uri, "status": redirect.status, "location": redirect.location}]
        hop = redirect
        for _ in range(MAX_REDIRECT_HOPS):
            target = urljoin(hop.uri, hop.location)
            final = self.latest.get(canonical_url(target))
            if final is None:
                break
            following = next((r for r in self.redirects if r.snapshot is final), None)
            if following is None:
                provenance = {  # the page's own record, head and all; the redirect beside it
                    **final.provenance,
                    "redirectChain": [*chain, {"url": final.url, "status": final.status}],
                    "redirectedFrom": {
                        "warc": redirect.snapshot.provenance.get("warc"),
                        HEADERS_BLOB: redirect.snapshot.provenance.get(HEADERS_BLOB),
                        "bodySnapshotId": redirect.snapshot.snapshot_id,
                    },
                }
                followed = dataclasses.replace(
                    final,
                    url=redirect.uri,
                    fetched_at=redirect.snapshot.fetched_at,
                    provenance=provenance,
                )
                return self._record_capture(followed, redirect.base)
            chain.append(
                {"url": following.uri, "status": following.status, "location": following.location}
            )
            hop = following
        return self._record_capture(redirect.snapshot, redirect.base)

    # --- revisits --------------------------------------------------------------------

    def _resolve(self, revisit: _PendingRevisit) -> RecordResult:
        base = RecordResult(
            revisit.source.name,
            revisit.offset,
            "revisit",
            revisit.uri,
            ImportOutcome.SKIPPED,
            record_id=revisit.record_id,
        )
        original = self._original(revisit)
        if original is None:
            return dataclasses.replace(
                base, reason="revisit of a record that is not in this archive (or was refused)"
            )
        provenance = dict(revisit.provenance)
        if revisit.head is not None:
            self._store_head(revisit.head, provenance)
        provenance["revisitOf"] = {
            "uri": revisit.refers_to_uri,
            "date": revisit.refers_to_date,
            "recordId": revisit.refers_to,
            "payloadDigest": revisit.digest,
        }
        snapshot = dataclasses.replace(
            original,
            url=revisit.uri,
            final_url=revisit.uri,
            fetched_at=revisit.fetched_at,
            status=revisit.status,
            provenance=provenance,
        )
        return self._record_capture(snapshot, base)

    def _original(self, revisit: _PendingRevisit) -> SnapshotRecord | None:
        if revisit.refers_to and revisit.refers_to in self.by_record_id:
            return self.by_record_id[revisit.refers_to]
        if revisit.digest and revisit.digest in self.by_digest:
            return self.by_digest[revisit.digest]
        if revisit.refers_to_uri and revisit.refers_to_date:
            try:
                date = warc_date(revisit.refers_to_date)
            except PayloadRefused:
                return None
            return self.by_uri_date.get((canonical_url(revisit.refers_to_uri), date))
        return None


def _attestation_check(archive: Archive) -> AttestationCheck:
    """The archive's attestations, checked against its records before any is imported: a
    WACZ's attestations.jsonl (its WARCs read only when it has one), a WARC's own record."""
    attestations = Attestations()
    attestations.extend(archive.attestations)
    if archive.kind == "wacz" and not attestations.captures:
        return AttestationCheck(attestations, ArchiveContents())
    contents = read_contents(archive)
    if archive.kind == "warc":
        attestations.extend(contents.attestations)
    return AttestationCheck(attestations, contents)


@dataclass(frozen=True)
class _Redirect:
    uri: str
    status: int
    location: str
    snapshot: SnapshotRecord  # the redirect's own body, stored
    base: RecordResult


class _Damaged(Exception):
    """The WARC cannot be read past this point (truncated gzip, garbage, a bad header)."""


class _NotAWarc(_Damaged):
    """The WARC's first record begins like neither a WARC nor an ARC record: it is no WARC."""


def _convert_arc(path: Path) -> str:
    name = shown(shlex.quote(str(path)))
    return (
        f"{shown(path)} is an ARC file; snap imports WARC and WACZ: convert it with"
        f" warcio recompress {name} OUT.warc.gz, then import OUT.warc.gz"
    )


class _AnArc(_NotAWarc):
    """The file is an ARC, the WARC's predecessor: warcio reads it, but its records carry none
    of what an import keeps (record ids, payload digests, the HTTP request), and its first
    record is no capture, so each would be skipped and the import would report nothing."""


def _records(iterator: Any) -> Iterator[Any]:
    """warcio's records, with any reading failure of warcio or zlib as one ``_Damaged``."""
    first = True
    while True:
        try:
            record = next(iterator)
        except StopIteration:
            return
        except Exception as error:
            if first and _unknown_format(error):
                raise _NotAWarc(str(error)) from error
            raise _Damaged(_reason(error)) from error
        if first and record.format == "arc":  # warcio reads any line of five words as ARC
            if record.rec_type == "arc_header":  # an ARC file begins with its filedesc record
                raise _AnArc("an ARC file")
            raise _NotAWarc("neither a WARC nor an ARC record")
        first = False
        yield record
        try:
            iterator.read_to_end(record)
        except Exception as error:
            raise _Damaged(_reason(error)) from error


def _unknown_format(error: Exception) -> bool:
    from warcio.recordloader import ArchiveLoadFailed

    return isinstance(error, ArchiveLoadFailed) and str(error).startswith(UNKNOWN_FORMAT)


def _reason(error: Exception) -> str:
    """Why reading stopped, for the one line that says so. warcio quotes the line it could not
    read as a record's first line: bytes of anything, so only that it is no record is said."""
    if _unknown_format(error) or str(error).startswith(INVALID_RECORD):
        return "what follows is not a WARC record"
    return str(error) or type(error).__name__
