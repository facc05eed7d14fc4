"""Small PDFs written by hand, so PDF tests need no PDF-writing dependency.

``build_pdf([["line 1", "line 2"], ["page two"]])`` gives a valid PDF 1.4 file whose pages
draw their lines with Helvetica ``Tj`` operators; ``labels`` adds a /PageLabels number tree
(roman front matter, then arabic numbers, ...); ``image_pages`` makes pages that only paint
an image, as a scanned document does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

_IMAGE = b"\x00\xff\xff\x00"  # 2x2 grey pixels


@dataclass(frozen=True)
class LabelRange:
    """Pages from ``first_page`` (0-based) on are labelled ``prefix`` + number in ``style``.

    Styles as in the PDF spec: "D" decimal, "r"/"R" roman, "a"/"A" letters, None no number.
    """

    first_page: int
    style: str | None = "D"
    prefix: str = ""
    start: int = 1


def _pdf_string(text: str) -> bytes:
    escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    return b"(" + escaped.encode("cp1252") + b")"


def _text_stream(lines: Sequence[str]) -> bytes:
    parts = [b"BT", b"/F1 12 Tf", b"14 TL", b"72 720 Td"]
    for number, line in enumerate(lines):
        if number:
            parts.append(b"T*")
        parts.append(_pdf_string(line) + b" Tj")
    parts.append(b"ET")
    return b"\n".join(parts)


def _stream_object(dictionary: bytes, data: bytes) -> bytes:
    return b"<< " + dictionary + b" /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"


def _labels_object(labels: Sequence[LabelRange]) -> bytes:
    entries = []
    for label in labels:
        fields = []
        if label.style:
            fields.append(b"/S /" + label.style.encode("ascii"))
        if label.prefix:
            fields.append(b"/P " + _pdf_string(label.prefix))
        if label.start != 1:
            fields.append(b"/St %d" % label.start)
        entries.append(b"%d << %s >>" % (label.first_page, b" ".join(fields)))
    return b"<< /Nums [" + b" ".join(entries) + b"] >>"


def build_pdf(
    pages: Sequence[Sequence[str]],
    *,
    labels: Sequence[LabelRange] = (),
    image_pages: Sequence[int] = (),
) -> bytes:
    """A PDF with one page per entry of ``pages`` (each a list of text lines).

    Pages whose index is in ``image_pages`` carry an image and no text instead.
    """
    # Object numbers: 1 catalog, 2 page tree, 3 font, 4 image, 5 labels, then per page
    # a page object and its content stream.
    objects: dict[int, bytes] = {
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        4: _stream_object(
            b"/Type /XObject /Subtype /Image /Width 2 /Height 2 /ColorSpace /DeviceGray"
            b" /BitsPerComponent 8",
            _IMAGE,
        ),
    }
    kids = []
    for index, lines in enumerate(pages):
        page_number, content_number = 6 + 2 * index, 7 + 2 * index
        kids.append(b"%d 0 R" % page_number)
        if index in image_pages:
            content = b"q 200 0 0 200 100 400 cm /Im1 Do Q"
        else:
            content = _text_stream(lines)
        objects[page_number] = (
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792]"
            b" /Resources << /Font << /F1 3 0 R >> /XObject << /Im1 4 0 R >> >>"
            b" /Contents %d 0 R >>" % content_number
        )
        objects[content_number] = _stream_object(b"", content)
    objects[2] = b"<< /Type /Pages /Kids [" + b" ".join(kids) + b"] /Count %d >>" % len(pages)
    catalog = b"<< /Type /Catalog /Pages 2 0 R"
    if labels:
        objects[5] = _labels_object(labels)
        catalog += b" /PageLabels 5 0 R"
    objects[1] = catalog + b" >>"
    return _serialize(objects)


def _serialize(objects: dict[int, bytes]) -> bytes:
    size = max(objects) + 1
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets: dict[int, int] = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += b"%d 0 obj\n" % number + objects[number] + b"\nendobj\n"
    xref_at = len(out)
    out += b"xref\n0 %d\n" % size
    out += b"0000000000 65535 f \n"
    for number in range(1, size):
        if number in offsets:
            out += b"%010d 00000 n \n" % offsets[number]
        else:
            out += b"0000000000 65535 f \n"
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size, xref_at)
    return bytes(out)
