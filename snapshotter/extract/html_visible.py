"""Make an HTML tree hold what a reader sees: hidden text out, sup/sub written as text.

Once the verifier compares every character, the stored text is a claim about what the page
showed.  So text a reader never sees must not be in it (a quote planted there would pass as
something the page said), and a raised or lowered run must not read as ordinary text
(``10<sup>6</sup>`` is not "106").

Hidden (removed with everything inside, the text after the element is kept): the ``hidden``
attribute, an inline style with ``display: none`` or ``visibility: hidden|collapse``,
``aria-hidden="true"``, ``<template>``, ``<script>``, ``<style>``, a closed ``<dialog>``,
``<noscript>`` on a page that has scripts, and the screen-reader-only classes ``sr-only``,
``visually-hidden`` and ``screen-reader-text``; what the page's own ``<style>`` rules hide
where they can be evaluated cheaply (``html_styles``); and two patterns of documentation
generators whose linked stylesheets (never fetched) hide them: the ``headerlink`` permalink
of Sphinx, MkDocs and docutils (``<a class="headerlink" href="#...">¶</a>``, shown only while
the pointer is over its heading) and mdBook's hidden code lines (``<span class="boring">``
inside ``<code>``).  A class that only a linked stylesheet hides stays in.  A closed
``<details>`` stays in: its text is one click away and browsers' find-in-page opens it.

``<sup>``/``<sub>`` (the rule is named in the extractor id as ``sup=uni1``):

- a ``<sup>`` that holds a link, or that is all the text of a link to the same page
  (``<a href="#fn1"><sup>1</sup></a>``), is a note reference and becomes a bracketed mark,
  ``[1]`` (Wikipedia's ``[1]`` and a bare ``<a href="#fn1">1</a>`` alike), never a
  superscript digit; a linked exponent (``<a href="/wiki/Square_metre">m<sup>2</sup></a>``)
  stays an exponent;
- a run whose every character has a form in Unicode's Superscripts and Subscripts (digits,
  ``+ - − = ( )``, ``i n`` raised, ``a e o x ə h k l m n p s t`` lowered, and spaces) is written
  in those forms: ``10⁶``, ``CO₂``, ``e⁻``, ``xⁿ``;
- any other run keeps its text inside ``^(...)`` (raised) or ``_(...)`` (lowered):
  ``5<sup>th</sup>`` is ``5^(th)``, ``T<sub>eff</sub>`` is ``T_(eff)``, so a raised or lowered
  run never merges with the text around it;
- a run that is already a bracketed mark (``<sup>[a]</sup>``) is kept as written;
- the scripts of MathML's ``<msup>``, ``<msub>`` and ``<msubsup>`` follow the same rule
  (``<msup><mi>x</mi><mn>2</mn></msup>`` is ``x²``).
"""

from __future__ import annotations

import re

from lxml import etree
from lxml.html import HtmlElement

from snapshotter.extract.html_styles import StyleRules

SCRIPT_RULE = "uni1"
# Hidden by the stylesheets of the generators that write them (see the module doc).
PERMALINK_CLASS = "headerlink"
HIDDEN_CODE_LINE_CLASS = "boring"

_SUPERSCRIPTS = str.maketrans(
    {
        **{str(digit): form for digit, form in zip(range(10), "⁰¹²³⁴⁵⁶⁷⁸⁹", strict=True)},
        "+": "⁺",
        "-": "⁻",
        "−": "⁻",
        "=": "⁼",
        "(": "⁽",
        ")": "⁾",
        "i": "ⁱ",
        "n": "ⁿ",
    }
)
_SUBSCRIPTS = str.maketrans(
    {
        **{str(digit): form for digit, form in zip(range(10), "₀₁₂₃₄₅₆₇₈₉", strict=True)},
        "+": "₊",
        "-": "₋",
        "−": "₋",
        "=": "₌",
        "(": "₍",
        ")": "₎",
        **dict(zip("aeoxəhklmnpst", "ₐₑₒₓₔₕₖₗₘₙₚₛₜ", strict=True)),
    }
)
_SCRIPTS = {"sup": (_SUPERSCRIPTS, "^"), "sub": (_SUBSCRIPTS, "_")}
# MathML elements whose children after the base are scripts, in order.
_MATH_SCRIPTS = {"msup": ("sup",), "msub": ("sub",), "msubsup": ("sub", "sup")}

ALWAYS_HIDDEN = frozenset({"script", "style", "template", "head", "title", "meta", "link"})
HIDDEN_CLASSES = frozenset({"sr-only", "visually-hidden", "screen-reader-text"})
_HTML_SPACE = re.compile(r"[ \t\n\r\f]+")


