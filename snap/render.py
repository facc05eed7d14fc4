"""Human-readable output. Only ``quote_found`` ever gets a pass mark; wording is deliberate:
"quote found", never "source verified" — snap proves the words are in the stored source, not
that the source is right.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from records.passage_marks import marked_text, marks_outside, rounded_score
from records.vocabulary import (
    BlobState,
    CaptureTime,
    ExtractionSource,
    ImportOutcome,
    ItemState,
    Status,
)
from snapshotter.times import wire_time, wire_time_or_none
from verifier.closest import SIMILAR_ENOUGH_TO_SHOW, Closest

if TYPE_CHECKING:
    from datetime import datetime

    from records.attest.checks import SealState
    from records.audit import (
        AuditedSnapshot,
        AuditReport,
        CaptureRecord,
        ExtractionRecord,
        VerificationRecord,
    )
    from records.evidence import BlobCheck
    from records.exports.export import ExportResult
    from records.exports.http_head import Exchange
    from records.fsck import FsckReport
    from records.imports.report import ImportReport
    from records.jobs import BatchProgress, ReverifyOutcomes
    from records.outcome import CitationResult
    from records.reextract import Reextracted
    from records.relocate import Relocation
    from records.reverify import ReverifyReport
    from records.show import Shown
    from records.verify import VerifyReport
    from snapshotter.capture import SnapshotRecord
    from snapshotter.store import StoreInit

PASS, FAIL = "✓", "✗"
MISMATCHES = (Status.POSITION_MISMATCH, Status.CONTEXT_MISMATCH)
SHOWS_WHERE_FOUND = (Status.QUOTE_FOUND, *MISMATCHES)


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def one_line(text: str) -> str:
    return " ".join(text.split())


def short_id(snapshot_id: str | None) -> str:
    return "no snapshot" if not snapshot_id else snapshot_id[:19] + "…"


def in_snapshot(snapshot_id: str | None) -> str:
    return "no snapshot was checked" if not snapshot_id else f"in {short_id(snapshot_id)}"


def marked_passage(text: str, start: int, differences: Sequence[Sequence[int]]) -> str:
    """The closest passage with each differing word in [brackets] (or, when the passage holds
    a bracket, the first pair of ``records.passage_marks.MARKS`` it does not hold)."""
    opening, closing = marks_outside([text])
    pieces, cursor = [], 0
    for diff_start, diff_end in differences:
        a, b = diff_start - start, diff_end - start
        pieces += [text[cursor:a], opening, text[a:b], closing]
        cursor = b
    pieces.append(text[cursor:])
    return one_line("".join(pieces))


def result_lines(result: CitationResult) -> list[str]:
    status, outcome, details = result.status, result.outcome, result.outcome.details
    mark = PASS if result.passed else FAIL
    where = short_id(outcome.snapshot_id)
    if result.span is not None:
        where += f", code points {result.span[0]}–{result.span[1]}"
    if details.get("page") and status == Status.QUOTE_FOUND:
        where += f", page {details['page']}"
    lines = [f"{mark} {status.headline}  {result.citation_id}  ({where})"]
    if result.claim_text:
        lines.append(f"    claim: {one_line(result.claim_text)}")
    if details.get("claimProblem"):
        lines.append(f"    claim offsets not used: {one_line(str(details['claimProblem']))}")
    if result.quote is not None and status in SHOWS_WHERE_FOUND:
        quote = result.quote
        lines.append(f"    “…{one_line(quote.prefix + '⟦' + quote.exact + '⟧' + quote.suffix)}…”")
    lines += explanation(result)
    return lines


def quote_reasons() -> frozenset[str]:
    """The reasons a quote itself could not be checked.  Imported here, not at the top: every
    command imports this module, and ``verifier.matcher`` compiles the tokenizer's patterns."""
    from verifier.matcher import EMPTY_QUOTE, INNER_ELLIPSIS

    return frozenset({INNER_ELLIPSIS, EMPTY_QUOTE})


