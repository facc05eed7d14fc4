"""Lay out an HTML element's visible text as a reader sees it, as plain text.

Block elements (paragraphs, headings, list items, captions, definition terms and
descriptions...) start on a line of their own; normal text has its white space collapsed as
a browser does; ``<pre>`` keeps its text as written, line by line; ``<br>`` is a line break.
A table row's cells are separated by a tab, so no symbol that is not on the page (such as
``|``) ever separates cells, and a cell's own lines stay lines, as a browser lays them out.
List bullets and numbers (drawn by the browser, not part of the text), images, ruby
annotations and form controls are not text and are left out.  The tree is expected to have
gone through ``html_visible`` first.
"""

from __future__ import annotations

from lxml import etree

from snapshotter.extract.html_visible import collapse

BLOCK_TAGS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "caption", "center", "dd",
        "details", "dialog", "dir", "div", "dl", "dt", "fieldset", "figcaption", "figure",
        "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "html",
        "legend", "li", "main", "menu", "nav", "ol", "p", "section", "summary", "table",
        "tbody", "tfoot", "thead", "ul", "tr",
    }
)  # fmt: skip
PREFORMATTED_TAGS = frozenset({"pre", "listing", "xmp", "plaintext"})
CELL_TAGS = frozenset({"td", "th"})
# Elements whose content a reader does not see as text.  Not here: the HTML5 void elements
# ``wbr``, ``source``, ``track``, ``embed`` and ``keygen``, which libxml2 does not know to be
# empty: it nests the text that follows them inside them, so they are laid out as inline.
SKIPPED_TAGS = frozenset(
    {
        "img", "picture", "video", "audio", "iframe", "object", "canvas", "svg", "input",
        "select", "textarea", "button", "rt", "rp", "annotation", "annotation-xml", "area",
        "map",
    }
)  # fmt: skip
CELL_SEPARATOR = "\t"


class _Lines:
    """Text being laid out; knows whether it stands at the start of a line."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def _last(self) -> str:
        return self.parts[-1][-1] if self.parts else "\n"

    def inline(self, text: str) -> None:
        text = collapse(text)
        if text.startswith(" ") and self._last() in " \t\n":
            text = text[1:]
        if text:
            self.parts.append(text)

    def raw(self, text: str) -> None:
        if text:
            self.parts.append(text)

    def line_break(self) -> None:
        if self._last() != "\n":
            self.parts.append("\n")

    def text(self) -> str:
        lines = [line.rstrip(" \t") for line in "".join(self.parts).split("\n")]
        kept: list[str] = []
        for line in lines:
            if line or (kept and kept[-1]):
                kept.append(line)
        return "\n".join(kept).strip("\n")


def render(root: etree._Element) -> str:
    """The visible text of ``root`` laid out in lines (see the module doc)."""
    lines = _Lines()
    _children(root, lines, preformatted=False)
    return lines.text()


def _children(element: etree._Element, lines: _Lines, preformatted: bool) -> None:
    _text(element.text, lines, preformatted)
    for child in element:
        if isinstance(child.tag, str):
            _element(child, lines, preformatted)
        _text(child.tail, lines, preformatted)


def _text(text: str | None, lines: _Lines, preformatted: bool) -> None:
    if text:
        (lines.raw if preformatted else lines.inline)(text)


def _element(element: etree._Element, lines: _Lines, preformatted: bool) -> None:
    tag = str(element.tag).lower()
    if tag in SKIPPED_TAGS:
        return
    if tag == "br" and preformatted:
        lines.raw("\n")
    elif tag == "br":
        lines.line_break()
    elif tag in PREFORMATTED_TAGS:
        lines.line_break()
        before = len(lines.parts)
        _children(element, lines, preformatted=True)
        if len(lines.parts) > before and lines.parts[before].startswith("\n"):
            # HTML drops a newline right after <pre>; a part left empty is dropped too.
            lines.parts[before] = lines.parts[before][1:]
            if not lines.parts[before]:
                del lines.parts[before]
        lines.line_break()
    elif tag == "tr":
        _row(element, lines)
    elif tag in BLOCK_TAGS:
        lines.line_break()
        _children(element, lines, preformatted)
        lines.line_break()
    else:
        _children(element, lines, preformatted)


def _row(row: etree._Element, lines: _Lines) -> None:
    """One table row, cells separated by a tab (never a symbol); a cell's own lines
    (paragraphs, ``<br>``, listings) stay lines, as a browser shows them, so the last line
    of one example never runs into the first of the next.

    Text or elements that stray into a row outside any cell (broken markup that browsers
    show anyway) are kept, each as a cell of its own, rather than lost.
    """
    cells = [stray for stray in (_flat(row.text),) if stray]
    for child in row:
        if isinstance(child.tag, str):
            inner = _Lines()
            if str(child.tag).lower() in CELL_TAGS:
                _children(child, inner, preformatted=False)
                cells.append(_cell(inner.text()))  # an empty cell is still a cell
            else:
                _element(child, inner, preformatted=False)
                cells.extend(stray for stray in (_cell(inner.text()),) if stray)
        cells.extend(stray for stray in (_flat(child.tail),) if stray)
    lines.line_break()
    lines.raw(CELL_SEPARATOR.join(cells))
    lines.line_break()


def _cell(text: str) -> str:
    """A cell's laid-out text: its lines kept, blank lines and edge spaces dropped."""
    return "\n".join(line.strip(" ") for line in text.split("\n") if line.strip())


def _flat(text: str | None) -> str:
    """Stray text of a row on one line."""
    return " ".join((text or "").split())
