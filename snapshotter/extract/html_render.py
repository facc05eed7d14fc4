"""Lay out an HTML element's visible text as a reader sees it, as plain text.

Block elements (paragraphs, headings, list items, captions, definition terms and
descriptions...) start on a line of their own; normal text has its white space collapsed as
a browser does; ``<pre>`` keeps its text as written, line by line; ``<br>`` is a line break.
A table row's cells are separated by a tab, so no symbol that is not on the page (such as
``|``) ever separates cells, and a cell's own lines stay lines, as a browser lays them out.
List bullets and numbers (drawn by the browser, not part of the text), images, ruby
annotations and form controls are not text and are left out.  The tree is expected to have
gone through ``html_visible`` first.

``render_with_code`` also gives where the text is code: the code-point ranges of text from
``<code>``, ``<kbd>``, ``<samp>`` and the preformatted elements, nested ones merged
(``snapshotter.extract.code_spans``).  While laying out, an element of code is bracketed by two
marks (Unicode noncharacters, taken out of the page's own text first) that every step of the
layout keeps in place and treats as nothing; they are read off, as ranges, at the end.
"""

from __future__ import annotations

import re

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
CODE_TAGS = frozenset({"code", "kbd", "samp"}) | PREFORMATTED_TAGS
OPEN_CODE, CLOSE_CODE = "\ufdd0", "\ufdd1"
_MARKS = OPEN_CODE + CLOSE_CODE
_NO_MARKS = str.maketrans("", "", _MARKS)
_TRAILING_SPACE = re.compile(rf"[ \t]+(?=[{_MARKS} \t]*\Z)")
_EDGE_NEWLINES = re.compile(rf"\A[\n{_MARKS}]*|[\n{_MARKS}]*\Z")
_EDGE_SPACES = re.compile(rf"\A[ {_MARKS}]*|[ {_MARKS}]*\Z")


class _Lines:
    """Text being laid out; knows whether it stands at the start of a line."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def _last(self) -> str:
        for part in reversed(self.parts):
            if part not in _MARKS:
                return part[-1]
        return "\n"

    def mark(self, which: str) -> None:
        """Open or close code here (``OPEN_CODE``, ``CLOSE_CODE``)."""
        self.parts.append(which)

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
        """The laid-out text, with the marks of code in place (see ``unmarked``): lines
        without trailing spaces, at most one blank line in a row, none at the edges; a mark on
        a line that is dropped moves to the next line kept."""
        lines = [_TRAILING_SPACE.sub("", line) for line in "".join(self.parts).split("\n")]
        kept: list[str] = []
        carried = ""
        for line in lines:
            if _blank(line) and not (kept and not _blank(kept[-1])):
                carried += _marks_of(line)
                continue
            kept.append(carried + line)
            carried = ""
        if carried:
            kept.append((kept.pop() if kept else "") + carried)
        return _EDGE_NEWLINES.sub(_marks_only, "\n".join(kept))


def _blank(line: str) -> bool:
    return not line.translate(_NO_MARKS)


def _marks_of(text: str) -> str:
    return "".join(char for char in text if char in _MARKS)


def _marks_only(edge: re.Match[str]) -> str:
    return _marks_of(edge.group())


def unmarked(marked: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The text without the marks of code, and the ranges they enclosed (code points of the
    text; nested code merged, empty ranges left out)."""
    text: list[str] = []
    ranges: list[tuple[int, int]] = []
    depth = length = start = 0
    for piece in re.split(f"([{_MARKS}])", marked):
        if piece == OPEN_CODE:
            depth += 1
            if depth == 1:
                start = length
        elif piece == CLOSE_CODE:
            depth = max(depth - 1, 0)
            if depth == 0 and length > start:
                ranges.append((start, length))
        else:
            text.append(piece)
            length += len(piece)
    if depth and length > start:
        ranges.append((start, length))
    return "".join(text), tuple(ranges)


def render(root: etree._Element) -> str:
    """The visible text of ``root`` laid out in lines (see the module doc)."""
    return render_with_code(root)[0]


def render_with_code(root: etree._Element) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The visible text of ``root`` laid out in lines, and where it is code."""
    lines = _Lines()
    _children(root, lines, preformatted=False)
    return unmarked(lines.text())


def _children(element: etree._Element, lines: _Lines, preformatted: bool) -> None:
    _text(element.text, lines, preformatted)
    for child in element:
        if isinstance(child.tag, str):
            _element(child, lines, preformatted)
        _text(child.tail, lines, preformatted)


def _text(text: str | None, lines: _Lines, preformatted: bool) -> None:
    if text:
        text = text.translate(_NO_MARKS)  # the page's own noncharacters are not marks
        (lines.raw if preformatted else lines.inline)(text)


def _element(element: etree._Element, lines: _Lines, preformatted: bool) -> None:
    tag = str(element.tag).lower()
    if tag in SKIPPED_TAGS:
        return
    if tag in CODE_TAGS:
        if tag in PREFORMATTED_TAGS:
            lines.line_break()  # the listing's code starts on its own line, not before it
        lines.mark(OPEN_CODE)
        _laid_out(element, tag, lines, preformatted)
        lines.mark(CLOSE_CODE)
    else:
        _laid_out(element, tag, lines, preformatted)


def _laid_out(element: etree._Element, tag: str, lines: _Lines, preformatted: bool) -> None:
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
                cells.extend(stray for stray in (_cell(inner.text()),) if not _blank(stray))
        cells.extend(stray for stray in (_flat(child.tail),) if stray)
    lines.line_break()
    lines.raw(CELL_SEPARATOR.join(cells))
    lines.line_break()


def _cell(text: str) -> str:
    """A cell's laid-out text: its lines kept, blank lines and edge spaces dropped (the marks
    of code kept in place, those of a dropped line moved to the next line kept)."""
    kept: list[str] = []
    carried = ""
    for line in text.split("\n"):
        if not line.translate(_NO_MARKS).strip():
            carried += _marks_of(line)
            continue
        kept.append(_EDGE_SPACES.sub(_marks_only, carried + line))
        carried = ""
    if carried:
        kept.append((kept.pop() if kept else "") + carried)
    return "\n".join(kept)


def _flat(text: str | None) -> str:
    """Stray text of a row on one line."""
    return " ".join((text or "").translate(_NO_MARKS).split())