def explanation(result: CitationResult) -> list[str]:
    status, outcome, details = result.status, result.outcome, result.outcome.details
    reason = outcome.reason
    if status == Status.QUOTE_FOUND:
        return [f"    ({outcome.matches} occurrences)"] if outcome.matches > 1 else []
    if status == Status.NO_QUOTE:
        return [f"    {reason}", *closest_lines(outcome.closest, "claim")]
    if status in (Status.NOT_FOUND, Status.SNIPPET_NOT_VERBATIM):
        if status == Status.SNIPPET_NOT_VERBATIM:
            lines = [f"    {reason}."]
        else:
            lines = ["    The cited source does not contain this quote."]
            lines += [f"    Its words occur, but {reason}."] if reason else []
        lines += closest_lines(outcome.closest)
        for other in details.get("foundElsewhere", []):
            where = other.get("url") or short_id(other["snapshotId"])
            lines.append(f"    The quote is in another source of this answer: {where}")
        return lines
    if status == Status.COULD_NOT_CHECK and reason in quote_reasons():
        return [f"    Could not check this quote: {reason}."]
    if status in (Status.COULD_NOT_CHECK, Status.UNKNOWN_SNAPSHOT, Status.INTEGRITY_FAILURE):
        return [f"    Could not check the source: {reason}", *closest_lines(outcome.closest)]
    lines = [f"    {reason}"] if reason else []
    if status in MISMATCHES and details.get("foundAt"):
        spans = ", ".join(f"{start}–{end}" for start, end in details["foundAt"])
        lines.append(f"    The quote is at code points {spans}.")
    if status == Status.SOURCE_CHANGED:
        lines += closest_lines(outcome.closest)
    return lines


def closest_lines(closest: Closest | None, to: str = "quote") -> list[str]:
    if closest is None:
        return []
    score = rounded_score(closest)  # as --json gives it
    if score < SIMILAR_ENOUGH_TO_SHOW:
        return [f"    Nothing in the source resembles this {to}."]
    hint = " to the claim (a hint, not proof)" if to == "claim" else ""
    return [
        f"    Closest passage in the source{hint} (score {score:.2f}):",
        "    " + shown_passage(closest),
    ]


def shown_passage(closest: Closest) -> str:
    """The closest passage with only the words that differ marked, by its alignment with the
    quote (``records.passage_marks``); a result without one marks its differing spans."""
    if closest.alignment:
        return one_line(marked_text(closest.text, closest.start, closest.alignment))
    return marked_passage(closest.text, closest.start, closest.differences)


def verify_report(report: VerifyReport) -> str:
    lines: list[str] = []
    for result in report.results:
        lines += result_lines(result)
    counts = report.counts
    tail = f"{counts.quote_found} of {counts.total} quotes found"
    if report.is_answer:
        tail += f" ({counts.share_verified:.0%} of claims)"
    answers = report.per_answer() if report.is_answer else []
    if len(answers) > 1:
        lines += [f"answer {a.answer_id or '(no id)'}: {by_status(a.by_status)}" for a in answers]
    if report.is_answer and len(counts.by_status) > 1:
        tail += f"; {by_status(counts.by_status)}"
    return "\n".join([*lines, *seal_lines_of(report.results), tail])


def seal_lines_of(results: list[CitationResult]) -> list[str]:
    """One line on the seals of the captures read: signed and timestamped, or why not (a
    capture never sealed is no failure, but says so; a broken seal failed its citations)."""
    seals: dict[int | None, SealState] = {}
    for result in results:
        seal = result.outcome.seal
        if seal is not None:
            seals[seal.capture_id] = seal
    if not seals:
        return []
    kinds: dict[str, int] = {}
    for seal in seals.values():
        kinds[seal_kind(seal)] = kinds.get(seal_kind(seal), 0) + 1
    read = plural(len(seals), "capture") + " read"
    if len(kinds) == 1:
        lines = [one_line(f"seal: {read}, {next(iter(kinds))}")]
    else:
        lines = [one_line(f"seal: {read}: " + "; ".join(f"{n} {k}" for k, n in kinds.items()))]
    return lines + imported_unattested(seals)


