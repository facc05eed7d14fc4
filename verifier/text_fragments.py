"""Text-fragment links: the ``#:~:text=`` directive that makes a browser scroll to a quote.

Built by the rules of WICG "URL Fragment Text Directives"
(https://wicg.github.io/scroll-to-text-fragment/): the syntax of a text directive, its
percent-encoding, and the algorithm "find a range from a text directive", run here over one
plain string instead of a DOM.

The directive is computed from snap's *extracted* text, which can differ from the text a
browser builds from the live page (the page may have changed since it was captured; snap
leaves out hidden text and lays out tables and sup/sub its own way). A link made here is a
convenience for a reader who wants to see the passage on the live page, never evidence: the
evidence is the stored snapshot and its digest.

Pure functions over strings: no I/O and no imports from the app.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

EXACT_LIMIT: Final = 300
"""Quotes up to this many code points are linked as one ``textStart`` (the spec encourages an
exact match below 300 characters); longer ones as ``textStart,textEnd``."""
RANGE_WORDS: Final = range(3, 11)
"""Words in each of ``textStart`` and ``textEnd`` of a range link: the fewest that land."""
CONTEXT_WORDS: Final = 10
"""At most this many words of ``prefix`` and of ``suffix`` are tried."""

# Characters a text directive carries as they are (TextDirectiveExplicitChar); everything else,
# "-", "," and "&" included, is percent-encoded as UTF-8.
_EXPLICIT: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!$'()*+./:;=?@_~"
)
# Where snap's text has a line or a table cell break, the page has a block boundary; no term of
# a directive may cross one (each term matches inside one block).
_BREAKS: Final = frozenset("\n\r\t\v\f\x1c\x1d\x1e\x85\u2028\u2029")
# UAX #29 MidLetter, MidNum and MidNumLet: between two word characters they do not end a word
# ("can't", "3.14", "1,000").
_MID: Final = frozenset(
    "'.:,;·’‘\u0387\u05f4\u2027\ufe13\ufe52\ufe55\uff07\uff0e\uff1a\uff0c\uff1b"
)
# Scripts written without spaces, which browsers split into words with a dictionary: any
# position between two of their characters may be a word boundary.
_DICTIONARY_SCRIPT: Final = re.compile(
    "[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]"
)
_WHITESPACE_RUN: Final = re.compile(r"\s+")


@dataclass(frozen=True)
class TextDirective:
    """The four terms of a text directive, unencoded; ``start`` is the only one required."""

    start: str
    end: str | None = None
    prefix: str | None = None
    suffix: str | None = None

    def fragment(self) -> str:
        """``#:~:text=[prefix-,]start[,end][,-suffix]``, every term percent-encoded."""
        parts = [] if self.prefix is None else [percent_encode(self.prefix) + "-"]
        parts.append(percent_encode(self.start))
        if self.end is not None:
            parts.append(percent_encode(self.end))
        if self.suffix is not None:
            parts.append("-" + percent_encode(self.suffix))
        return "#:~:text=" + ",".join(parts)


def text_fragment(text: str, start: int, end: int) -> str:
    """The ``#:~:text=`` fragment for the quote at code points ``[start, end)`` of ``text``.

    Steps, in order:
    1. widen the span to whole words and trim white space at its ends (a browser matches only
       word-bounded text);
    2. describe it as ``textStart`` alone when it is at most ``EXACT_LIMIT`` code points and
       crosses no line or cell break, else as ``textStart,textEnd`` (the fewest words each,
       from 3, that land on the span);
    3. add ``prefix-,`` and ``,-suffix`` words only while the directive's first match in
       ``text`` is somewhere else, fewest words first;
    4. percent-encode each term.

    Matching here, as in browsers, ignores case and accents. Raises ValueError for a span
    outside the text, one with no visible character, or one no directive can single out.
    """
    return text_directive(text, start, end).fragment()


def text_directive(text: str, start: int, end: int) -> TextDirective:
    """The unencoded directive :func:`text_fragment` encodes (steps 1-3)."""
    first, last = word_span(text, start, end)
    searcher = _Searcher(text)
    for directive in _candidates(text, first, last):
        if searcher.find(directive) == (first, last):
            return directive
    raise ValueError(f"no text directive selects code points {first}-{last} alone")


def percent_encode(term: str) -> str:
    """UTF-8 percent-encoding of every character that is not a TextDirectiveExplicitChar."""
    return "".join(
        chr(byte) if chr(byte) in _EXPLICIT else f"%{byte:02X}" for byte in term.encode("utf-8")
    )


