"""Helpers of the landmark-less fallback that keep what trafilatura would lose.

trafilatura finds a page's main text well but lays it out as it judges best: it drops
headings it takes for furniture, and it takes ``<code>`` apart when another inline element
sits inside it (``<code>SET <em><code>name</code></em> TO ...</code>``, DocBook's way of
marking a placeholder), moving the inner parts to the end of the sentence.  So:

- ``flatten_inline_code`` gives trafilatura each inline ``<code>`` as one run of text;
- ``leading_headings`` finds the headings just before the container the text came from
  (a page's ``<h1>`` often stands outside the element that holds the paragraphs);
- ``restore_headings`` puts back, between trafilatura's lines, the page's headings that
  stand between those lines in the page and that trafilatura left out.

Lines are located in the page by their text with white space removed (layouts join inline
elements and cells differently), searching forward from the previous line, so a line found
out of order is skipped rather than misplaced.
"""

from __future__ import annotations

import re

from lxml import etree
from lxml.html import HtmlElement

from snapshotter.extract.html_render import render

HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_WHITE_SPACE = re.compile(r"\s+")
MAX_LEADING_LEVELS = 3  # how far up from the container headings are looked for


def solid(text: str) -> str:
    """Text without any white space: cells and inline elements join differently per layout."""
    return _WHITE_SPACE.sub("", text)


def flatten_inline_code(root: HtmlElement) -> None:
    """Make each ``<code>`` outside ``<pre>`` hold its text only, its inner elements undone."""
    for code in list(root.iter("code")):
        if len(code) == 0 or next(code.iterancestors("pre", "code"), None) is not None:
            continue
        text = code.text_content()
        for child in list(code):
            code.remove(child)
        code.text = text


def _is_heading_only(element: HtmlElement) -> bool:
    """A heading, or a wrapper whose text is all in headings (DocBook's ``titlepage``)."""
    if element.tag in HEADINGS:
        return True
    if element.tag in ("script", "style") or not solid(element.text_content()):
        return False
    headed = sum(len(solid(h.text_content())) for h in element.iter(*HEADINGS))
    return headed == len(solid(element.text_content()))


def leading_headings(container: HtmlElement) -> list[HtmlElement]:
    """Heading elements right before ``container`` (or before its first ancestors, while
    nothing else stands between), in page order."""
    found: list[HtmlElement] = []
    element: HtmlElement | None = container
    for _ in range(MAX_LEADING_LEVELS):
        if element is None:
            break
        before: list[HtmlElement] = []
        sibling = element.getprevious()
        while sibling is not None and _is_heading_only(sibling) and not solid(sibling.tail or ""):
            before.append(sibling)
            sibling = sibling.getprevious()
        found = [*reversed(before), *found]
        parent = element.getparent()
        text_before = solid(parent.text or "") if parent is not None else ""
        if sibling is not None or text_before:
            break  # something that is not a heading stands before: stop climbing
        element = parent
    return found


def _heading_offsets(root: HtmlElement) -> tuple[str, list[tuple[int, HtmlElement]]]:
    """The page's text without white space, and where each heading starts in it."""
    parts: list[str] = []
    length = 0
    headings: list[tuple[int, HtmlElement]] = []
    for event, element in etree.iterwalk(root, events=("start", "end")):
        if not isinstance(element.tag, str):
            continue
        piece = element.text if event == "start" else element.tail
        if event == "start" and element.tag in HEADINGS:
            headings.append((length, element))
        if element is root and event == "end":
            piece = None
        if piece:
            squeezed = solid(piece)
            parts.append(squeezed)
            length += len(squeezed)
    return "".join(parts), headings


def restore_headings(root: HtmlElement, text: str) -> str:
    """``text`` (trafilatura's lines) with the page's headings it lacks put back in place.

    A heading is put back before the first line found after it in the page; before the first
    line found, only the headings right before it (nothing but headings between) are put
    back, and none after the last line (a site's name, a comments section are not the text's).
    """
    page, headings = _heading_offsets(root)
    if not headings:
        return text
    out: list[str] = []
    cursor = -1  # end of the previous line found, in the page's solid text
    waiting = 0  # index into headings of the first not yet passed
    for line in text.split("\n"):
        squeezed = solid(line)
        at = page.find(squeezed, max(cursor, 0)) if squeezed else -1
        if at < 0:
            out.append(line)
            continue
        passed: list[HtmlElement] = []
        while waiting < len(headings) and headings[waiting][0] < at + len(squeezed):
            offset, heading = headings[waiting]
            waiting += 1
            if offset < at:
                passed.append(heading)
        if cursor < 0:
            passed = _right_before(passed, headings, at)
        for heading in passed:
            out.extend(render(heading).split("\n"))
        cursor = at + len(squeezed)
        out.append(line)
    return "\n".join(out)


def _right_before(
    passed: list[HtmlElement], headings: list[tuple[int, HtmlElement]], at: int
) -> list[HtmlElement]:
    """The headings of ``passed`` that end where the next begins, the last where ``at`` is."""
    offsets = {id(heading): offset for offset, heading in headings}
    kept: list[HtmlElement] = []
    boundary = at
    for heading in reversed(passed):
        offset = offsets[id(heading)]
        if offset + len(solid(heading.text_content())) != boundary:
            break
        kept.append(heading)
        boundary = offset
    return list(reversed(kept))