def imported_unattested(seals: Mapping[int | None, SealState]) -> list[str]:
    """A capture read that was imported from an archive whose attestation does not hold for
    its bytes: its seal is the importer's, and says nothing of where the bytes came from."""
    from records.attest.checks import archive_attestation_broken

    return [
        f"✗ capture {capture_id} was imported, and its archive's attestation does not hold for"
        " it (snap audit shows what differs)"
        for capture_id, seal in seals.items()
        if archive_attestation_broken(seal)
    ]


# What the seal line adds when the timestamp does not bear out the capture time (``snap audit``
# and the evidence page say by how much).
TIME_CAVEATS = {
    CaptureTime.STAMPED_LATER: ", stamped long after the capture time (not confirmed)",
    CaptureTime.CONTRADICTED: ", stamped before the capture time (snap's clock ran fast)",
}


def seal_kind(seal: SealState) -> str:
    if not seal.intact:
        return "whose seal does not hold"
    if seal.signed and seal.stamped:
        return "signed and timestamped" + TIME_CAVEATS.get(seal.capture_time, "")
    signature = "signed" if seal.signed else seal.signature
    timestamp = "timestamped" if seal.stamped else seal.timestamp
    return f"{signature}; {timestamp}"


def by_status(counts: Mapping[Status, int]) -> str:
    return ", ".join(f"{n} {status.headline}" for status, n in counts.items())


def interrupted_run(run_id: str, url: str | None, since: datetime | None) -> str:
    """The line that names an interrupted reverify run, and the command that continues it
    with the run's own filters: ``--run`` alone would go on over every recorded citation."""
    import shlex

    arguments = ["--run", run_id]
    if url:
        arguments += ["--url", url]
    if since is not None:
        arguments += ["--since", since.isoformat()]
    command = f"snap reverify {shlex.join(arguments)}"
    return f"snap: run {run_id} kept what it checked; continue it with: {command}"


def interrupted_refetch(tried: int) -> str:
    """The line for a ``reverify --refetch`` stopped before it checked anything."""
    return (
        f"snap: stopped while capturing sources again ({tried} tried): the captures made are"
        " kept (snap audit --url shows them); nothing was checked, so no run was recorded:"
        " start the reverify again"
    )


def reverify_report(report: ReverifyReport) -> str:
    lines = [
        line for result in report.results if not result.passed for line in result_lines(result)
    ]
    for url, error in report.refetch_errors.items():
        lines.append(f"{FAIL} refetch failed  {url}: {error}")
    counts = by_status(report.by_status) or "none"
    lines.append(f"{plural(len(report.results), 'citation')} re-checked: {counts}")
    lines.append(
        f"run {report.run_id}"
        + (f" ({report.resumed} from an earlier try)" if report.resumed else "")
    )
    if report.refetch_errors:
        failed = plural(len(report.refetch_errors), "source")
        lines.append(f"{failed} could not be captured again (refetch_failed): exit 1")
    return "\n".join(lines)


def unstamped_warning(count: int, reason: str) -> str:
    """``snap fetch`` when the configured TSA stamped nothing: the captures stand, unstamped."""
    whose = "the capture is" if count == 1 else f"{count} captures are"
    return one_line(
        f"snap: warning: {whose} stored and signed without a trusted timestamp ({reason});"
        " their capture time rests on snap's clock until a stamped checkpoint covers them"
        " (snap log checkpoint, once the authority answers)"
    )


def snapshot_summary(record: SnapshotRecord) -> str:
    """``snap fetch``: what was stored, where, and how its text was made."""
    status = f"HTTP {record.status}" if record.status else "local file"
    lines = [
        f"stored {record.snapshot_id}",
        f"  url       {record.url}",
        *([f"  final url {record.final_url}"] if record.final_url != record.url else []),
        f"  fetched   {record.fetched_at}  {status}  {record.content_type}",
        f"  text      {record.text_hash or 'none'}  ({record.text_size or 0} bytes)",
        f"  extractor {record.extractor}  normalizer {record.normalizer}",
        f"  store     {record.store}",
    ]
    if record.lock_mode:
        lines.append(
            f"  retention {record.lock_mode} until {wire_time_or_none(record.retain_until)}"
        )
    if record.pages:
        lines.append(f"  pages     {len(record.pages)}")
    if record.flags:
        lines.append(f"  flags     {', '.join(record.flags)}: {record.reason or ''}")
    lines += browser_lines(record)
    return "\n".join(lines)