def word_span(text: str, start: int, end: int) -> tuple[int, int]:
    """``[start, end)`` widened to whole words, with white space trimmed from its ends."""
    if not 0 <= start <= end <= len(text):
        raise ValueError(f"span {start}-{end} is outside the text (0-{len(text)})")
    if start == end:
        raise ValueError("an empty span has nothing to link to")
    while start > 0 and _joined(text, start):
        start -= 1
    while end < len(text) and _joined(text, end):
        end += 1
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start == end:
        raise ValueError("the span holds no visible text to link to")
    return start, end


def is_word_boundary(text: str, position: int) -> bool:
    """Whether a browser may see a word boundary before ``text[position]``.

    Generous on purpose: it is used to find every place a directive could match, so a boundary
    is assumed unless both neighbours are word characters of a script written with spaces.
    """
    if position <= 0 or position >= len(text):
        return True
    left, right = text[position - 1], text[position]
    if not (_is_word_char(left) and _is_word_char(right)):
        return True
    return bool(_DICTIONARY_SCRIPT.match(left) or _DICTIONARY_SCRIPT.match(right))


def fold(text: str) -> str:
    """One character for one character, without case or accents: browsers compare text at
    the primary strength of the Unicode collation algorithm. Keeping the length keeps
    positions in the folded text equal to positions in the text."""
    return "".join(map(_fold_char, text))


def find_text_directive(text: str, directive: TextDirective) -> tuple[int, int] | None:
    """``[start, end)`` of the range the directive selects in ``text``, or None."""
    return _Searcher(text).find(directive)


@functools.lru_cache(maxsize=8192)
def _fold_char(character: str) -> str:
    base = unicodedata.normalize("NFD", character)[:1] or character
    lower = base.lower()
    return lower if len(lower) == 1 else base


@functools.lru_cache(maxsize=8192)
def _is_word_char(character: str) -> bool:
    return unicodedata.category(character)[0] in "LMN" or character == "_"


def _joined(text: str, position: int) -> bool:
    """True when ``position`` may be inside a word: widening stops only where no segmenter
    would join the two sides (so the span's ends are word boundaries in every browser)."""
    left, right = text[position - 1], text[position]
    if unicodedata.category(right)[0] == "M" or right == "\u200d":
        return True
    if _is_word_char(left) and _is_word_char(right):
        return True
    if right in _MID and _is_word_char(left):
        return position + 1 < len(text) and _is_word_char(text[position + 1])
    if left in _MID and _is_word_char(right):
        return position >= 2 and _is_word_char(text[position - 2])
    return False


def _candidates(text: str, first: int, last: int) -> Iterator[TextDirective]:
    """Directives for ``[first, last)``: the fewest context words first, then the fewest words
    in each range term."""
    quote = text[first:last]
    exact = len(quote) <= EXACT_LIMIT and not _BREAKS.intersection(quote)
    bodies = [(quote, None)] if exact else list(_range_terms(text, first, last))
    if not bodies:  # one long unbroken word (a line of CJK text): all of it
        bodies = [(quote, None)]
    prefixes = [None, *_prefixes(text, first)]
    suffixes = [None, *_suffixes(text, last)]
    for total in range(len(prefixes) + len(suffixes) - 1):
        for before in range(min(total, len(prefixes) - 1), -1, -1):
            after = total - before
            if after >= len(suffixes):
                continue
            for start, end in bodies:
                yield TextDirective(start, end, prefixes[before], suffixes[after])


def _range_terms(text: str, first: int, last: int) -> Iterator[tuple[str, str]]:
    """(textStart, textEnd) pairs: the first and last words, inside the first and last line
    of the span and never overlapping; from 3 words each up, then 2 and 1 if that is all
    there is room for."""
    heads = list(_word_ends(text, first, last))
    tails = list(_word_starts(text, first, last))
    seen: set[tuple[int, int]] = set()
    for count in (*RANGE_WORDS, 2, 1):
        if not heads or not tails:
            return
        head, tail = heads[min(count, len(heads)) - 1], tails[min(count, len(tails)) - 1]
        if head < tail and (head, tail) not in seen:
            seen.add((head, tail))
            yield text[first:head], text[tail:last]


