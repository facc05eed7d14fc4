"""Decide what the bytes are from the bytes; the declared Content-Type is only a hint.

Servers mislabel: PDFs come as ``application/octet-stream``, HTML as ``text/plain``, login
walls as ``application/pdf``.  The rules follow the spirit of the WHATWG MIME sniffing
standard: magic numbers first, then HTML markers after whitespace, then "does this look like
text at all" (no binary control bytes).
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from email.message import Message
from typing import Literal

SNIFF_BYTES = 4096
PDF_MAGIC = b"%PDF-"
PDF_HEADER_WINDOW = 1024  # readers accept the header anywhere in the first KiB

Kind = Literal["pdf", "html", "text", "binary"]

_BINARY_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"PK\x03\x04", "application/zip"),
    (b"\x1f\x8b", "application/gzip"),
)
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_HTML_MARKERS = re.compile(
    rb"<(?:!doctype\s+html|html|head|body|script|iframe|h1|div|font|table|a|style|title|b|br|p"
    rb"|!--)(?:[\s>]|$)"
)
_XML_DECLARATION = re.compile(rb"<\?xml[^>]*\?>\s*")
_LEADING_COMMENT = re.compile(rb"<!--.*?-->\s*", re.DOTALL)
_BINARY_BYTES = re.compile(rb"[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f]")
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})


@dataclass(frozen=True)
class Sniffed:
    kind: Kind
    media_type: str  # what the content is taken to be, for the record


def media_type(declared: str | None) -> str | None:
    """``text/html`` from ``text/HTML; charset=utf-8``; None when absent or malformed."""
    if not declared:
        return None
    value = declared.split(";", 1)[0].strip().lower()
    return value if "/" in value else None


def declared_charset(declared: str | None) -> str | None:
    """The Python codec name for the declared charset, or None when absent or unknown."""
    if not declared:
        return None
    message = Message()
    message["content-type"] = declared
    charset = message.get_param("charset")
    if not isinstance(charset, str):
        return None
    try:
        return codecs.lookup(charset.strip()).name
    except LookupError:
        return None


def bom_encoding(data: bytes) -> str | None:
    """The codec a byte-order mark at the start of ``data`` asks for."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return encoding
    return None


def sniff(head: bytes, declared: str | None) -> Sniffed:
    """Classify the first ``SNIFF_BYTES`` of a blob."""
    if PDF_MAGIC in head[:PDF_HEADER_WINDOW]:
        return Sniffed("pdf", "application/pdf")
    markup = _markup_prefix(head, declared)
    if markup is not None and _looks_like_html(markup, media_type(declared)):
        return Sniffed("html", "text/html")
    if markup is None:
        for magic, binary_type in _BINARY_MAGIC:
            if head.startswith(magic):
                return Sniffed("binary", binary_type)
        return Sniffed("binary", media_type(declared) or "application/octet-stream")
    return Sniffed("text", _text_media_type(media_type(declared)))


def _markup_prefix(head: bytes, declared: str | None) -> bytes | None:
    """The head as lower-case ASCII-compatible bytes, or None when it is not text at all."""
    encoding = bom_encoding(head) or declared_charset(declared)
    if encoding is not None and encoding.startswith(("utf-16", "utf-32")):
        text = head.decode(encoding, errors="ignore")
        return text.encode("ascii", errors="replace").lower()
    body = head.removeprefix(codecs.BOM_UTF8)
    if _BINARY_BYTES.search(body):
        return None
    return body.lower()


def _looks_like_html(markup: bytes, declared_type: str | None) -> bool:
    rest = markup.lstrip()
    rest = _XML_DECLARATION.sub(b"", rest, count=1)
    while (comment := _LEADING_COMMENT.match(rest)) is not None:
        rest = rest[comment.end() :]
    if _HTML_MARKERS.match(rest):
        return True
    return declared_type in _HTML_TYPES and rest.startswith(b"<")


def _text_media_type(declared_type: str | None) -> str:
    """Keep a textual declared type (text/csv, application/json); otherwise text/plain."""
    if declared_type is None:
        return "text/plain"
    textual = declared_type.startswith("text/") or declared_type.endswith(
        ("/json", "/xml", "+json", "+xml", "/javascript")
    )
    return declared_type if textual and declared_type not in _HTML_TYPES else "text/plain"