def browser_lines(record: SnapshotRecord) -> list[str]:
    """What a browser capture added: the rendered text and its extractor, and the blobs."""
    browser = record.provenance.get("browser") or {}
    rendered = record.rendered
    if browser.get("skipped"):
        return [f"  browser   {browser['skipped']}"]
    if rendered is None:
        return []
    kinds: dict[str, int] = {}
    for blob in browser.get("blobs", []):
        kinds[blob.get("kind", "?")] = kinds.get(blob.get("kind", "?"), 0) + 1
    from snapshotter.browser.text_record import text_summary_words

    flags = browser.get("flags") or []
    said = text_summary_words(browser.get("text") or {})
    return [
        f"  rendered  {rendered.text_hash}  ({rendered.text_size} bytes)",
        f"  extractor {rendered.extractor}",
        f"  browser   {kinds.get('resource', 0)} subresources stored,"
        f" {browser.get('refused', 0)} refused; screenshot, DOM and browser document"
        f" {browser.get('document', {}).get('hash', '')}"
        + (f"; {', '.join(flags)}" if flags else ""),
        *(f"  text      {sentence}" for sentence in said),
    ]


def audit_report(report: AuditReport) -> str:
    from records.audit import CitationAudit, UrlAudit

    lines: list[str] = []
    if isinstance(report, CitationAudit):
        citation = report.citation
        lines += [
            f"citation {citation.citation_id}",
            f"  url     {citation.url or '-'}",  # a citation may name its snapshot alone
            f"  quote   “{one_line(citation.exact)}”",
            f"  created {wire_time(citation.created_at)}",
        ]
    if isinstance(report, UrlAudit):
        lines.append(f"url {report.url}")
    extractions: dict[int, ExtractionRecord] = {}
    for snapshot in report.snapshots:
        lines += snapshot_lines(snapshot)
        extractions.update({e.extraction_id: e for e in snapshot.extractions})
    lines.append("captures")
    for capture in report.captures:
        outcome = capture.snapshot_id if capture.stored else capture.error
        status = capture_source_label(capture)
        when = wire_time(capture.fetched_at)
        if capture.method == "import":  # the archive's date, not a capture by snap
            when, status = f"{when} (archive's)", "imported"
        method = capture.method or "-"
        lines.append(
            f"  {when}  {capture.outcome:6}  {status:8}  {method:7}  capture {capture.capture_id}"
            f"  {outcome}"
        )
        lines += route_lines(capture)
        lines += imported_from(capture.provenance)
        lines += seal_lines(capture.seal)
    if isinstance(report, CitationAudit):
        lines.append("verifications")
        lines += [verification_line(v, extractions) for v in report.verifications]
    else:
        for item in report.citations:
            exact = one_line(item.citation.exact)
            shown = exact if len(exact) <= 60 else exact[:59] + "…"
            lines.append(f"citation {item.citation.citation_id}  “{shown}”")
            lines += [verification_line(v, extractions) for v in item.verifications]
    return "\n".join(lines)


def route_lines(capture: CaptureRecord) -> list[str]:
    """How the capture reached its page: each redirect hop, then the final URL when it is not
    the URL asked for."""
    lines = []
    for hop in capture.provenance.get("redirects") or []:
        if isinstance(hop, Mapping):
            lines.append(f"redirect  {hop.get('status')} {hop.get('url')} -> {hop.get('location')}")
    if capture.final_url and capture.final_url != capture.url:
        lines.append(f"requested {capture.url}")
        lines.append(f"final URL {capture.final_url}")
    return ["    " + one_line(line) for line in lines]


def imported_from(provenance: Mapping[str, Any]) -> list[str]:
    """A capture read from a web archive says which record it was (snap did not fetch it), and
    whether the archive's attestation holds for it."""
    from records.attest.manifest import attestation_line, claimed_software, record_id_of

    warc = provenance.get("warc")
    if not isinstance(warc, dict):
        return []
    where = f"{warc.get('file')}@{warc.get('offset')}"
    record = f"{warc.get('type')} {record_id_of(warc)}"
    line = (
        f"imported from {where} (sha256 {warc.get('fileDigest')}, {record}),"
        f" captured by {claimed_software(dict(provenance))} at the time that archive states;"
        " not captured by snap"
    )
    attestation = attestation_line(dict(provenance))
    return ["    " + one_line(text) for text in (line, attestation) if text]


