"""The page's own ``<style>`` rules that hide elements, evaluated where that is cheap.

A browser hides what its stylesheets say to hide; the HTTP extractor has only the page's bytes,
so it reads the stylesheets the page carries (``<style>`` elements) and evaluates the simple
part of them, which is the part that hides things in practice:

- a rule counts when its declarations set ``display`` or ``visibility``; it hides when
  ``display: none`` or ``visibility: hidden|collapse`` wins the cascade for an element, and a
  later or more specific ``display: block`` or ``visibility: visible`` (or the element's own
  ``style`` attribute) shows it again, with ``!important`` and specificity as CSS orders them;
- selectors are evaluated when made of type, class, id, attribute (``[a]``, ``[a=v]``,
  ``[a~=v]``, ``[a^=v]``, ``[a$=v]``, ``[a*=v]``) and universal selectors, joined by descendant
  or child combinators, in a comma-separated list;
- not evaluated (the rule is skipped): a selector with a pseudo-class or pseudo-element (a
  ``:hover`` rule describes a state the reader is not in), a sibling combinator or a
  namespace; rules inside ``@media``, ``@supports`` or any other at-rule (their conditions
  depend on the reader's screen); ``<style>`` elements with a ``media`` other than ``all`` or
  ``screen``; and linked stylesheets, which are never fetched.

Every other hiding rule of the page's stylesheets is unknown here, so text hidden only by it
stays in the stored text (``html_visible`` adds patterns of well-known generators for that).
An element hidden by ``visibility`` is left out with everything inside it, even a descendant
that sets ``visibility: visible`` again, which a browser shows: that is rare, and text left
out can make a quote "not found", never make one pass.  Malformed CSS is read as far as it
parses, never raised on.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from lxml.html import HtmlElement

STYLE_RULE = "style1"  # named in the extractor id: which stylesheet rules are evaluated

_COMMENT = re.compile(r"/\*.*?(?:\*/|$)", re.DOTALL)
_STRING = re.compile(r""""(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'""", re.DOTALL)
_IDENT = r"-?[_a-zA-Z\u00a0-\uffff][-_a-zA-Z0-9\u00a0-\uffff]*"


@functools.cache
def _attribute() -> re.Pattern[str]:
    """An attribute selector. This and ``_simple`` are compiled on first use: their classes
    span the Basic Multilingual Plane, which ``re`` compiles a code point at a time (about 19 ms
    for the two, more than the rest of the extractor's imports), and a page whose stylesheets
    have no rule to evaluate never needs them."""
    return re.compile(
        rf"\[\s*(?P<name>{_IDENT})\s*(?:(?P<op>[~^$*|]?=)\s*"
        rf"(?:\"(?P<dq>[^\"]*)\"|'(?P<sq>[^']*)'|(?P<bare>{_IDENT}))\s*(?:[iIsS]\s*)?)?\]"
    )


@functools.cache
def _simple() -> re.Pattern[str]:
    """A type, id, class or universal selector (see ``_attribute``)."""
    return re.compile(rf"(?P<kind>[#.]?)(?P<name>{_IDENT}|\*)")


_SHOWN_MEDIA = frozenset({"", "all", "screen"})
_HIDING_VISIBILITY = frozenset({"hidden", "collapse"})


@dataclass(frozen=True)
class _Compound:
    """One compound selector: ``tag#id.class[attr=value]``."""

    tag: str | None
    ids: tuple[str, ...]
    classes: tuple[str, ...]
    attributes: tuple[tuple[str, str | None, str], ...]  # name, operator, value

    def matches(self, element: HtmlElement) -> bool:
        if self.tag is not None and element.tag != self.tag:
            return False
        if self.ids and any(element.get("id") != name for name in self.ids):
            return False
        if self.classes and not set(self.classes) <= set((element.get("class") or "").split()):
            return False
        return all(_attribute_matches(element, *attribute) for attribute in self.attributes)


def _attribute_matches(element: HtmlElement, name: str, operator: str | None, wanted: str) -> bool:
    value: str | None = element.get(name)
    if value is None:
        return False
    if operator is None:
        return True
    if operator == "=":
        return value == wanted
    if operator == "~=":
        return wanted in value.split()
    if operator == "|=":
        return value == wanted or value.startswith(wanted + "-")
    if not wanted:
        return False  # [a^=""] and the like match nothing
    if operator == "^=":
        return value.startswith(wanted)
    if operator == "$=":
        return value.endswith(wanted)
    return wanted in value  # *=


@dataclass(frozen=True)
class _Selector:
    """Compounds from left to right, and the combinator before each but the first."""

    compounds: tuple[_Compound, ...]
    combinators: tuple[str, ...]  # " " (descendant) or ">" (child)
    specificity: tuple[int, int, int]

    def matches(self, element: HtmlElement) -> bool:
        if not self.compounds[-1].matches(element):
            return False  # the common case, decided without walking the ancestors
        chain = [element, *element.iterancestors()]
        return _Matcher(self, chain).match(len(self.compounds) - 1, 0)


