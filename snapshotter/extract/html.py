"""HTML: the text of a page's main content as a reader sees it.

The page is parsed with lxml (through trafilatura's loader, which reads the document's own
charset declaration), then:

1. text a reader never sees is removed and ``<sup>``/``<sub>`` are written as text
   (``html_visible``: hidden elements, what the page's ``<style>`` rules hide where
   ``html_styles`` can evaluate them, Unicode super/subscripts, ``[1]`` footnote marks);
2. navigation, forms, search boxes and asides are removed (they are not the content), except
   a form that holds most of the page's text (ASP.NET pages wrap the whole page in one), and
   an aside that is a footnote or note (``role="doc-footnote"``, a ``footnote`` class...) or
   that stands inside the main content (``<main>``, ``role="main"``, ``<article>``) and is not
   mostly links (a "Related" box is navigation): a reader reads those with the text;
3. the content is the page's ``<main>`` (or ``role="main"``, or its largest ``<article>``)
   when that holds at least ``MIN_LANDMARK_SHARE`` of the page's text; it is laid out by
   ``html_render`` (code listings line by line, captions, table cells separated by tabs);
4. a page without such a landmark falls back to trafilatura's main-content detection, run on
   the already cleaned tree with every output-changing setting pinned.  trafilatura drops
   headings, captions and notes it judges to be furniture, so its result is used to find
   the content instead: the smallest element of the cleaned page holding its first and last
   line (the first and last of up to ``MAX_ANCHOR_TRIES`` lines found in the page as
   written) is laid out by the renderer, after the headings right before it, unless that
   element has more than ``MAX_FALLBACK_GROWTH`` times trafilatura's text (then it is not the
   article, and trafilatura's own result is laid out by the same renderer, with the page's
   headings it left out put back in place).  trafilatura is given each inline ``<code>`` as
   one run of text, since it takes nested ``<code>`` apart (``html_fallback``).  Either way
   the same rules (hidden text, sup/sub, tables) hold on both paths, and no heading between
   the first and last line of the text is dropped.

Every choice that changes the text is named in the extractor id, so a text hash can always
be reproduced by the same extractor id.
"""

from __future__ import annotations

import copy
import re
from functools import cache
from typing import TYPE_CHECKING

from lxml import etree
from lxml.html import HtmlElement

from snapshotter.errors import ExtractionError
from snapshotter.extract.html_fallback import (
    flatten_inline_code,
    leading_headings,
    restore_headings,
)
from snapshotter.extract.html_render import render, render_with_code
from snapshotter.extract.html_styles import STYLE_RULE
from snapshotter.extract.html_visible import (
    SCRIPT_RULE,
    remove_hidden,
    remove_keeping_tail,
    write_scripts_as_text,
)
from snapshotter.extract.result import Extraction, with_text
from snapshotter.extract.sniff import bom_encoding, declared_charset
from verifier import CodeSpans

if TYPE_CHECKING:
    from configparser import ConfigParser

RENDERER_VERSION = 2
CODE_RULE = "spans1"
"""Code spans recorded (``html_render.render_with_code``): from the landmark and the fallback's
container; none from trafilatura's own text, whose markup is trafilatura's, not the page's."""
MIN_LANDMARK_SHARE = 0.3
MAX_FALLBACK_GROWTH = 2.0
MAX_ANCHOR_TRIES = 5
BOILERPLATE_TAGS = ("nav", "aside", "form")
BOILERPLATE_ROLES = ("navigation", "search", "complementary", "banner", "contentinfo")
# Asides are boilerplate only outside the main content, and never when they are notes.
CONTENT_ASIDES = ("aside",)
CONTENT_ASIDE_ROLES = ("complementary",)
MAX_ASIDE_LINK_SHARE = 0.5
NOTE_ROLES = ("note", "doc-footnote", "doc-endnote", "doc-endnotes", "doc-footnotes")

# Output-changing trafilatura options of the fallback, in the order they appear in the id.
HTML_SETTINGS: dict[str, bool | str] = {
    "fmt": "xml",
    "tables": True,
    "comments": False,
    "links": False,
    "images": False,
    "formatting": False,
    "precision": False,
    "recall": False,
    "fast": False,
    "dedup": False,
}

# trafilatura's XML elements, named as the HTML elements the renderer lays out.
_TRAFILATURA_TAGS = {
    "doc": "div",
    "head": "h2",
    "list": "ul",
    "item": "li",
    "row": "tr",
    "cell": "td",
    "lb": "br",
    "quote": "blockquote",
    "hi": "span",
    "ref": "span",
    "del": "span",
    "graphic": "img",
    "comments": "img",
}
_BLOCK_PARENTS = frozenset({"doc", "main", "div", "quote", "item", "cell", "comments"})