def seal_lines(seal: SealState | None) -> list[str]:
    """The capture's manifest signature and timestamp, checked now (``snap attest`` shows how
    to check them without snap)."""
    if seal is None:
        return []
    lines = [f"signature {seal.signature}", f"timestamp {seal.timestamp}"]
    if seal.manifest is not None:
        lines.append(f"captured {seal.capture_time_words()}")
    lines += [f"✗ {problem}" for problem in seal.problems]
    return ["    " + one_line(line) for line in lines]


def capture_source_label(capture: CaptureRecord) -> str:
    if capture.http_status:
        return f"HTTP {capture.http_status}"
    return "file" if capture.provenance.get("source") == "file" else "-"


def retention_line(snapshot: AuditedSnapshot) -> str:
    """What S3 reported when the blob was read back; no mode means no retention at all."""
    if not snapshot.lock_mode:
        return "  retention no retention (the stored blobs can be deleted)"
    until = wire_time(snapshot.retain_until) if snapshot.retain_until else "-"
    return f"  retention {snapshot.lock_mode} until {until}"


def snapshot_lines(snapshot: AuditedSnapshot) -> list[str]:
    lines = [
        f"snapshot {snapshot.snapshot_id}",
        f"  text hash {snapshot.text_hash or 'none'}",  # no text: no extractor for the type
        f"  norm hash {snapshot.norm_hash or 'none'}",
        f"  store     {snapshot.store}",
        f"  versions  raw={snapshot.raw_version_id or '-'} text={snapshot.text_version_id or '-'}",
        retention_line(snapshot),
    ]
    for extraction in snapshot.extractions:
        lines.append(
            f"  extraction {extraction.extraction_id}  {extraction_kind(extraction)}"
            f"  {extraction.extractor}  text {extraction.text_hash or 'none'}"
        )
    for blob in snapshot.blobs:
        lines.append(f"  {blob.kind:4} blob {blob.key}  {blob_state_line(blob)}")
    return lines


BLOB_STATE_WORDS = {
    BlobState.INTACT: "intact: recorded version re-hashed now",
    BlobState.SHADOWED: "SHADOWED (evidence intact, recorded version re-hashed now)",
    BlobState.DAMAGED: "DAMAGED",
    BlobState.MISSING: "MISSING",
}


def blob_state_line(blob: BlobCheck) -> str:
    words = BLOB_STATE_WORDS[blob.state]
    return f"{words}: {blob.detail}" if blob.detail else words


def extraction_kind(extraction: ExtractionRecord) -> str:
    """What the extraction's text was made from, in two words: ``source text`` (the captured
    bytes) or ``rendered text`` (what a browser rendered from them)."""
    rendered = extraction.source == ExtractionSource.RENDERED
    return "rendered text" if rendered else "source text"


def verification_line(
    verification: VerificationRecord, extractions: Mapping[int, ExtractionRecord] | None = None
) -> str:
    """One check: its result, where, and what it read (the extraction, of which kind, and the
    capture it read the snapshot through, when recorded)."""
    mark = PASS if verification.status.passed else FAIL
    span = verification.span
    where = f" at {span[0]}–{span[1]}" if span else ""
    reason = f"  {verification.reason}" if verification.reason else ""
    read = ""
    number = verification.extraction_id
    if verification.snapshot_id and number is not None:
        extraction = (extractions or {}).get(number)
        kind = f" ({extraction_kind(extraction)})" if extraction is not None else ""
        read = f", extraction {number}{kind}"
        if verification.capture_id is not None:
            read += f", through capture {verification.capture_id}"
    return (
        f"  {mark} {wire_time(verification.checked_at)}  {verification.status.headline}"
        f"{where}  {in_snapshot(verification.snapshot_id)}{read}{reason}"
    )