def _word_ends(text: str, first: int, last: int) -> Iterator[int]:
    """Ends of the span's white-space separated words, left to right, up to the first break."""
    for match in _WHITESPACE_RUN.finditer(text, first, last):
        yield match.start()
        if _BREAKS.intersection(match.group()):
            return


def _word_starts(text: str, first: int, last: int) -> Iterator[int]:
    """Starts of the span's words, right to left, up to the last break."""
    for match in reversed(list(_WHITESPACE_RUN.finditer(text, first, last))):
        yield match.end()
        if _BREAKS.intersection(match.group()):
            return


def _prefixes(text: str, first: int) -> list[str]:
    """1, 2, … words just before ``first`` (white space between them and the quote is free),
    never across a break."""
    end = first
    while end > 0 and text[end - 1].isspace():
        end -= 1
    found: list[str] = []
    cursor = end
    while cursor > 0 and len(found) < CONTEXT_WORDS:
        start = cursor
        while start > 0 and not text[start - 1].isspace():
            start -= 1
        if is_word_boundary(text, start):
            found.append(text[start:end])
        gap = start
        while gap > 0 and text[gap - 1].isspace():
            gap -= 1
        if _BREAKS.intersection(text[gap:start]):
            break
        cursor = gap
    return found


def _suffixes(text: str, last: int) -> list[str]:
    """1, 2, … words just after ``last``, never across a break."""
    start = last
    while start < len(text) and text[start].isspace():
        start += 1
    found: list[str] = []
    cursor = start
    while cursor < len(text) and len(found) < CONTEXT_WORDS:
        end = cursor
        while end < len(text) and not text[end].isspace():
            end += 1
        if is_word_boundary(text, end):
            found.append(text[start:end])
        gap = end
        while gap < len(text) and text[gap].isspace():
            gap += 1
        if _BREAKS.intersection(text[end:gap]):
            break
        cursor = gap
    return found


class _Searcher:
    """WICG "find a range from a text directive" over one string (one block per line)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.folded = fold(text)

    def find(self, directive: TextDirective) -> tuple[int, int] | None:
        start, end = directive.start, directive.end
        prefix, suffix = directive.prefix, directive.suffix
        must_end_at_word = end is not None or suffix is None
        search = 0
        while search < len(self.text):
            if prefix is not None:
                prefix_match = self._find(prefix, search, word_start=True, word_end=False)
                if prefix_match is None:
                    return None
                search = prefix_match[0] + 1
                after = self._skip_space(prefix_match[1])
                if after >= len(self.text):
                    return None
                match = self._find(
                    start, after, word_start=False, word_end=must_end_at_word, at_start=True
                )
                if match is None:
                    continue
            else:
                match = self._find(start, search, word_start=True, word_end=must_end_at_word)
                if match is None:
                    return None
                search = match[0] + 1
            found = self._finish(match, end, suffix)
            if found is not None:
                return found if found != (-1, -1) else None
        return None

    def _finish(
        self, match: tuple[int, int], end: str | None, suffix: str | None
    ) -> tuple[int, int] | None:
        """The range that starts at ``match`` ends at ``end`` and is followed by ``suffix``;
        None to look for the next start, (-1, -1) when no later start can succeed either."""
        range_end_from = match[1]
        while range_end_from < len(self.text) or (end is None and suffix is None):
            if end is not None:
                end_match = self._find(
                    end, range_end_from, word_start=True, word_end=suffix is None
                )
                if end_match is None:
                    return -1, -1
                match = (match[0], end_match[1])
            if suffix is None:
                return match
            after = self._skip_space(match[1])
            if self._find(suffix, after, word_start=False, word_end=True, at_start=True):
                return match
            if end is None:
                return None
            range_end_from = match[1]
        return None if end is None else (-1, -1)

    def _find(
        self, query: str, start: int, *, word_start: bool, word_end: bool, at_start: bool = False
    ) -> tuple[int, int] | None:
        """WICG "find a string in range": the first word-bounded match at or after ``start``."""
        wanted = fold(query)
        index = self.folded.find(wanted, start)
        while index >= 0:
            if at_start and index != start:
                return None
            finish = index + len(wanted)
            if (not word_start or is_word_boundary(self.text, index)) and (
                not word_end or is_word_boundary(self.text, finish)
            ):
                return index, finish
            if at_start:
                return None
            index = self.folded.find(wanted, index + 1)
        return None

    def _skip_space(self, position: int) -> int:
        while position < len(self.text) and self.text[position].isspace():
            position += 1
        return position
