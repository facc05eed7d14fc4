"""Turn stored bytes into text, deterministically, by what the bytes are.

``extract(path, declared_content_type)`` sniffs the bytes (the declared type is a hint), then
uses trafilatura for HTML, pypdf for PDF, a strict decoder for plain text, and nothing for
anything else.  Every result names its extractor with the version and the settings that
change the output, so the same bytes and the same extractor id always give the same text.

Importing this package loads only the result types: every command that reads records (``snap
verify``, ``audit``) imports them through ``snapshotter.capture``, and must not pay for lxml,
the HTML and PDF extractors and their patterns.  ``extract`` imports the sniffer and the one
extractor it needs when it runs; ``html_extractor_id``, ``pdf_extractor_id`` and
``PAGE_SEPARATOR`` are imported from their modules.
"""

from __future__ import annotations

from pathlib import Path

from snapshotter.errors import ExtractionError
from snapshotter.extract.result import (
    FLAG_NO_EXTRACTABLE_TEXT,
    FLAG_NO_TEXT_EXTRACTOR,
    FLAG_TOO_SHORT,
    FLAGS,
    MIN_TEXT_CHARS,
    MIN_TEXT_WORDS,
    Extraction,
    Page,
    without_text,
)

NO_EXTRACTOR = "none"


def extract(source: Path | bytes, declared_content_type: str | None) -> Extraction:
    """Extract the text of ``source``: bytes, or the file at a path.

    Raises ExtractionError when bytes that are text cannot be decoded faithfully.  Every
    other outcome is an ``Extraction``, possibly without text and with a flag saying why.
    """
    from snapshotter.extract.sniff import SNIFF_BYTES, sniff

    if isinstance(source, bytes):
        head = source[:SNIFF_BYTES]
    else:
        with source.open("rb") as handle:
            head = handle.read(SNIFF_BYTES)
    sniffed = sniff(head, declared_content_type)
    if sniffed.kind == "pdf":
        from snapshotter.extract.pdf import extract_pdf

        return extract_pdf(source)
    if sniffed.kind == "html":
        from snapshotter.extract.html import extract_html

        return extract_html(_whole(source), declared_content_type)
    if sniffed.kind == "text":
        return _extract_plain(_whole(source), declared_content_type, sniffed.media_type)
    return _no_extractor(sniffed.media_type)


def _whole(source: Path | bytes) -> bytes:
    return source if isinstance(source, bytes) else source.read_bytes()


def _extract_plain(data: bytes, declared: str | None, content_type: str) -> Extraction:
    """Text-looking bytes: an undecodable file is an error only when it claims to be text."""
    from snapshotter.extract.sniff import media_type
    from snapshotter.extract.text import extract_text

    try:
        return extract_text(data, declared, content_type)
    except ExtractionError:
        declared_type = media_type(declared)
        if declared_type is None or declared_type.startswith("text/"):
            raise
        return _no_extractor(declared_type)


def _no_extractor(content_type: str) -> Extraction:
    return without_text(
        content_type,
        NO_EXTRACTOR,
        FLAG_NO_TEXT_EXTRACTOR,
        f"no text extractor for {content_type}; only the raw bytes are kept",
    )


__all__ = [
    "FLAGS",
    "FLAG_NO_EXTRACTABLE_TEXT",
    "FLAG_NO_TEXT_EXTRACTOR",
    "FLAG_TOO_SHORT",
    "MIN_TEXT_CHARS",
    "MIN_TEXT_WORDS",
    "NO_EXTRACTOR",
    "Extraction",
    "Page",
    "extract",
]