def fsck_report(report: FsckReport) -> str:
    lines = [f"{FAIL} {problem.problem}" for problem in report.problems]
    lines += [f"! shadowed {entry.blob.key}: {entry.blob.detail}" for entry in report.shadowed]
    lines += [f"  orphan (no record names it): {key}" for key in report.orphans]
    left = "removed" if report.temp_files_removed else "left by a killed capture (--repair)"
    lines += [f"  temporary file {left}: {path}" for path in report.temp_files]
    verdict = "ok" if report.ok else f"{len(report.problems)} problem(s)"
    states = [f"{count} {state}" for state, count in report.states.items()]
    states.append(plural(len(report.orphans), "orphan"))  # checked too: every blob is counted
    blobs, snapshots = plural(report.blobs_checked, "blob"), report.snapshots_checked
    lines.append(
        f"checked {blobs} ({', '.join(states)}) and {plural(snapshots, 'snapshot')}: {verdict}"
    )
    return "\n".join(lines)


def store_init(result: StoreInit) -> str:
    verb = "created" if result.created else "already exists"
    if result.bucket is None:
        return f"folder store {result.store} {verb} (write-once files, no retention lock)"
    if result.object_lock and result.lock_mode == "NONE":
        return (
            f"{PASS} bucket {result.bucket} {verb} with Object Lock, but SNAP_S3_LOCK_MODE=none:"
            " new objects get no retention"
        )
    if result.object_lock:
        return (
            f"{PASS} bucket {result.bucket} {verb} with Object Lock; new objects are "
            f"retained {result.lock_days} days in {result.lock_mode} mode"
        )
    return (
        f"{FAIL} bucket {result.bucket} exists WITHOUT Object Lock: stored evidence could "
        "be deleted; use a new bucket created by `snap store init`"
    )


def relocated(moved: Relocation) -> str:
    return (
        f"relocated {plural(moved.snapshots, 'snapshot')} from {', '.join(moved.moved_from)}"
        f" to {moved.moved_to} ({plural(moved.blobs_checked, 'blob')} found there)"
    )


def shown(shown: Shown, *, offsets: bool) -> str:
    """``snap show``: the text as stored; with offsets, a header saying which code points."""
    origin = f"# {one_line(shown.origin)}\n" if shown.origin else ""
    if shown.what == "headers":
        if shown.exchanges:
            return origin + "\n\n".join(_exchange_text(item) for item in shown.exchanges)
        headers = shown.headers or {}
        return origin + "\n".join(f"{name}: {value}" for name, value in headers.items())
    if not offsets:
        return str(shown.text)
    header = (
        f"{origin}# {shown.snapshot_id}, extraction {shown.extraction_id}: code points "
        f"{shown.start}–{shown.end} of {shown.length}"
    )
    return f"{header}\n{shown.text}"


def reextracted(results: list[Reextracted]) -> str:
    lines = [
        f"{'new' if r.new else 'same'}  {r.snapshot_id}  extraction {r.extraction_id}"
        f"  {r.extractor}  text {r.text_hash or 'none'}"
        for r in results
    ]
    new = sum(r.new for r in results)
    lines.append(f"{plural(len(results), 'extraction')} made: {new} new")
    return "\n".join(lines)


def export_summary(result: ExportResult) -> str:
    selection = result.selection
    lines = [
        f"wrote {result.path}  ({result.format}, {result.size} bytes)",
        f"  sha256    {result.sha256}",
        f"  selection {selection.described}",
        f"  contents  {plural(len(selection.snapshot_ids), 'snapshot')} from"
        f" {plural(len(selection.captures), 'capture')},"
        f" {plural(len(selection.citations), 'citation')},"
        f" {plural(result.verifications, 'verification')}",
    ]
    written = result.written.records
    if written:
        records = ", ".join(f"{n} {kind}" for kind, n in sorted(written.items()))
        lines.append(f"  records   {records}")
    if selection.not_recorded:
        lines.append(
            f"  not in snap's records (never checked): {', '.join(selection.not_recorded)}"
        )
    return "\n".join(lines)