def html_extractor_id() -> str:
    import trafilatura

    settings = ",".join(
        f"{name}={int(value) if isinstance(value, bool) else value}"
        for name, value in HTML_SETTINGS.items()
    )
    return (
        f"snap-html@{RENDERER_VERSION}+hidden=drop,css={STYLE_RULE},sup={SCRIPT_RULE},cells=tab+lines,"
        f"code={CODE_RULE},"
        f"aside=main{int(MAX_ASIDE_LINK_SHARE * 100)},root=main{int(MIN_LANDMARK_SHARE * 100)};"
        f"fallback=container{MAX_FALLBACK_GROWTH:g}+headings+code1,"
        f"trafilatura@{trafilatura.__version__}+{settings}"
    )


@cache
def _pinned_config() -> ConfigParser:
    """A private copy of trafilatura's packaged defaults, immune to global changes."""
    from trafilatura.settings import use_config

    return use_config()


def _html_input(data: bytes, declared: str | None) -> bytes | str:
    """Decode by BOM or by the HTTP charset (which outranks a <meta> charset, as in browsers);
    otherwise hand the loader the bytes so it can read the document's own declaration."""
    for encoding in (bom_encoding(data), declared_charset(declared)):
        if encoding is None:
            continue
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return data


def _role(element: HtmlElement) -> str:
    return (element.get("role") or "").strip().lower()


def _is_boilerplate(element: HtmlElement) -> bool:
    if element.tag in BOILERPLATE_TAGS:
        return True
    return _role(element) in BOILERPLATE_ROLES


def _is_note(element: HtmlElement) -> bool:
    """A footnote, endnote or note: part of the text it annotates, wherever it stands."""
    if _role(element) in NOTE_ROLES:
        return True
    return any("footnote" in name or "endnote" in name for name in _classes(element))


def _classes(element: HtmlElement) -> list[str]:
    return (element.get("class") or "").lower().split()


def _mostly_links(element: HtmlElement) -> bool:
    """A box of links ("Related", "Read more"): navigation, even inside the article."""
    linked = sum(_text_length(link) for link in element.iter("a"))
    return linked > MAX_ASIDE_LINK_SHARE * _text_length(element)


def _in_main_content(element: HtmlElement) -> bool:
    return any(
        ancestor.tag in ("main", "article") or _role(ancestor) == "main"
        for ancestor in element.iterancestors()
    )


def _remove_boilerplate(root: HtmlElement) -> None:
    """Remove navigation, search, banners and asides; keep an aside that is a note, or that
    stands inside the main content (a sidebar of the article, an admonition)."""
    total = _text_length(root)
    for element in [element for element in root.iter() if _is_boilerplate(element)]:
        if element.tag == "form" and 2 * _text_length(element) > total:
            continue  # a page wrapped in one form (ASP.NET WebForms): the form is the page
        if not _is_content_aside(element):
            remove_keeping_tail(element)


def _is_content_aside(element: HtmlElement) -> bool:
    if element.tag not in CONTENT_ASIDES and _role(element) not in CONTENT_ASIDE_ROLES:
        return False
    return _is_note(element) or (_in_main_content(element) and not _mostly_links(element))


def _text_length(element: HtmlElement) -> int:
    return sum(len(text.strip()) for text in element.itertext())


def _landmark(root: HtmlElement) -> HtmlElement | None:
    """The page's main content element, when it holds enough of the page's text."""
    candidates: list[HtmlElement] = root.xpath("//main") or root.xpath("//*[@role='main']")
    if not candidates:
        articles: list[HtmlElement] = root.xpath("//article")
        candidates = sorted(articles, key=_text_length, reverse=True)[:1]
    if not candidates:
        return None
    landmark = candidates[0]
    if _text_length(landmark) < MIN_LANDMARK_SHARE * _text_length(root):
        return None
    return landmark


def _trafilatura_text(root: HtmlElement) -> str:
    import trafilatura

    tree = copy.deepcopy(root)  # trafilatura changes the tree it is given
    flatten_inline_code(tree)
    xml = trafilatura.extract(
        tree,
        output_format=str(HTML_SETTINGS["fmt"]),
        include_tables=bool(HTML_SETTINGS["tables"]),
        include_comments=bool(HTML_SETTINGS["comments"]),
        include_links=bool(HTML_SETTINGS["links"]),
        include_images=bool(HTML_SETTINGS["images"]),
        include_formatting=bool(HTML_SETTINGS["formatting"]),
        favor_precision=bool(HTML_SETTINGS["precision"]),
        favor_recall=bool(HTML_SETTINGS["recall"]),
        fast=bool(HTML_SETTINGS["fast"]),
        deduplicate=bool(HTML_SETTINGS["dedup"]),
        with_metadata=False,
        config=_pinned_config(),
    )
    # trafilatura returns None when it finds no main text: that is an empty page for us.
    if not xml:
        return ""
    try:
        document = etree.fromstring(xml.encode("utf-8"))
    except etree.XMLSyntaxError as error:  # trafilatura writes its XML with lxml: not expected
        raise ExtractionError(f"the page's main text could not be laid out ({error})") from None
    for element in document.iter():
        tag = str(element.tag)
        parent = element.getparent()
        if tag == "code" and parent is not None and str(parent.tag) in _BLOCK_PARENTS:
            element.tag = "pre"
        else:
            element.tag = _TRAFILATURA_TAGS.get(tag, tag)
    return render(document)


