"""PDF extraction: page by page, a page map that slices back to each page, and labels."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pypdf
import pytest

from snapshotter.extract import FLAG_NO_EXTRACTABLE_TEXT, Extraction, extract
from snapshotter.extract.pdf import PAGE_SEPARATOR, pdf_extractor_id
from snapshotter.fetch import FetchOptions, fetching
from tests.http_fixtures import LoopbackServer
from tests.pdf_fixtures import LabelRange, build_pdf
from tests.snapshotter.samples import PAGES

LABELS = [LabelRange(0, "r"), LabelRange(2, "D")]


def _extract_bytes(tmp_path: Path, data: bytes, declared: str | None = None) -> Extraction:
    path = tmp_path / "doc.pdf"
    path.write_bytes(data)
    return extract(path, declared)


def test_served_pdf_has_a_page_map_with_labels(
    http_server: LoopbackServer, options: Callable[..., FetchOptions]
) -> None:
    http_server.route(
        "/report.pdf", body=build_pdf(PAGES, labels=LABELS), content_type="application/pdf"
    )
    with fetching(http_server.url("/report.pdf"), options()) as fetched:
        result = extract(fetched.path, fetched.declared_content_type)
    assert result.content_type == "application/pdf"
    assert result.extractor == pdf_extractor_id()
    assert result.extractor.startswith(f"pypdf@{pypdf.__version__}+")
    assert result.flags == ()
    assert result.text is not None
    assert [page.label for page in result.pages] == ["i", "ii", "1", "2"]
    assert [page.index for page in result.pages] == [0, 1, 2, 3]
    for page, lines in zip(result.pages, PAGES, strict=True):
        assert result.text[page.start : page.end] == "\n".join(lines)
    for before, after in zip(result.pages, result.pages[1:], strict=False):
        assert result.text[before.end : after.start] == PAGE_SEPARATOR
    assert result.pages[-1].end == len(result.text)


def test_page_labels_default_to_page_numbers(tmp_path: Path) -> None:
    result = _extract_bytes(tmp_path, build_pdf(PAGES[:2]))
    assert [page.label for page in result.pages] == ["1", "2"]


def test_prefixed_labels(tmp_path: Path) -> None:
    data = build_pdf(PAGES, labels=[LabelRange(0, "D", prefix="A-", start=5)])
    result = _extract_bytes(tmp_path, data)
    assert [page.label for page in result.pages] == ["A-5", "A-6", "A-7", "A-8"]


def test_pdf_is_sniffed_despite_the_header(tmp_path: Path) -> None:
    result = _extract_bytes(tmp_path, build_pdf(PAGES), "text/html")
    assert result.content_type == "application/pdf"
    assert result.text is not None
    assert "42 percent" in result.text


def test_image_only_pdf_has_no_extractable_text(tmp_path: Path) -> None:
    result = _extract_bytes(tmp_path, build_pdf([[], []], image_pages=[0, 1]))
    assert result.text is None
    assert result.flags == (FLAG_NO_EXTRACTABLE_TEXT,)
    assert result.reason is not None
    assert "no text layer" in result.reason


def _encrypted(user_password: str) -> bytes:
    writer = pypdf.PdfWriter(clone_from=io.BytesIO(build_pdf(PAGES)))
    writer.encrypt(user_password=user_password, owner_password="owner", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_password_protected_pdf_has_no_extractable_text(tmp_path: Path) -> None:
    result = _extract_bytes(tmp_path, _encrypted("secret"))
    assert result.text is None
    assert result.flags == (FLAG_NO_EXTRACTABLE_TEXT,)
    assert result.reason is not None
    assert "encrypted" in result.reason


def test_pdf_encrypted_with_empty_user_password_is_read(tmp_path: Path) -> None:
    result = _extract_bytes(tmp_path, _encrypted(""))
    assert result.flags == ()
    assert result.text is not None
    assert "42 percent" in result.text


def test_broken_pdf_has_no_extractable_text(tmp_path: Path) -> None:
    result = _extract_bytes(tmp_path, b"%PDF-1.4\n1 0 obj << /Type /Catalog >> garbage")
    assert result.text is None
    assert result.flags == (FLAG_NO_EXTRACTABLE_TEXT,)
    assert result.reason is not None
    assert "cannot be parsed" in result.reason


def test_short_pdf_is_not_flagged(tmp_path: Path) -> None:
    """A short PDF is a short document, not a login wall: only HTML gets too_short."""
    result = _extract_bytes(tmp_path, build_pdf([["Sign in to view this document."]]))
    assert result.text == "Sign in to view this document."
    assert result.flags == ()


@pytest.mark.parametrize("count", [1, 3])
def test_page_map_covers_every_page(tmp_path: Path, count: int) -> None:
    result = _extract_bytes(tmp_path, build_pdf(PAGES[:count]))
    assert len(result.pages) == count