def import_report(report: ImportReport) -> str:
    """One line per record refused or revisit left unresolved, one per attestation problem,
    then the counts (and of those problems, when there are any)."""
    lines = []
    for record in report.results:
        unresolved = record.record_type == "revisit" and record.outcome == ImportOutcome.SKIPPED
        if record.outcome == ImportOutcome.REFUSED or unresolved:
            where = f"{record.source}@{record.offset}"
            lines.append(one_line(f"{record.outcome} {where} {record.uri}: {record.reason}"))
    lines.append(
        f"imported {plural(report.count(ImportOutcome.IMPORTED), 'capture')} from {report.path}"
        f" ({report.count(ImportOutcome.EXISTS)} already imported,"
        f" {report.count(ImportOutcome.SKIPPED)} skipped,"
        f" {report.count(ImportOutcome.REFUSED)} refused)"
    )
    problems = report.attestation_problems
    if problems:
        lines[-1:-1] = [one_line(f"attestation problem: {problem}") for problem in problems]
        lines.append(
            f"{plural(len(problems), 'attestation problem')} in the archive (reported; the"
            " captures are imported as the archive has them, each saying whether its"
            " attestation holds for it: snap audit, snap show)"
        )
    return "\n".join(lines)


BAR_WIDTH = 30


def progress_bar(done: int, total: int) -> str:
    filled = BAR_WIDTH * done // total if total else BAR_WIDTH
    percent = 100 * done // total if total else 100
    return f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {percent:3d}%"


def batch_progress(progress: BatchProgress) -> str:
    """``batch <id> (capture, 2000 items, queued <time>)`` then the bar and the counts."""
    done, failed = progress.count(ItemState.DONE), progress.count(ItemState.FAILED)
    finished = done + failed
    transient = progress.failed_transient
    retryable = f" ({transient} transient: snap jobs --resume retries them)" if transient else ""
    lines = [
        f"batch {progress.batch_id} ({progress.kind}, {plural(progress.total, 'item')},"
        f" created {wire_time(progress.created_at)})",
        f"  {progress_bar(finished, progress.total)}  {finished}/{progress.total}",
        f"  done {done}  failed {failed}{retryable}"
        f"  running {progress.count(ItemState.RUNNING)}"
        f"  pending {progress.count(ItemState.PENDING)}",
    ]
    for failure in progress.failures:
        lines.append(f"  failed: {one_line(failure.key)}: {one_line(failure.error or '')}")
    if progress.outcomes is not None:
        lines += reverify_outcome_lines(progress.outcomes)
    return "\n".join(lines)


def reverify_outcome_lines(outcomes: ReverifyOutcomes) -> list[str]:
    """What the checks of a re-verification batch found, as ``snap reverify`` says it."""
    lines = [
        f"  citations: still found {outcomes.still_found}  broke {outcomes.broke}"
        f"  refetch failed {outcomes.refetch_failed}"
    ]
    for broken in outcomes.broken:
        reason = f": {one_line(broken.reason)}" if broken.reason else ""
        lines.append(f"  {FAIL} {broken.status.headline}  {one_line(broken.citation_id)}{reason}")
    if len(outcomes.broken) < outcomes.broke:
        lines.append(f"  … {outcomes.broke - len(outcomes.broken)} more broke")
    return lines


def batch_list(batches: list[BatchProgress]) -> str:
    if not batches:
        return "no batch recorded"
    return "\n".join(batch_line(batch) for batch in batches)


def batch_line(batch: BatchProgress) -> str:
    done, failed = batch.count(ItemState.DONE), batch.count(ItemState.FAILED)
    waiting = batch.count(ItemState.PENDING) + batch.count(ItemState.RUNNING)
    return (
        f"{batch.batch_id}  {batch.kind:<9} {progress_bar(done + failed, batch.total)}"
        f"  done {done}  failed {failed}  pending {waiting}"
        + (f"  broke {batch.outcomes.broke}" if batch.outcomes is not None else "")
        + f"  {wire_time(batch.created_at)}"
    )


def _exchange_text(exchange: Exchange) -> str:
    """One HTTP exchange as it went over the wire: the request head snap sent (when kept), a
    blank line, the response head."""
    heads = [exchange.request, exchange.response] if exchange.request else [exchange.response]
    return "\n\n".join(
        "\n".join([head.first_line, *(f"{name}: {value}" for name, value in head.headers)])
        for head in heads
    )