_WHITE_SPACE = re.compile(r"\s+")


def _solid(text: str) -> str:
    """Text without any white space: cells and inline elements join differently per layout."""
    return _WHITE_SPACE.sub("", text)


def _deepest_holding(root: HtmlElement, solid_line: str) -> HtmlElement | None:
    """The deepest element whose text holds ``solid_line`` (white space removed)."""
    if solid_line not in _solid(root.text_content()):
        return None
    element = root
    while True:
        child = next(
            (child for child in element if solid_line in _solid(child.text_content())), None
        )
        if child is None:
            return element
        element = child


def _common_ancestor(first: HtmlElement, last: HtmlElement) -> HtmlElement:
    # lxml hands out the same proxy for a node while a reference to it is held: keep them.
    ancestors = [first, *first.iterancestors()]
    element = last
    while not any(element is ancestor for ancestor in ancestors):
        element = element.getparent()
    return element


def _first_held(root: HtmlElement, lines: list[str]) -> HtmlElement | None:
    """The deepest element holding the first of ``lines`` that the page holds as written
    (trafilatura may have rearranged a line), trying at most ``MAX_ANCHOR_TRIES`` lines."""
    for line in lines[:MAX_ANCHOR_TRIES]:
        element = _deepest_holding(root, line)
        if element is not None:
            return element
    return None


def _fallback_text(root: HtmlElement) -> tuple[str, Code | None]:
    """The container trafilatura's text came from, laid out with the headings right before
    it, and its code; else trafilatura's own text with the page's headings put back, and no
    code (its markup is trafilatura's)."""
    found = _trafilatura_text(root)
    lines = [_solid(line) for line in found.splitlines() if line.strip()]
    if not lines:
        return "", None
    first, last = _first_held(root, lines), _first_held(root, lines[::-1])
    if first is None or last is None:
        return restore_headings(root, found), None
    container = _common_ancestor(first, last)
    if len(_solid(container.text_content())) > MAX_FALLBACK_GROWTH * len(_solid(found)):
        return restore_headings(root, found), None
    return _joined(
        [*map(render_with_code, leading_headings(container)), render_with_code(container)]
    )


Code = tuple[tuple[int, int], ...]


def _joined(parts: list[tuple[str, Code]]) -> tuple[str, Code]:
    """Laid-out parts one per line, with their code ranges moved to where each part lands."""
    ranges: list[tuple[int, int]] = []
    at = 0
    for text, code in parts:
        ranges.extend((start + at, end + at) for start, end in code)
        at += len(text) + 1
    return "\n".join(text for text, _ in parts), tuple(ranges)


def html_text(data: bytes, declared: str | None) -> str:
    """The visible main-content text of an HTML document (see the module doc)."""
    return html_text_and_code(data, declared)[0]


def html_text_and_code(data: bytes, declared: str | None) -> tuple[str, Code | None]:
    """The visible main-content text of an HTML document and where it is code (trimmed to its
    characters other than whitespace, merged); None when the text is trafilatura's own."""
    from trafilatura.utils import load_html

    root = load_html(_html_input(data, declared))
    if root is None:
        return "", None
    remove_hidden(root)
    write_scripts_as_text(root)
    _remove_boilerplate(root)
    landmark = _landmark(root)
    text, code = render_with_code(landmark) if landmark is not None else _fallback_text(root)
    return text, None if code is None else _trimmed(text, code)


def _trimmed(text: str, code: Code) -> Code:
    trimmed = []
    for start, end in code:
        inner = text[start:end]
        stripped = inner.strip()
        if stripped:
            first = start + len(inner) - len(inner.lstrip())
            trimmed.append((first, first + len(stripped)))
    return CodeSpans.merged(trimmed).ranges


def extract_html(data: bytes, declared: str | None) -> Extraction:
    text, code = html_text_and_code(data, declared)
    return with_text("text/html", text, html_extractor_id(), code=code)