class _Matcher:
    """Right-to-left matching over an element's ancestor chain, each (compound, ancestor)
    pair tried once: descendant combinators cannot make it exponential on deep pages."""

    def __init__(self, selector: _Selector, chain: list[HtmlElement]) -> None:
        self.selector = selector
        self.chain = chain  # the element, then its ancestors; held so proxies stay the same
        self.failed: set[tuple[int, int]] = set()

    def match(self, index: int, position: int) -> bool:
        """Whether compound ``index`` and those left of it match at ``chain[position]``."""
        if (index, position) in self.failed:
            return False
        if self.selector.compounds[index].matches(self.chain[position]) and (
            index == 0 or self._left_matches(index, position)
        ):
            return True
        self.failed.add((index, position))
        return False

    def _left_matches(self, index: int, position: int) -> bool:
        if self.selector.combinators[index - 1] == ">":
            return position + 1 < len(self.chain) and self.match(index - 1, position + 1)
        return any(self.match(index - 1, up) for up in range(position + 1, len(self.chain)))


@dataclass(frozen=True)
class _Declaration:
    """One ``display`` or ``visibility`` declaration and where it stands in the cascade."""

    hides: bool
    important: bool
    specificity: tuple[int, int, int]
    order: int

    def rank(self) -> tuple[bool, tuple[int, int, int], int]:
        return (self.important, self.specificity, self.order)


@dataclass(frozen=True)
class _Rule:
    selector: _Selector
    declarations: dict[str, _Declaration]  # by property: "display", "visibility"

    @property
    def order(self) -> int:
        return max(declaration.order for declaration in self.declarations.values())


def _parse_compound(text: str) -> _Compound | None:
    tag: str | None = None
    ids: list[str] = []
    classes: list[str] = []
    attributes: list[tuple[str, str | None, str]] = []
    position = 0
    while position < len(text):
        attribute = _attribute().match(text, position)
        if attribute is not None:
            value = attribute["dq"] or attribute["sq"] or attribute["bare"] or ""
            attributes.append((attribute["name"].lower(), attribute["op"], value))
            position = attribute.end()
            continue
        simple = _simple().match(text, position)
        if simple is None:
            return None  # a pseudo-class, a namespace, an escape: not evaluated
        kind, name = simple["kind"], simple["name"]
        if kind == "#":
            ids.append(name)
        elif kind == ".":
            classes.append(name)
        elif position == 0:
            tag = None if name == "*" else name.lower()
        else:
            return None
        position = simple.end()
    return _Compound(tag, tuple(ids), tuple(classes), tuple(attributes))


_COMBINATOR = re.compile(r"\s*>\s*|\s+")


def _parse_selector(text: str) -> _Selector | None:
    text = text.strip()
    if not text or not _only_in_brackets(text):
        return None
    compounds: list[_Compound] = []
    combinators: list[str] = []
    position = 0
    for separator in _separators(text):
        compound = _parse_compound(text[position : separator.start()])
        if compound is None:
            return None
        compounds.append(compound)
        combinators.append(">" if ">" in separator.group() else " ")
        position = separator.end()
    last = _parse_compound(text[position:])
    if last is None:
        return None
    compounds.append(last)
    specificity = (
        sum(len(compound.ids) for compound in compounds),
        sum(len(compound.classes) + len(compound.attributes) for compound in compounds),
        sum(compound.tag is not None for compound in compounds),
    )
    return _Selector(tuple(compounds), tuple(combinators), specificity)


def _only_in_brackets(text: str) -> bool:
    """Whether every ``+ ~ : | \\`` of ``text`` is inside an attribute selector (``[a~=b]``)."""
    outside = re.sub(r"\[[^\]]*\]", "", text)
    return not any(char in outside for char in "+~:|\\")


def _separators(text: str) -> Iterator[re.Match[str]]:
    """The combinators between compounds, outside attribute brackets."""
    depth_free = re.sub(r"\[[^\]]*\]", lambda match: "_" * len(match.group()), text)
    return _COMBINATOR.finditer(depth_free)


def _declarations(
    block: str, specificity: tuple[int, int, int], order: int
) -> dict[str, _Declaration]:
    found: dict[str, _Declaration] = {}
    for declaration in block.split(";"):
        name, _, value = declaration.partition(":")
        name = name.strip().lower()
        if name not in ("display", "visibility"):
            continue
        value = value.strip().lower()
        important = value.endswith("!important") or bool(re.search(r"!\s*important$", value))
        words = re.sub(r"!\s*important$", "", value).split()
        if not words:
            continue
        hides = words[0] == "none" if name == "display" else words[0] in _HIDING_VISIBILITY
        found[name] = _Declaration(hides, important, specificity, order)
    return found


