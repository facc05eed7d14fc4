"""A one-off check that tokenizes only the parts of the source that could hold the quote.

``check_quote(quote, source)`` for a single quote need not tokenize the whole source: every
occurrence of the quote contains its longest ASCII token, so the source is searched for that
token's text (case-insensitively, in C), and only windows around the hits are tokenized and
checked with the full rules.  The windows are cut at whitespace (no token spans whitespace)
and an occurrence counts only with at least one whole token of context on each side, so the
edge rules see what they would see in the whole source.

The shortcut is taken only when its answer is certain to equal ``prepare(source).check``:
the source is NFKC-normalized and free of invisible characters and hyphenated line breaks (so
a token's text is literally in the source), the quote has no ellipsis or bracket (one form to
try), and the anchor has few hits.  Otherwise, and whenever no occurrence is found (the
closest passage needs the whole source), ``None`` sends the caller to the full check.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Final

import regex

from verifier.tokenizer import INVISIBLE, NUMBER, SYMBOL, WORD, Scan, Token, scan_text

MAX_HITS: Final = 64
MARGIN: Final = 16
# Two searches, each in the engine that is faster at it (``re`` for a class, ``regex`` here).
_INVISIBLE_CHARACTER: Final = re.compile(rf"[{INVISIBLE}]")
_LINE_BREAK_HYPHEN: Final = regex.compile(r"[\-\u2010][^\S\n]*\r?\n")
_UNSAFE_QUOTE: Final = regex.compile(r"\u2026|\u22ef|\.\s?\.\s?\.|\[")


def found_spans(quote: str, source: str) -> tuple[tuple[int, int], ...] | None:
    """Every span where ``quote`` is found in ``source``, or None when the shortcut cannot
    answer (see the module docstring); an empty tuple is never returned."""
    if _UNSAFE_QUOTE.search(quote):
        return None
    scanned = scan_text(quote)
    anchor = _anchor(scanned.tokens)
    if anchor is None or not _safe_source(source):
        return None
    hits = _hits(anchor.exact, source)
    if hits is None or not hits:
        return None
    spans: set[tuple[int, int]] = set()
    before, after = anchor.start, len(quote) - anchor.start
    for start, end in _windows(hits, source, before, after):
        found = _check_window(scanned, source, start, end)
        if found is None:
            return None
        spans.update(found)
    return tuple(sorted(spans)) or None


def _anchor(tokens: list[Token]) -> Token | None:
    """The longest token whose text is ASCII: the rarest, most likely."""
    candidates = [
        token
        for token in tokens
        if token.kind in (WORD, NUMBER, SYMBOL) and token.exact.isascii() and token.text.isascii()
    ]
    return max(candidates, key=lambda token: len(token.exact), default=None)


def _safe_source(source: str) -> bool:
    return (
        unicodedata.is_normalized("NFKC", source)
        and not _INVISIBLE_CHARACTER.search(source)
        and not _LINE_BREAK_HYPHEN.search(source)
    )


def _hits(anchor: str, source: str) -> list[int] | None:
    hits: list[int] = []
    for match in _anchor_pattern(anchor).finditer(source, overlapped=True):
        hits.append(match.start())
        if len(hits) > MAX_HITS:
            return None
    return hits


@functools.lru_cache(maxsize=256)
def _anchor_pattern(anchor: str) -> regex.Pattern[str]:
    """The anchor's search pattern; kept, since compiling through ``regex``'s own cache costs
    more than the search on a small document."""
    return regex.compile(regex.escape(anchor), regex.IGNORECASE | regex.ASCII)


def _windows(hits: list[int], source: str, before: int, after: int) -> list[tuple[int, int]]:
    """Whitespace-bounded windows around the hits, merged where they overlap: twice the quote's
    length on either side of the anchor, and a margin (a match that does not fit sends the
    check to the whole source)."""
    windows: list[tuple[int, int]] = []
    for hit in hits:
        start = _whitespace_before(source, hit - 2 * before - MARGIN)
        end = _whitespace_after(source, hit + 2 * after + MARGIN)
        if windows and start <= windows[-1][1]:
            windows[-1] = (windows[-1][0], max(end, windows[-1][1]))
        else:
            windows.append((start, end))
    return windows


def _whitespace_before(source: str, at: int) -> int:
    if at <= 0:
        return 0
    found = max(source.rfind(" ", 0, at), source.rfind("\n", 0, at))
    return 0 if found < 0 else found


def _whitespace_after(source: str, at: int) -> int:
    if at >= len(source):
        return len(source)
    found = [index for index in (source.find(" ", at), source.find("\n", at)) if index >= 0]
    return min(found) if found else len(source)


def _check_window(scanned: Scan, source: str, start: int, end: int) -> list[tuple[int, int]] | None:
    """The spans found in ``source[start:end]`` (shifted), or None if one needs more context.

    A window that does not begin the source is read after a sentinel word, so that it is read
    as the middle of a text, as it stands in the source.
    """
    from verifier.matcher import prepare  # a cycle: the matcher calls this module

    sentinel = "" if start == 0 else "x "
    window = prepare(sentinel + source[start:end])
    found = window.spans_of(scanned)
    if not found:
        return []
    first_allowed = 0 if start == 0 else 2
    last_allowed = len(window) - 1 if end == len(source) else len(window) - 2
    spans = []
    for span_start, span_end in found:
        tokens = window.tokens_overlapping(span_start, span_end)
        if tokens[0] < first_allowed or tokens[-1] > last_allowed:
            return None
        shift = start - len(sentinel)
        spans.append((shift + span_start, shift + span_end))
    return spans
