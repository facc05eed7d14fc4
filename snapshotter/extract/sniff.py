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


# Codecs Python calls "text encodings" that are not character sets: they transform text
# (punycode, idna, the escape codecs), decode nothing (undefined), or smuggle markup past
# filters (utf-7, refused by the WHATWG Encoding Standard for that reason).
_NOT_CHARSETS = frozenset(
    {
        "punycode",
        "idna",
        "undefined",
        "unicode-escape",
        "raw-unicode-escape",
        "utf-7",
        "charmap",
        "mbcs",
        "oem",
    }
)
MAX_CHARSET_LABEL = 64


def charset_label(declared: str | None) -> str | None:
    """The ``charset`` parameter exactly as declared (stripped), or None when there is none."""
    if not declared:
        return None
    message = Message()
    message["content-type"] = declared
    charset = message.get_param("charset")
    if not isinstance(charset, str) or not charset.strip():
        return None
    return charset.strip()


def text_codec(label: str) -> str | None:
    """The Python codec for a charset label, or None unless it is a real text encoding.

    ``codecs.lookup`` also finds bytes-to-bytes transforms (base64, hex, zlib, rot13) and text
    transforms (punycode, idna): decoding a page "as base64" is not reading it, so only
    codecs that map bytes to characters qualify.
    """
    if len(label) > MAX_CHARSET_LABEL:
        return None
    try:
        info = codecs.lookup(label)
    except (LookupError, ValueError, TypeError):
        return None
    if not getattr(info, "_is_text_encoding", True) or info.name in _NOT_CHARSETS:
        return None
    return info.name


def declared_charset(declared: str | None) -> str | None:
    """The codec of the declared charset, or None when absent, unknown or not a text encoding."""
    label = charset_label(declared)
    return None if label is None else text_codec(label)


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
