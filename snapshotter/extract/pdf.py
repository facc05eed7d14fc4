"""PDF: text page by page with pypdf, and a page map from code points back to pages.

Running headers, footers and page numbers are taken out of the text flow and kept in the
page map (``Page.furniture``, see ``pdf_furniture``), so a sentence that runs across a page
break is one contiguous sentence.  Pages are joined with ``PAGE_SEPARATOR``, a line break
(a page break inside a sentence is a line break in its flow), which belongs to no page, so
``text[page.start:page.end]`` is exactly the text pypdf extracted from that page without its
furniture, and a span of the text covers the pages whose ranges it overlaps.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Literal

from snapshotter.extract.pdf_furniture import FURNITURE_RULE, split_furniture
from snapshotter.extract.result import (
    FLAG_NO_EXTRACTABLE_TEXT,
    Extraction,
    Page,
    with_text,
    without_text,
)

PDF = "application/pdf"
PAGE_SEPARATOR = "\n"
EXTRACTION_MODE: Literal["plain"] = "plain"


def pdf_extractor_id() -> str:
    import pypdf

    return f"pypdf@{pypdf.__version__}+mode={EXTRACTION_MODE},sep=lf1,furniture={FURNITURE_RULE}"


def extract_pdf(path: Path | bytes) -> Extraction:
    from pypdf import PasswordType, PdfReader
    from pypdf.errors import DependencyError, PyPdfError

    extractor = pdf_extractor_id()
    try:
        reader = PdfReader(path if isinstance(path, Path) else io.BytesIO(path))
        if reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED:
            return without_text(
                PDF,
                extractor,
                FLAG_NO_EXTRACTABLE_TEXT,
                "the PDF is encrypted and needs a password to open",
            )
        page_texts = [page.extract_text(extraction_mode=EXTRACTION_MODE) for page in reader.pages]
        labels = list(reader.page_labels)
    except DependencyError as error:
        return without_text(
            PDF, extractor, FLAG_NO_EXTRACTABLE_TEXT, f"the PDF cannot be opened here: {error}"
        )
    except (PyPdfError, ValueError, KeyError, IndexError, TypeError, AttributeError) as error:
        # Hostile or broken files make pypdf fail in many ways; the raw bytes are still kept.
        return without_text(
            PDF,
            extractor,
            FLAG_NO_EXTRACTABLE_TEXT,
            f"the PDF cannot be parsed ({type(error).__name__})",
        )
    if not any(text.strip() for text in page_texts):
        return without_text(
            PDF,
            extractor,
            FLAG_NO_EXTRACTABLE_TEXT,
            "the PDF has no text layer (scanned or image-only pages)",
        )
    text, pages = _join_pages(page_texts, labels)
    return with_text(PDF, text, extractor, pages)


def _join_pages(page_texts: list[str], labels: list[str]) -> tuple[str, tuple[Page, ...]]:
    labels = [labels[i] if i < len(labels) else str(i + 1) for i in range(len(page_texts))]
    split = split_furniture(page_texts, labels)
    pages: list[Page] = []
    position = 0
    for index, page in enumerate(split):
        if index:
            position += len(PAGE_SEPARATOR)
        end = position + len(page.body)
        pages.append(Page(index, labels[index], position, end, page.furniture))
        position = end
    return PAGE_SEPARATOR.join(page.body for page in split), tuple(pages)
