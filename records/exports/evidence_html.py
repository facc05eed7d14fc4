"""The evidence page's HTML, from plain data: no I/O here.

Safe to open from anyone: every value from the records (page text, quotes, URLs, headers,
reasons) goes through ``html.escape`` and sits inside ``<bdi>`` where it is inline, so hostile
text can neither add markup nor reorder the words around it. The only links are same-page
anchors, the text-fragment links to live web pages and ``data:`` links that save the proof
files (``download``: a save, never a navigation). No script runs, no image, no stylesheet to
load: one inline ``<style>``, allowed by its hash in a Content-Security-Policy that refuses
everything else; the attestations sit in ``<script type="application/json">`` data blocks,
which browsers never run, with every ``<`` in them written ``\u003c``.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from records.attest.attest import TSA_CHAIN_FILE, export_line_commands, export_line_files
from records.attest.manifest import claimed_software, method_of
from records.audit import (
    AuditedSnapshot,
    CaptureRecord,
    CitationAudit,
    CitationRecord,
    ExtractionRecord,
    VerificationRecord,
)
from records.evidence import BlobCheck, Evidence
from records.passage_marks import ADDED, DROPPED, SAME, SIGNS, marks_outside, passage_pieces
from records.vocabulary import BlobState, ExtractionSource
from snapshotter.times import wire_time
from verifier import Closest
from verifier.status import Status

CONTEXT = 300  # code points of stored text shown on each side of the quote

CSS = """
:root { color-scheme: light; }
html { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: #1a1a1a; background: #fff; }
body { max-width: 62rem; margin: 0 auto; padding: 1rem 1.25rem; }
header { border-bottom: 2px solid #1a1a1a; }
figure.screenshot img { max-width: 100%; height: auto; border: 1px solid #999; }
footer { border-top: 1px solid #767676; margin-top: 2.5rem; color: #3d3d3d; font-size: .9rem; }
h1 { font-size: 1.6rem; margin: .5rem 0; }
h2 { font-size: 1.3rem; margin: 2.5rem 0 .5rem; }
h3 { font-size: 1.05rem; margin: 1.25rem 0 .25rem; }
article + article { border-top: 1px solid #767676; }
.verdict { display: inline-block; font-size: 1.15rem; padding: .35rem .75rem;
  border: 2px solid; border-radius: 4px; margin: .25rem 0; }
.pass { color: #0b5d1e; border-color: #0b5d1e; background: #eef7f0; }
.fail { color: #8a1111; border-color: #8a1111; background: #fbeeee; }
.quote, .excerpt { margin: .5rem 0; padding: .5rem .75rem; border-left: 4px solid #767676;
  background: #f4f4f4; white-space: pre-wrap; overflow-wrap: anywhere; }
mark { background: #ffe066; color: #000; font-weight: 600; outline: 2px solid #6b5000; }
.closest { outline: 1px dashed #3d3d3d; }
ins { background: #fff0c2; color: #000; text-decoration: underline 2px; }
.excerpt bdi { unicode-bidi: isolate; }
mark, ins { unicode-bidi: isolate; print-color-adjust: exact;
  -webkit-print-color-adjust: exact; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: .9em;
  overflow-wrap: anywhere; }
.note { color: #3d3d3d; font-size: .9rem; }
a { color: #0645ad; }
ol.timeline li, ol.captures li { margin: .25rem 0; }
.warn { margin: .5rem 0; padding: .5rem .75rem; border: 2px solid #6b5000;
  background: #fff6d6; color: #1a1a1a; }
pre.commands { white-space: pre-wrap; overflow-wrap: anywhere; background: #f4f4f4;
  padding: .5rem .75rem; }
@media print {
  body { max-width: none; padding: 0; font-size: 11pt; }
  nav { display: none; }
  article { break-before: page; }
  article:first-of-type { break-before: auto; }
  section, li, dl { break-inside: avoid; }
  a[href^="http"]::after { content: " <" attr(href) ">"; font-size: .8em;
    overflow-wrap: anywhere; }
  .pass, .fail { background: none; }
}
""".strip()
STYLE_HASH = base64.b64encode(hashlib.sha256(CSS.encode("utf-8")).digest()).decode("ascii")
CSP = (
    f"default-src 'none'; style-src 'sha256-{STYLE_HASH}'; img-src 'none'; "
    "base-uri 'none'; form-action 'none'"
)
# A page with a browser capture's screenshot carries it inline (data:), and nothing else.
CSP_WITH_SCREENSHOTS = CSP.replace("img-src 'none'", "img-src data:")
LINK_NOTE = (
    "This link is a convenience, not evidence: it asks your browser to scroll to the quote on "
    "the page as it is today, which may have changed since it was captured, and it was built "
    "from snap's extracted text, which can differ from the text your browser builds. The "
    "evidence is the stored snapshot and its SHA-256 digest."
)


@dataclass(frozen=True)
class Highlight:
    """A span of the stored text to mark; ``status`` None: found while making the page."""

    start: int
    end: int
    status: Status | None
    checked_at: str | None


@dataclass(frozen=True)
class Closeness:
    """The closest passage to the quote (or claim); None when nothing resembles it."""

    to: str  # "quote" or "claim"
    closest: Closest | None


@dataclass(frozen=True)
class Changed:
    """A ``source_changed`` citation's newer copy: when each copy was captured, and the
    passage of the newer one closest to the quote (what the source says now)."""

    cited_at: str | None
    latest_at: str | None
    latest: Evidence | None
    text: str | None
    closeness: Closeness | None
    problem: str | None


@dataclass(frozen=True)
class CheckRead:
    """What one check read: the capture it read the snapshot through and the extraction."""

    capture_id: int | None
    method: str | None
    extraction: ExtractionRecord | None


@dataclass(frozen=True)
class Entry:
    """Everything the page shows for one citation."""

    report: CitationAudit  # records.audit for the citation, blobs re-hashed now
    evidence: Evidence | None = None
    text: str | None = None
    highlight: Highlight | None = None
    closeness: Closeness | None = None
    link: str | None = None
    problem: str | None = None
    screenshot: tuple[str, bytes] | None = None  # (digest, PNG) of the capture shown
    changed: Changed | None = None
    capture: CaptureRecord | None = None  # the capture the latest check read: the one shown
    checked_text: ExtractionRecord | None = None  # the extraction of ``evidence``
    rendered: ExtractionRecord | None = None  # a rendered text, when the check read another
    reads: Mapping[int, CheckRead] = field(default_factory=dict)  # by verification id
    attestations: tuple[dict[str, Any], ...] = ()  # export lines of what it shows


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def inline(value: object) -> str:
    """A value from the records inside running text: escaped and isolated for direction."""
    return f"<bdi>{esc(value)}</bdi>"


def isolated(text: str) -> str:
    """A stretch of stored page text: escaped and isolated for direction, so a bidi control
    inside it (a right-to-left override) reaches no further than the stretch itself."""
    return f"<bdi>{esc(text)}</bdi>" if text else ""


def code(value: object) -> str:
    return f"<code>{esc(value)}</code>"


def page_html(
    entries: list[Entry], *, made_at: str, version: str, check_inclusion: str | None = None
) -> str:
    title = page_title(entries)
    articles = "\n".join(article(number, entry) for number, entry in enumerate(entries, 1))
    csp = CSP_WITH_SCREENSHOTS if any(entry.screenshot for entry in entries) else CSP
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{esc(csp)}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<meta name="generator" content="snap {esc(version)}">
<title>{esc(title)}</title>
<style>{CSS}</style>
</head>
<body>
<header>
<h1>{esc(title)}</h1>
<p>{esc(found_summary(entries))} Made by snap {esc(version)}
at <time datetime="{esc(made_at)}">{esc(made_at)}</time>; every stored blob named below was
read back and re-hashed at that time.</p>
</header>
<main>
{contents(entries)}
{articles}
</main>
<footer>
<p>snap keeps an exact copy of every cited source under the SHA-256 of its bytes, and checks
that each quoted passage is in that copy. This page shows these words were in these stored
bytes, captured at this time; it does not show that the source is right.</p>
<p>To check it yourself: the snapshot id is the SHA-256 of the raw bytes as captured, so any
copy of those bytes (for example a WARC or WACZ exported with <code>snap export</code>) can be
hashed and compared. With access to the records, <code>snap audit CITATION_ID</code> prints the
same facts.</p>
{inclusion_footer(check_inclusion)}
</footer>
</body>
</html>
"""


def inclusion_footer(script: str | None) -> str:
    """The standalone inclusion check the commands of each citation's proofs run."""
    if script is None:
        return ""
    return (
        "<p>The commands under each citation's proofs also run "
        f"{file_link('check_inclusion.py', script.encode('utf-8'))}, a short script that needs"
        " nothing but Python's standard library (read it before running it), and"
        f" {code(TSA_CHAIN_FILE)}: the time-stamping authority's CA certificate, which you"
        " should obtain from the authority itself, not from the party whose records these"
        " are.</p>"
    )


def found_summary(entries: list[Entry]) -> str:
    """How many quotes were found, and where: a quote found in the copy cited but not in a
    newer copy is counted apart, never as "not found in the stored copy"."""
    found = sum(latest_status(e) == Status.QUOTE_FOUND for e in entries)
    changed = sum(latest_status(e) == Status.SOURCE_CHANGED for e in entries)
    one = len(entries) == 1
    text = (
        f"{found} of {len(entries)} {'quote' if one else 'quotes'} found in the stored copy of"
        f" {'its source' if one else 'their sources'}"
    )
    if changed:
        text = (
            f"{found} of {len(entries)} {'quote' if one else 'quotes'} found in the latest stored"
            f" copy of {'its source' if one else 'their sources'}; {changed} found in the copy"
            " cited but not in a newer copy (the source changed)"
        )
    return text + "."


def page_title(entries: list[Entry]) -> str:
    if len(entries) == 1:
        return f"Evidence for citation {entries[0].report.citation.citation_id}"
    answers = {e.report.citation.answer_id for e in entries}
    if len(answers) == 1 and None not in answers:
        return f"Evidence for the {len(entries)} citations of answer {answers.pop()}"
    return f"Evidence for {len(entries)} citations"


def contents(entries: list[Entry]) -> str:
    if len(entries) < 2:
        return ""
    items = "\n".join(
        f'<li><a href="#citation-{n}">{inline(e.report.citation.citation_id)}</a>: '
        f"{esc(status_words(latest_status(e)))}</li>"
        for n, e in enumerate(entries, 1)
    )
    return f'<nav aria-label="Citations on this page"><ol>\n{items}\n</ol></nav>'


def latest_status(entry: Entry) -> Status | None:
    checks = entry.report.verifications
    return checks[-1].status if checks else None


def status_words(status: Status | None) -> str:
    return "never checked" if status is None else status.headline


def article(number: int, entry: Entry) -> str:
    citation = entry.report.citation
    anchor = f"citation-{number}"
    parts = [
        f'<article id="{anchor}" aria-labelledby="{anchor}-title">',
        f'<h2 id="{anchor}-title">Citation {inline(citation.citation_id)}</h2>',
        verdict(entry),
        claim_and_quote(citation),
        checked_text_warning(entry),
        stored_text_section(entry),
        screenshot_section(entry),
        link_section(entry),
        provenance_section(entry),
        timeline_section(entry.report.verifications, entry.reads),
        captures_section(entry.report.captures, entry.capture),
        proofs_section(entry, anchor),
        "</article>",
    ]
    return "\n".join(part for part in parts if part)


def text_kind(
    extraction: ExtractionRecord | None, evidence: Evidence | None = None, *, short: bool = False
) -> str:
    """Which text: made from the captured bytes or rendered by a browser, in words, with the
    extraction's id and (unless ``short``) its extractor, which names its version. Without
    an extraction row, the snapshot's own text (made from its bytes)."""
    if extraction is None:
        number = evidence.extraction_id if evidence is not None else None
        extractor = evidence.extractor if evidence is not None else None
        source = ExtractionSource.RAW
        if number is None and extractor is None:
            return "the stored text"
    else:
        number, extractor = extraction.extraction_id, extraction.extractor
        source = ExtractionSource(extraction.source or ExtractionSource.RAW)
    shown = "-" if number is None else number
    if short:
        return f"{esc(source.short)} (extraction {esc(shown)})"
    return f"{esc(source.described)} (extraction {esc(shown)}, by {code(extractor)})"


def read_rendered(entry: Entry) -> bool:
    """Whether the check read a text a browser rendered."""
    extraction = entry.checked_text
    return extraction is not None and extraction.source == ExtractionSource.RENDERED


def checked_text_warning(entry: Entry) -> str:
    """Said where a reader cannot miss it: the check read the source's text, and the snapshot
    also has a text a browser rendered (and maybe a screenshot of it), which can differ."""
    rendered = entry.rendered
    if rendered is None or entry.evidence is None or read_rendered(entry):
        return ""
    shown = " The screenshot below shows the rendered page." if entry.screenshot else ""
    return (
        '<p class="warn" role="note"><strong>Checked against the source, not against what the'
        " browser drew.</strong> This citation was checked against "
        f"{text_kind(entry.checked_text, entry.evidence)}, not against "
        f"{text_kind(rendered)}.{shown} The two differ in kind: scripts and styles can hide,"
        " replace or add words before a page is drawn, so a quote found in the source's text"
        " may never have been shown to a reader.</p>"
    )


def screenshot_section(entry: Entry) -> str:
    """The full-page screenshot of the capture shown (the one the latest check read), beside
    the marked quote, with the digest it is stored under and which text was checked."""
    if entry.screenshot is None:
        return ""
    digest, png = entry.screenshot
    data = base64.b64encode(png).decode("ascii")
    number = entry.capture.capture_id if entry.capture is not None else "-"
    if read_rendered(entry):
        said = (
            "The quote was checked against the text the browser rendered in this capture"
            f" ({text_kind(entry.checked_text, short=True)})."
        )
    else:
        said = (
            "The quote was checked against "
            f"{text_kind(entry.checked_text, entry.evidence, short=True)}, not against this"
            " rendering"
            + (f", whose text is {text_kind(entry.rendered, short=True)}" if entry.rendered else "")
            + "."
        )
    return (
        f"<section><h3>Screenshot: the page as the browser drew it in capture {esc(number)}"
        '</h3><figure class="screenshot">'
        f'<img src="data:image/png;base64,{data}" alt="Full-page screenshot of the page as'
        ' rendered in the browser capture">'
        f"<figcaption>Full-page screenshot taken by browser capture {esc(number)}, stored as"
        f" {code(digest)}. {said}</figcaption></figure></section>"
    )


def verdict(entry: Entry) -> str:
    status = latest_status(entry)
    checks = entry.report.verifications
    passed = status is not None and status.passed
    mark = "✓" if passed else "✗"
    lines = [
        f'<p class="verdict {"pass" if passed else "fail"}"><span aria-hidden="true">{mark}'
        f"</span> <strong>Status: {esc(status_words(status))}</strong></p>"
    ]
    if status is None:
        lines.append("<p>No check of this citation is recorded.</p>")
        return "\n".join(lines)
    latest = checks[-1]
    reason = f" {inline(latest.reason)}" if latest.reason else ""
    if entry.changed is not None:
        lines.append(f"<p>{changed_sentence(entry.changed, entry.evidence)}</p>")
    else:
        lines.append(f"<p>{esc(status.meaning)}{reason}</p>")
    lines.append(
        f'<p class="note">Latest check: {time(latest.checked_at)}, against snapshot '
        f"{code(latest.snapshot_id or 'none')}, by {code(latest.verifier)}.</p>"
    )
    read = entry.reads.get(latest.verification_id)
    if read is not None:
        lines.append(f"<p>Checked against: {read_words(read)}.</p>")
    return "\n".join(lines)


def read_words(read: CheckRead) -> str:
    """The text a check read and the capture it read the snapshot through, in words."""
    text = text_kind(read.extraction) if read.extraction else "the stored text"
    if read.capture_id is None:
        return text
    method = f"{esc(read.method)} capture" if read.method else "capture"
    return f"{text}, read through {method} {esc(read.capture_id)}"


def changed_sentence(changed: Changed, cited: Evidence | None) -> str:
    """Plainly: found in the copy cited on one date, not in the copy of another."""
    latest = changed.latest
    cited_id = code(cited.snapshot_id) if cited is not None else "the cited snapshot"
    latest_id = code(latest.snapshot_id) if latest is not None else "none"
    if cited is not None and latest is not None and cited.snapshot_id == latest.snapshot_id:
        return (
            f"The quote is in the copy cited, captured {time(changed.cited_at)} ({cited_id}),"
            f" as extraction {esc(cited.extraction_id)} read it, but not in extraction"
            f" {esc(latest.extraction_id)} of the same bytes. Both passages are shown below."
        )
    return (
        f"The quote is in the copy cited, captured {time(changed.cited_at)} ({cited_id}), but"
        f" not in the copy captured {time(changed.latest_at)} ({latest_id}). Both passages are"
        " shown below."
    )


def time(value: datetime | str | None) -> str:
    """A time as the wire writes it (``snapshotter.times``), marked up for the reader."""
    if isinstance(value, datetime):
        value = wire_time(value)
    if not value:
        return "unknown time"
    return f'<time datetime="{esc(value)}">{esc(value)}</time>'


def claim_and_quote(citation: CitationRecord) -> str:
    parts = []
    if citation.claim:
        parts.append(f'<h3>Claim</h3>\n<p class="quote">{esc(citation.claim)}</p>')
    if citation.exact:
        parts.append(
            f'<h3>Quote</h3>\n<blockquote class="quote">{esc(citation.exact)}</blockquote>'
        )
    else:
        parts.append("<h3>Quote</h3>\n<p>The citation quotes nothing.</p>")
    if citation.page:
        parts.append(f"<p>Cited page: {inline(citation.page)}</p>")
    return "<section>\n" + "\n".join(parts) + "\n</section>"


def stored_text_section(entry: Entry) -> str:
    heading = "<h3>In the stored text</h3>"
    if entry.evidence is not None:
        checked = text_kind(entry.checked_text, entry.evidence, short=True)
        heading = f"<h3>In the text checked: {checked}</h3>"
    if entry.changed is not None:
        heading = f"<h3>In the copy cited, captured {time(entry.changed.cited_at)}</h3>"
    section = cited_text_section(entry, heading)
    if entry.changed is None:
        return section
    return section + "\n" + newer_copy_section(entry.changed)


def newer_copy_section(changed: Changed) -> str:
    """What the newer copy says where the quote was: its passage closest to the quote."""
    heading = f"<h3>In the copy captured {time(changed.latest_at)} (the latest)</h3>"
    if changed.problem is not None or changed.text is None or changed.latest is None:
        return (
            f"<section>\n{heading}\n<p>{esc(changed.problem or 'no stored text')}</p>\n</section>"
        )
    closeness = changed.closeness
    where = (
        f"<p>The stored text {code(changed.latest.text_hash)} (snapshot"
        f" {code(changed.latest.snapshot_id)}, extraction {esc(changed.latest.extraction_id)})"
        " does not contain the quote.</p>"
    )
    if closeness is None or closeness.closest is None:
        return (
            f"<section>\n{heading}\n{where}\n<p>Nothing in it resembles the quote.</p>\n</section>"
        )
    body = closest_passage_in(changed.text, closeness, closeness.closest)
    return f"<section>\n{heading}\n{where}\n{body}\n</section>"


def cited_text_section(entry: Entry, heading: str) -> str:
    if entry.problem is not None or entry.text is None:
        return f"<section>\n{heading}\n<p>{esc(entry.problem or 'no stored text')}</p>\n</section>"
    if entry.highlight is not None:
        return f"<section>\n{heading}\n{highlighted(entry, entry.highlight)}\n</section>"
    closeness = entry.closeness
    if closeness is not None and closeness.closest is not None:
        hint = " (a hint, not proof)" if closeness.to == "claim" else ""
        heading = f"<h3>Closest passage to the {esc(closeness.to)} in the stored text{hint}</h3>"
    return f"<section>\n{heading}\n{closest_passage(entry)}\n</section>"


def window(text: str, start: int, end: int) -> tuple[int, int]:
    """Up to CONTEXT code points either side, cut at white space."""
    left = max(0, start - CONTEXT)
    if left > 0:
        space = next((i for i in range(left, start) if text[i].isspace()), start)
        left = space + 1 if space < start else left
    right = min(len(text), end + CONTEXT)
    if right < len(text):
        space = next((i for i in range(right - 1, end - 1, -1) if text[i].isspace()), end)
        right = space if space > end else right
    return left, right


def excerpt(text: str, start: int, end: int, middle: str) -> str:
    """The text around ``middle``, each side isolated for direction (``<bdi>``): a
    right-to-left override in the page text then ends where its side ends, and cannot move
    the marked words away from where they are in the text."""
    left, right = window(text, start, end)
    before = ("…" if left > 0 else "") + isolated(text[left:start])
    after = isolated(text[end:right]) + ("…" if right < len(text) else "")
    return f'<p class="excerpt">{before}{middle}{after}</p>'


def highlighted(entry: Entry, mark: Highlight) -> str:
    assert entry.text is not None
    assert entry.evidence is not None
    text = entry.text
    body = excerpt(text, mark.start, mark.end, f"<mark>{esc(text[mark.start : mark.end])}</mark>")
    where = (
        f"Code points {mark.start}–{mark.end} of the stored text "
        f"{code(entry.evidence.text_hash)}, "
        f"{text_kind(entry.checked_text, entry.evidence, short=True)}."
    )
    if mark.status is None:
        said = (
            "No recorded check found the quote here; the verifier found its words here while "
            "this page was made."
        )
    elif mark.status == Status.QUOTE_FOUND:
        said = f"The check of {time(mark.checked_at)} found the quote here."
    else:
        said = (
            f"The check of {time(mark.checked_at)} found the quote's words here, but "
            f"reported {esc(mark.status.headline)}: {esc(mark.status.meaning)}"
        )
    return f"{body}\n<p>{where} {said}</p>"


def closest_passage(entry: Entry) -> str:
    assert entry.text is not None
    closeness = entry.closeness
    if closeness is None:
        return "<p>There is no quote or claim to look for in the stored text.</p>"
    if closeness.closest is None:
        return f"<p>Nothing in the stored text resembles this {esc(closeness.to)}.</p>"
    return closest_passage_in(entry.text, closeness, closeness.closest)


def closest_passage_in(text: str, closeness: Closeness, closest: Closest) -> str:
    """The passage most like the quote (or claim), outlined, only the words that differ marked
    (by the alignment when the verifier gave one)."""
    if closest.alignment:
        passage = aligned_passage(closest, closeness.to)
        said = (
            f"each word of the source that the {esc(closeness.to)} leaves out or changes is "
            f"struck through (<code>[-word]</code>), and each word the {esc(closeness.to)} has "
            "instead or in addition is underlined (<code>[+word]</code>)"
        )
    else:
        pieces, cursor = [], closest.start
        for start, end in closest.differences:
            pieces += [isolated(text[cursor:start]), f"[<ins>{esc(text[start:end])}</ins>]"]
            cursor = end
        pieces.append(isolated(text[cursor : closest.end]))
        passage = "".join(pieces)
        said = (
            f"each word that differs from the {esc(closeness.to)} is in [brackets] and underlined"
        )
    return (
        f"<p>The {esc(closeness.to)} is not in the stored text. The passage most like it "
        f"(score {closest.score:.2f}, the share of its words that are equal) is outlined "
        f"below; {said}.</p>\n"
        + excerpt(text, closest.start, closest.end, f'<span class="closest">{passage}</span>')
    )


def aligned_passage(closest: Closest, to: str) -> str:
    """The closest passage, escaped, with only the words that differ marked by its alignment:
    a source word the quote drops (or changes) in ``<del>``, a word the quote adds (or has
    instead) in ``<ins>``, each with its sign and brackets as text (``records.passage_marks``)
    and a title saying which side has it, so no difference is shown by colour or line alone."""
    steps = closest.alignment
    opening, closing = marks_outside([closest.text, *(edit.quote for edit in steps)])
    titles = {ADDED: f"in the {to}, not in the source", DROPPED: f"in the source, not in the {to}"}
    tags = {ADDED: "ins", DROPPED: "del"}
    shown = []
    for piece in passage_pieces(closest.text, closest.start, steps):
        if piece.kind == SAME:
            shown.append(isolated(piece.text))
            continue
        tag, sign = tags[piece.kind], SIGNS[piece.kind]
        shown.append(
            f'<{tag} title="{esc(titles[piece.kind])}">{esc(opening + sign)}'
            f"{esc(piece.text)}{esc(closing)}</{tag}>"
        )
    return "".join(shown)


def link_section(entry: Entry) -> str:
    if entry.link is None:
        return ""
    return (
        "<section>\n<h3>On the live page</h3>\n"
        f'<p><a href="{esc(entry.link)}" rel="noreferrer noopener">Open the live page at the '
        "quote</a> (a text-fragment link).</p>\n"
        f'<p class="note">{esc(LINK_NOTE)}</p>\n</section>'
    )


def provenance_section(entry: Entry) -> str:
    snapshot = entry.report.snapshot
    if snapshot is None:
        return "<section>\n<h3>Provenance</h3>\n<p>No snapshot is recorded.</p>\n</section>"
    capture = entry.capture
    facts = [
        ("Cited URL", inline(entry.report.citation.url or "none")),
        *capture_facts(capture),
        ("Snapshot id (SHA-256 of the raw bytes)", code(snapshot.snapshot_id)),
        ("Raw bytes", f"{esc(snapshot.raw_size)} bytes, {inline(snapshot.content_type)}"),
        *text_facts(entry),
        ("Store", code(snapshot.store)),
        (
            "Version ids",
            f"raw {code(snapshot.raw_version_id or '-')}, text "
            f"{code((entry.evidence.text_version_id if entry.evidence else None) or '-')}",
        ),
        ("Retention", retention(snapshot)),
        ("Recorded", time(snapshot.recorded_at)),
    ]
    rows = "\n".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in facts)
    blobs = "\n".join(blob_item(blob) for blob in snapshot.blobs)
    return (
        f'<section>\n<h3>Provenance</h3>\n<dl class="facts">\n{rows}\n</dl>\n'
        f"<h3>Stored blobs, re-hashed while this page was made</h3>\n<ul>\n{blobs}\n</ul>\n"
        "</section>"
    )


def capture_facts(capture: CaptureRecord | None) -> list[tuple[str, str]]:
    if capture is None:
        return [("Captured", "no stored capture of this snapshot is recorded")]
    provenance = capture.provenance
    shown = (
        "Capture shown",
        f"capture {esc(capture.capture_id)}, {esc(capture_method(capture))}: the one the latest"
        " check read the snapshot through (the one the exports hold)",
    )
    if provenance.get("source") == "warc":
        return [shown, *imported_facts(capture, provenance)]
    facts = [shown, ("Captured from", inline(capture.url))]
    if capture.final_url and capture.final_url != capture.url:
        facts.append(("Final URL", inline(capture.final_url)))
    for hop in provenance.get("redirects") or []:
        facts.append(
            (
                "Redirect",
                f"{inline(hop.get('url'))} → HTTP {esc(hop.get('status'))} → "
                f"{inline(hop.get('location'))}",
            )
        )
    facts.append(("Capture time", time(capture.fetched_at)))
    if capture.http_status:
        facts.append(("HTTP status", esc(capture.http_status)))
    if provenance.get("source") == "file":
        facts.append(("Read from", f"a local file, {inline(provenance.get('path'))}"))
    if provenance.get("ip"):
        port = f" port {esc(provenance['port'])}" if provenance.get("port") else ""
        facts.append(("Server address", f"{code(provenance['ip'])}{port}"))
    facts.append(
        (
            "TLS certificate SHA-256",
            code(provenance["tlsCertSha256"])
            if provenance.get("tlsCertSha256")
            else "none (not fetched over TLS)",
        )
    )
    if provenance.get("userAgent"):
        facts.append(("User agent", inline(provenance["userAgent"])))
    headers = provenance.get("headers") or {}
    if isinstance(headers, dict) and headers:
        listed = "<br>".join(f"{inline(k)}: {inline(v)}" for k, v in headers.items())
        facts.append(("Response headers recorded", listed))
    return facts + rendered_text_facts(provenance) + seal_facts(capture)


def rendered_text_facts(provenance: Mapping[str, Any]) -> list[tuple[str, str]]:
    """For a browser capture: what its rendered text left out as unseen, added, kept under an
    overlay and could not read (snapshotter.browser.text_record), one sentence a line."""
    browser = provenance.get("browser")
    if not isinstance(browser, dict) or not isinstance(browser.get("text"), dict):
        return []
    from snapshotter.browser.text_record import text_summary_words

    said = text_summary_words(browser["text"])
    if not said:
        return [("Rendered text", "nothing left out as unseen, added from CSS, or not read")]
    return [("Rendered text", "<br>".join(esc(sentence) for sentence in said))]


def imported_facts(capture: CaptureRecord, provenance: Mapping[str, Any]) -> list[tuple[str, str]]:
    """An imported capture: where it came from, and what its archive claims, never shown as
    facts of a capture by snap (its date, peer address and software are the archive's word)."""
    warc = provenance.get("warc") or {}
    software = claimed_software(dict(provenance))
    facts = [
        (
            "Imported from",
            f"{inline(warc.get('file'))} (SHA-256 {code(warc.get('fileDigest') or '-')},"
            f" record {code(warc.get('recordId') or '-')}): not captured by snap",
        ),
        ("Captured by, as the archive states", inline(software)),
        ("Archived URL", inline(capture.url)),
        ("Capture time, as the archive states", time(capture.fetched_at)),
    ]
    if capture.http_status:
        facts.append(("HTTP status, as archived", esc(capture.http_status)))
    if provenance.get("ip"):
        facts.append(("Server address, as the archive states", code(provenance["ip"])))
    facts.append(("Archive signature", esc(provenance.get("archiveSignature") or "none carried")))
    attested = provenance.get("archiveAttestation")
    facts.append(("Archive attestation", esc(attested or "none carried")))
    return facts + seal_facts(capture)


def seal_facts(capture: CaptureRecord) -> list[tuple[str, str]]:
    """The manifest's signature and trusted timestamp, checked while the page was made."""
    seal = capture.seal
    manifest = capture.provenance.get("manifest") or {}
    if seal is None:
        return [("Manifest", "none (recorded before manifests were kept)")]
    verdict = "" if seal.intact else " — FAILED: " + "; ".join(seal.problems)
    return [
        ("Manifest SHA-256", code(manifest.get("hash") or "-") + esc(verdict)),
        ("Manifest signature", esc(seal.signature)),
        ("Trusted timestamp", esc(seal.timestamp)),
        ("Capture time and the timestamp", esc(seal.capture_time_words())),
        ("Verifiable log", log_fact(capture.log_proof)),
        (
            "Check it yourself",
            "the manifest, its signature and token, and the inclusion proofs are in this page,"
            " with the openssl commands that check them (below, under “Check the seals and the"
            f" log yourself”); {code('snap attest')} prints the same commands",
        ),
    ]


def log_fact(proof: Mapping[str, Any] | None) -> str:
    """Where the capture is in the log, and the proof, in words and as data."""
    if not proof:
        return "not in the log (recorded before the log was kept)"
    checkpoint = proof.get("checkpoint")
    if not checkpoint:
        return f"entry {esc(proof['position'])}; no checkpoint covers it yet"
    data = json.dumps(dict(proof), sort_keys=True)
    return (
        f"entry {esc(proof['position'])} of {esc(proof['treeSize'])}, proved against the signed"
        f" checkpoint {esc(checkpoint['id'])} (root {code(checkpoint['rootHash'])})"
        f"; the inclusion proof (RFC 9162): {code(data)}"
    )


def text_facts(entry: Entry) -> list[tuple[str, str]]:
    evidence = entry.evidence
    if evidence is None or evidence.text_hash is None:
        return [("Text", "none extracted")]
    return [
        ("Text hash (SHA-256)", code(evidence.text_hash)),
        ("Normalized text hash", code(evidence.norm_hash or "-")),
        ("Extraction", f"{esc(evidence.extraction_id)}, by {code(evidence.extractor)}"),
        ("Normalizer", code(evidence.normalizer)),
    ]


def retention(snapshot: AuditedSnapshot) -> str:
    if not snapshot.lock_mode:
        return "no retention (the stored blobs can be deleted)"
    return f"{esc(snapshot.lock_mode)} until {time(snapshot.retain_until)}"


BLOB_STATES = {
    BlobState.INTACT: "intact: the recorded version hashes to its digest",
    BlobState.SHADOWED: (
        "SHADOWED: the recorded version is intact, but something newer sits on top of it "
        "in the store"
    ),
    BlobState.DAMAGED: "DAMAGED: the recorded version does not hash to its digest",
    BlobState.MISSING: "MISSING: the recorded version is gone from its store",
}


def blob_item(blob: BlobCheck) -> str:
    words = BLOB_STATES[blob.state]
    detail = f" ({inline(blob.detail)})" if blob.detail else ""
    return f"<li>{esc(blob.kind)} {code(blob.key)}: {esc(words)}{detail}</li>"


def timeline_section(
    checks: Sequence[VerificationRecord], reads: Mapping[int, CheckRead] | None = None
) -> str:
    if not checks:
        return ""
    items = "\n".join(
        timeline_item(check, (reads or {}).get(check.verification_id)) for check in checks
    )
    return (
        "<section>\n<h3>Verification timeline</h3>\n"
        '<p class="note">Every check of this citation, oldest first, from snap\'s append-only '
        "log.</p>\n"
        f'<ol class="timeline">\n{items}\n</ol>\n</section>'
    )


def timeline_item(check: VerificationRecord, read: CheckRead | None = None) -> str:
    status = check.status
    mark = "✓" if status.passed else "✗"
    span = check.span
    where = f", code points {span[0]}–{span[1]}" if span else ""
    reason = f"; {inline(check.reason)}" if check.reason else ""
    snapshot = check.snapshot_id
    proof = check.log_proof
    logged = f'<br><span class="note">Verifiable log: {log_fact(proof)}</span>' if proof else ""
    against = f"<br>Against {read_words(read)}." if read is not None and snapshot else ""
    return (
        f'<li>{time(check.checked_at)} <span aria-hidden="true">{mark}</span> '
        f"<strong>{esc(status.headline)}</strong> in "
        f"{code(snapshot) if snapshot else 'no snapshot'}{where}{reason} "
        f'<span class="note">({esc(check.verifier)})</span>{against}{logged}</li>'
    )


def captures_section(captures: Sequence[CaptureRecord], shown: CaptureRecord | None = None) -> str:
    if not captures:
        return ""
    number = shown.capture_id if shown is not None else None
    items = "\n".join(capture_item(c, shown=c.capture_id == number) for c in captures)
    return (
        "<section>\n<h3>Every capture of this URL</h3>\n"
        f'<ol class="captures">\n{items}\n</ol>\n</section>'
    )


def capture_item(capture: CaptureRecord, *, shown: bool = False) -> str:
    """One capture in the list, by its id and how it was made; an imported one with its date
    and status as the archive's word, never as a capture by snap."""
    stored = f": {code(capture.snapshot_id)}" if capture.snapshot_id else ""
    mark = " (shown above: the capture the latest check read)" if shown else ""
    if capture.method == "import":
        return (
            f"<li>capture {esc(capture.capture_id)}, imported ({time(capture.fetched_at)}, HTTP"
            f" {esc(capture.http_status)}, as the archive states){stored}{mark}</li>"
        )
    return (
        f"<li>capture {esc(capture.capture_id)}, {esc(capture_method(capture))}:"
        f" {time(capture.fetched_at)} {esc(capture.outcome)}"
        + (f", HTTP {esc(capture.http_status)}" if capture.http_status else "")
        + stored
        + (f": {inline(capture.error)}" if capture.error else "")
        + mark
        + "</li>"
    )


def capture_method(capture: CaptureRecord) -> str:
    """How the capture was made, as recorded (or, for one recorded before the method was, as
    its provenance shows: ``records.attest.manifest.method_of``)."""
    return method_of(dict(capture.provenance), capture.url, capture.method or "").value


def proofs_section(entry: Entry, anchor: str) -> str:
    """The seals and log proofs of what the entry shows, as data: each file the commands read
    as a ``data:`` link to save, the commands (as ``snap attest`` prints them), and the
    export's attestation lines themselves in a JSON data block (never run), so the page and
    openssl are enough to check what the provenance above says in words."""
    lines = entry.attestations
    if not lines:
        return ""
    files: dict[str, bytes] = {}
    commands: list[str] = []
    for line in lines:
        files.update(export_line_files(line))
        commands += export_line_commands(line)
    links = "\n".join(f"<li>{file_link(name, data)}</li>" for name, data in files.items())
    shown = "\n".join(dict.fromkeys(commands))
    return (
        "<section>\n<h3>Check the seals and the log yourself</h3>\n"
        "<p>The manifest of each capture shown, its signature and public key, its RFC 3161"
        " timestamp token, and the inclusion proof of each capture and check with the signed"
        " checkpoint it is proved against, exactly as snap's exports hold them. Save these"
        " files into one folder, with <code>check_inclusion.py</code> (below) and the"
        f" authority's CA certificate as {code(TSA_CHAIN_FILE)}, then run the commands.</p>\n"
        f'<ul class="files">\n{links}\n</ul>\n'
        f'<pre class="commands"><code>{esc(shown)}</code></pre>\n'
        '<p class="note">The same pieces as data (the lines of the exports\' attestations:'
        " manifest text, signature and token in base64, inclusion proof and checkpoint), in the"
        f" data block <code>{esc(anchor)}-attestations</code> of this file.</p>\n"
        f'<script type="application/json" id="{esc(anchor)}-attestations">'
        f"{json_data(list(lines))}</script>\n</section>"
    )


def file_link(name: str, data: bytes) -> str:
    """A link that saves ``data`` as ``name`` (a download, never a navigation), with its size
    and SHA-256."""
    encoded = base64.b64encode(data).decode("ascii")
    digest = hashlib.sha256(data).hexdigest()
    return (
        f'<a download="{esc(name)}" href="data:application/octet-stream;base64,{encoded}">'
        f"{esc(name)}</a> ({len(data)} bytes, SHA-256 {code(digest)})"
    )


def json_data(value: Any) -> str:
    """JSON for a data block: ``<`` written as ``\\u003c`` (the same JSON), so nothing in it
    can end the element or open a comment."""
    return json.dumps(value, ensure_ascii=False).replace("<", "\\u003c")