def _top_level_rules(css: str) -> Iterator[tuple[str, str]]:
    """``(selectors, declarations)`` of each rule outside at-rules, in order."""
    css = _COMMENT.sub(" ", css)
    css = _STRING.sub(
        lambda match: '""' if "{" in match.group() or "}" in match.group() else match.group(), css
    )
    position = 0
    while position < len(css):
        brace = css.find("{", position)
        if brace < 0:
            return
        prelude = css[position:brace]
        statement_end = prelude.rfind(";")
        if prelude.lstrip().startswith("@") and statement_end >= 0:
            position += statement_end + 1  # @import url(...); @charset "...";
            continue
        end = _block_end(css, brace)
        if not prelude.strip().startswith("@"):
            yield prelude, css[brace + 1 : end]
        position = end + 1


def _block_end(css: str, brace: int) -> int:
    depth = 0
    for index in range(brace, len(css)):
        if css[index] == "{":
            depth += 1
        elif css[index] == "}":
            depth -= 1
            if depth == 0:
                return index
    return len(css)


def parse_rules(css: str, start_order: int = 0) -> list[_Rule]:
    """The rules of a stylesheet that set ``display`` or ``visibility`` and can be evaluated,
    numbered in source order from ``start_order`` on (one number per selector of a list)."""
    rules: list[_Rule] = []
    order = start_order
    for selectors, block in _top_level_rules(css):
        if "display" not in block.lower() and "visibility" not in block.lower():
            continue
        for text in selectors.split(","):
            selector = _parse_selector(text)
            order += 1
            if selector is None:
                continue
            declarations = _declarations(block, selector.specificity, order)
            if declarations:
                rules.append(_Rule(selector, declarations))
    return rules


def _inline_declarations(element: HtmlElement) -> dict[str, _Declaration]:
    # The style attribute outranks every selector: specificity above any id count.
    return _declarations(element.get("style") or "", (1 << 30, 0, 0), 1 << 30)


def _stylesheets(root: HtmlElement) -> Iterable[str]:
    for style in root.iter("style"):
        if (style.get("media") or "").strip().lower() not in _SHOWN_MEDIA:
            continue
        if any(ancestor.tag in ("noscript", "template") for ancestor in style.iterancestors()):
            continue
        yield "".join(style.itertext())


class _RuleIndex:
    """Rules by the id, a class or the tag their rightmost compound requires, so an element
    is tested only against rules that can match it (pages inline thousands of rules)."""

    def __init__(self, rules: Iterable[_Rule]) -> None:
        self.by_key: dict[tuple[str, str], list[_Rule]] = {}
        self.size = 0
        for rule in rules:
            self.by_key.setdefault(_index_key(rule.selector.compounds[-1]), []).append(rule)
            self.size += 1

    def candidates(self, element: HtmlElement) -> Iterator[_Rule]:
        keys = [("tag", str(element.tag)), ("any", "")]
        if element.get("id"):
            keys.append(("id", element.get("id") or ""))
        keys.extend(("class", name) for name in _classes(element))
        for key in keys:
            yield from self.by_key.get(key, ())


def _index_key(compound: _Compound) -> tuple[str, str]:
    if compound.ids:
        return ("id", compound.ids[0])
    if compound.classes:
        return ("class", compound.classes[0])
    if compound.tag is not None:
        return ("tag", compound.tag)
    return ("any", "")


def _classes(element: HtmlElement) -> list[str]:
    return list(dict.fromkeys((element.get("class") or "").split()))


class StyleRules:
    """The page's evaluable hiding rules; ``hides(element)`` applies the cascade.

    ``StyleRules(None)`` has no rules: only an element's ``style`` attribute is read.
    """

    def __init__(self, root: HtmlElement | None) -> None:
        rules: list[_Rule] = []
        for css in _stylesheets(root) if root is not None else ():
            start = rules[-1].order + 1 if rules else 0
            rules.extend(parse_rules(css, start_order=start))
        self._all = _RuleIndex(rules)
        self._hiding = _RuleIndex(
            rule for rule in rules if any(d.hides for d in rule.declarations.values())
        )

    def hides(self, element: HtmlElement) -> bool:
        """Whether the winning ``display`` or ``visibility`` of ``element`` hides it."""
        winners = _inline_declarations(element)
        if not any(d.hides for d in winners.values()) and not any(
            rule.selector.matches(element) for rule in self._hiding.candidates(element)
        ):
            return False
        for rule in self._all.candidates(element):
            if not rule.selector.matches(element):
                continue
            for name, declaration in rule.declarations.items():
                current = winners.get(name)
                if current is None or declaration.rank() > current.rank():
                    winners[name] = declaration
        return any(declaration.hides for declaration in winners.values())