def collapse(text: str) -> str:
    """Collapse HTML white space (not NBSP) the way a browser lays out normal text."""
    return _HTML_SPACE.sub(" ", text)


def _classes(element: HtmlElement) -> list[str]:
    return (element.get("class") or "").split()


def _hidden_by_generator(element: HtmlElement) -> bool:
    """A Sphinx-style permalink, or an mdBook hidden code line (see the module doc)."""
    classes = _classes(element)
    if PERMALINK_CLASS in classes and element.tag == "a":
        return (element.get("href") or "").startswith("#")
    if HIDDEN_CODE_LINE_CLASS in classes:
        return next(element.iterancestors("code"), None) is not None
    return False


def is_hidden(element: HtmlElement, scripted: bool, styles: StyleRules | None = None) -> bool:
    """Whether a reader of the rendered page never sees ``element`` (see the module doc).

    ``styles`` are the page's ``<style>`` rules; without them only the element's own
    ``style`` attribute is read.
    """
    tag = element.tag
    if tag in ALWAYS_HIDDEN or (tag == "noscript" and scripted):
        return True
    if tag == "dialog" and element.get("open") is None:
        return True
    if element.get("hidden") is not None:
        return True
    if (element.get("aria-hidden") or "").strip().lower() == "true":
        return True
    if (styles or StyleRules(None)).hides(element):
        return True
    if _hidden_by_generator(element):
        return True
    return not HIDDEN_CLASSES.isdisjoint(_classes(element))


def remove_keeping_tail(element: HtmlElement, replacement: str = "") -> None:
    """Take ``element`` out of the tree, leaving ``replacement`` and its tail text in place."""
    parent = element.getparent()
    if parent is None:
        return
    text = replacement + (element.tail or "")
    previous = element.getprevious()
    if previous is not None:
        previous.tail = (previous.tail or "") + text
    else:
        parent.text = (parent.text or "") + text
    parent.remove(element)


def _is_scripted(root: HtmlElement) -> bool:
    return next(root.iter("script"), None) is not None


def remove_hidden(root: HtmlElement) -> None:
    """Remove every element a reader never sees, and comments (which no reader sees either)."""
    scripted = _is_scripted(root)
    styles = StyleRules(root)
    doomed = [
        element
        for element in root.iter()
        if not isinstance(element.tag, str) or is_hidden(element, scripted, styles)
    ]
    for element in doomed:
        remove_keeping_tail(element)


def script_text(element: HtmlElement, kind: str | None = None) -> str:
    """How one ``<sup>``/``<sub>`` (or a MathML script, given ``kind``) reads as text."""
    raw = "".join(element.itertext())
    text = collapse(raw).strip()
    if not text:
        return " " if raw else ""  # a raised space is still a space between words
    kind = kind or str(element.tag)
    if kind == "sup" and (next(element.iter("a"), None) is not None or _is_note_link(element)):
        mark = text.strip("[]").strip()
        return f"[{mark}]" if mark else ""
    if text.startswith("[") and text.endswith("]"):
        return text
    table, marker = _SCRIPTS[kind]
    converted = text.translate(table)
    if all(char == " " or char != original for char, original in zip(converted, text, strict=True)):
        return converted
    return f"{marker}({text})"


def _is_note_link(element: HtmlElement) -> bool:
    """Whether ``element`` is all the text of a link to a place on the same page (pandoc's
    ``<a href="#fn1"><sup>1</sup></a>``), which is a note reference, not an exponent."""
    link = next(element.iterancestors("a"), None)
    if link is None or not (link.get("href") or "").startswith("#"):
        return False
    return collapse(link.text_content()).strip() == collapse("".join(element.itertext())).strip()


def write_scripts_as_text(root: HtmlElement) -> None:
    """Replace each outermost ``<sup>``/``<sub>``, and the scripts of MathML's ``<msup>``,
    ``<msub>`` and ``<msubsup>``, by their text form (see ``script_text``)."""
    for element in list(root.iter("sup", "sub")):
        if _inside_script(element):
            continue
        remove_keeping_tail(element, script_text(element))
    for element in list(root.iter(*_MATH_SCRIPTS)):
        children = [child for child in element if isinstance(child.tag, str)]
        for child, kind in zip(children[1:], _MATH_SCRIPTS[str(element.tag)], strict=False):
            remove_keeping_tail(child, script_text(child, kind))


def _inside_script(element: etree._Element) -> bool:
    parent = element.getparent()
    while parent is not None:
        if parent.tag in _SCRIPTS:
            return True
        parent = parent.getparent()
    return False
