"""Plain text: decoded faithfully or not at all.

The order is byte-order mark, then the declared charset, then strict UTF-8.  A declared
charset that is unknown or not a text encoding (``rot13``, ``base64``, ``punycode``) is
ignored and the text decoded by detection; the extractor id then ends in ``+detected`` so the
record says the charset was not the one declared.  Nothing is ever
decoded with replacement characters: a quote checked against a text with U+FFFD in it could
pass or fail for reasons that have nothing to do with the source.  Line endings are kept as
they are (offsets into the text must match the bytes a reader sees).
"""

from __future__ import annotations

from snapshotter.errors import ExtractionError
from snapshotter.extract.result import Extraction, with_text
from snapshotter.extract.sniff import bom_encoding, charset_label, declared_charset

TEXT_EXTRACTOR_VERSION = 1


def decode_text(data: bytes, declared: str | None) -> tuple[str, str]:
    """The decoded text and the codec that decoded it; ExtractionError when none does.

    A declared charset that does not fit the bytes falls through to UTF-8, because servers
    often declare ``us-ascii`` or ``iso-8859-1`` for files that are really UTF-8.
    """
    bom = bom_encoding(data)
    if bom is not None:
        try:
            return data.decode(bom), bom
        except UnicodeDecodeError as error:
            raise ExtractionError(
                f"the text starts with a {bom} byte-order mark but is not valid {bom}"
                f" at byte {error.start}"
            ) from None
    candidates = [declared_charset(declared), "utf-8"]
    for encoding in dict.fromkeys(name for name in candidates if name):
        try:
            return data.decode(encoding), encoding
        except UnicodeDecodeError:
            continue
    charset = declared_charset(declared)
    if charset and charset != "utf-8":
        raise ExtractionError(f"the text is neither valid {charset} (as declared) nor valid UTF-8")
    label = charset_label(declared)
    if label is not None and charset is None:
        raise ExtractionError(
            f"the declared charset {label[:MAX_SHOWN]!r} is not a text encoding snap can use,"
            " and the text is not valid UTF-8"
        )
    raise ExtractionError(
        f"the text is not valid UTF-8 (at byte {_first_invalid_utf8(data)}) and declares no"
        " charset; a file in another encoding can be converted first (iconv -f ENCODING"
        " -t UTF-8), or served with its charset"
    )


def _first_invalid_utf8(data: bytes) -> int:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        return error.start
    return len(data)


MAX_SHOWN = 40


def extract_text(data: bytes, declared: str | None, content_type: str) -> Extraction:
    text, encoding = decode_text(data, declared)
    extractor = f"text@{TEXT_EXTRACTOR_VERSION}+charset={encoding}"
    declared_label = charset_label(declared)
    if bom_encoding(data) is None and declared_label and encoding != declared_charset(declared):
        extractor += "+detected"  # the declared charset was unknown, refused or did not fit
    return with_text(content_type, text, extractor)
