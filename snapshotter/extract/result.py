"""What an extraction produces: the text, how it was made, and why it may be unusable."""

from __future__ import annotations

from dataclasses import dataclass

FLAG_TOO_SHORT = "too_short"
FLAG_NO_EXTRACTABLE_TEXT = "no_extractable_text"
FLAG_NO_TEXT_EXTRACTOR = "no_text_extractor"
FLAGS = (FLAG_TOO_SHORT, FLAG_NO_EXTRACTABLE_TEXT, FLAG_NO_TEXT_EXTRACTOR)

# Below either threshold the text is too small to hold a real page: a login wall, a cookie
# wall or an empty JavaScript shell.  A later verification then says "could not check".
MIN_TEXT_CHARS = 200
MIN_TEXT_WORDS = 30


@dataclass(frozen=True)
class Page:
    """One PDF page: ``text[start:end]`` (code points) is the page's extracted text.

    ``furniture`` holds the page's running header, footer and page-number lines, which are
    not in the text flow (so a sentence across a page break stays whole) but not lost.
    """

    index: int  # 0-based position in the document
    label: str  # the printed page label ("iv", "12", "A-3"), or the 1-based number as text
    start: int
    end: int
    furniture: tuple[str, ...] = ()


@dataclass(frozen=True)
class Extraction:
    """Extracted text of one blob, or None with a flag saying why there is none."""

    content_type: str  # the sniffed media type, e.g. "text/html", "application/pdf"
    text: str | None
    extractor: str  # name@version+settings, or "none"
    pages: tuple[Page, ...] = ()
    flags: tuple[str, ...] = ()
    reason: str | None = None  # one human line explaining the flags
    # Code-point ranges of the text that are code (<code>, <pre>, <kbd>, <samp>): sorted,
    # merged; None when the extractor does not record them (trafilatura, PDF, plain text).
    code: tuple[tuple[int, int], ...] | None = None


def short_text_check(text: str) -> tuple[tuple[str, ...], str | None]:
    """The too_short flag and its reason when ``text`` cannot be a real page."""
    stripped = text.strip()
    chars, words = len(stripped), len(stripped.split())
    if chars >= MIN_TEXT_CHARS and words >= MIN_TEXT_WORDS:
        return (), None
    return (FLAG_TOO_SHORT,), (
        f"only {chars} characters and {words} words of text (fewer than {MIN_TEXT_CHARS}"
        f" characters or {MIN_TEXT_WORDS} words): probably a login wall or a script-only page"
    )


def with_text(
    content_type: str,
    text: str,
    extractor: str,
    pages: tuple[Page, ...] = (),
    code: tuple[tuple[int, int], ...] | None = None,
) -> Extraction:
    """An extraction that has text; an HTML page too small to be a page is flagged too_short.

    Only HTML: a login wall or a script-only shell is an HTML phenomenon, while a short text
    file or PDF is simply short, and a quote missing from it is plainly not found.
    """
    flags, reason = short_text_check(text) if content_type == "text/html" else ((), None)
    return Extraction(content_type, text, extractor, pages, flags, reason, code)


def without_text(content_type: str, extractor: str, flag: str, reason: str) -> Extraction:
    return Extraction(content_type, None, extractor, (), (flag,), reason)
