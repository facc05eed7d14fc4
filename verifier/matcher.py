"""Quote checking: exact by default.

``check_quote(quote, source)`` is ``prepare(source).check(quote)``; prepare once and check many
quotes when re-verifying a snapshot's citations.  A quote passes only when its tokens (see
``verifier.tokenizer``: every character counts except the documented copy noise) equal a run
of the source's tokens, and the run does not cut the source.  The steps, in order:

1. The quote is tokenized.  A quote with nothing to compare is ``could_not_check``.
2. Every run of source tokens with the same keys is a candidate (an index lookup on the
   quote's rarest key once the source is indexed, else a C-speed search over the key ids).
3. A candidate is refused when
   a. letter case differs where case counts (a unit, a mixed-case or 2-3 capital word);
   b. an emoji or reference mark the quote has is not in the source at that place;
   c. it cuts the source: a token at its edge is glued to the source text outside it (other
      than an opening mark before it or a closing mark after it), or a number at its edge
      continues in the source (a digit, a separator and a digit, a sign, a unit, an operator,
      a magnitude word: "5" is not in "5'000", "-5", "5 %" or "5 million"), on its line and
      cell (never across a line break or a tab), but not a list next to a date or version.
   d. the source has code (``verifier.code``: spans its extraction recorded, or backtick-
      delimited runs) and the run differs from it there: a word's case, what stands between
      two tokens of code other than whitespace, or the code going on along its line past an
      edge of the run.
4. If no candidate is accepted, the quote is tried again as written but with its "[1]"-like
   marks read as text, then without the quotation marks around it (“…”, «…», 「…」), then
   each without an ellipsis at its start or end (which only marks truncation).  Against a
   source with code, then without the backticks of its inline Markdown code (accepted only
   where what they held is the source's code), then with its lone ``,`` ``;`` ``.`` ``:`` read
   as gaps, as code reads them (accepted only where each one that the quote as written reads
   as a token falls in code, where whitespace only collapses).  An ellipsis
   inside the quote stands for left-out words: such a quote is ``could_not_check`` unless it
   is in the source as written.
5. If nothing matched, the closest passage is computed for display (see ``closest``: a
   window found through the token index, lined up with the quote by an edit alignment); it
   never passes a quote.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import operator
import sys
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import regex

from verifier import closest as closest_passage
from verifier.closest import Closest, Edit, EditKind
from verifier.code import NO_CODE, CodeSpans, compared_text
from verifier.errors import PackError
from verifier.offsets import TextOffsets
from verifier.status import Status
from verifier.tokenizer import (
    CASE_MAY_COUNT,
    CHAR,
    CLOSE,
    DOUBLE_QUOTES,
    GLUED,
    KIND_MASK,
    NUMBER,
    OPEN,
    QUOTE,
    SCRIPT,
    SINGLE_QUOTES,
    SYMBOL,
    WORD,
    Neighbour,
    Scan,
    SideItem,
    Token,
    case_counts,
    comparison_key_batches,
    fold_word,
    iter_columns,
    scan_text,
)

VERIFIER_ID: Final = "snap-verifier@5"
"""@4: code spans (``verifier.code``), given or backtick-delimited, are compared as code."""

QUOTE_FOUND: Final = Status.QUOTE_FOUND
NOT_FOUND: Final = Status.NOT_FOUND
COULD_NOT_CHECK: Final = Status.COULD_NOT_CHECK

EMPTY_QUOTE: Final = "the quote has no words, numbers or symbols to compare"
INNER_ELLIPSIS: Final = (
    "the quote has an ellipsis inside it: words were left out, so it cannot be compared exactly"
)
MAGNITUDE_WORDS: Final = frozenset(
    {
        "hundred",
        "thousand",
        "million",
        "billion",
        "trillion",
        "lakh",
        "crore",
        "percent",
        "per",
        "mn",
        "bn",
        "tn",
        "mio",
        "mrd",
        "k",
    }
)
# Units written as words after a number ("3.5 kg", "41 ms"): a quote ending at the number
# leaves out what it counts, as it would leave out "%" or "million". Only abbreviations that
# are not also common words ("in", "a", "at" are not here), compared case-folded.
UNIT_WORDS: Final = frozenset(
    {
        *("kg", "g", "mg", "µg", "mcg", "lb", "lbs", "oz"),
        *("km", "m", "cm", "mm", "µm", "nm", "mi", "ft", "yd"),
        *("l", "ml", "cl", "dl"),
        *("s", "ms", "µs", "ns", "sec", "secs", "min", "mins", "h", "hr", "hrs"),
        *("kb", "mb", "gb", "tb", "pb", "kib", "mib", "gib", "tib", "kbps", "mbps", "gbps"),
        *("hz", "khz", "mhz", "ghz", "w", "kw", "mw", "gw", "kwh", "mwh", "gwh"),
        *("v", "kv", "mv", "ma", "mah", "rpm", "fps", "dpi", "px"),
        *("usd", "eur", "gbp", "jpy", "chf", "cny", "inr", "dollars", "euros", "yen"),
    }
)
NEGATIVE_ENDINGS: Final = ("ない", "なかっ", "なく", "ません", "ず", "ぬ", "ねば")
_EDGE_ELLIPSIS = (
    r"(?:\[\s*(?:\u2026|\.\s?\.\s?\.)\s*\]|\(\s*(?:\u2026|\.\.\.)\s*\)"
    r"|\u2026{1,2}|\u22ef|\.\s?\.\s?\.)"
)
_ANY_ELLIPSIS: Final = regex.compile(r"\u2026|\u22ef|\.\s?\.\s?\.")
_WORDISH: Final = frozenset({WORD, NUMBER, CHAR, SCRIPT})
_LABEL_COLON: Final = "\uff1a"
"""The full-width colon ends a label before a date or a number in CJK text ("日期：2024-05-14"):
a quote may start right after it, as after "、"."""
_LIST_SEPARATOR: Final = regex.compile(r"[,;]\s+")
_CODE_BETWEEN: Final = "the quote differs from the source's code between two of its tokens"
_CODE_GOES_ON: Final = "the quote cuts the source's code along its line"


@dataclass(frozen=True, slots=True)
class QuoteCheck:
    """The outcome of checking one quote; offsets are code points into the source."""

    status: Status
    found: bool
    start: int | None
    end: int | None
    original: str | None
    matches: int
    spans: tuple[tuple[int, int], ...]
    closest: Closest | None
    reason: str | None


class KeyIndex(Mapping[int, Sequence[int]]):
    """Token positions by key id, in ascending order: a counting sort into two flat arrays, so
    the index costs 4 bytes per token (plus 4 per distinct key) instead of a list per key."""

    def __init__(self, ids: array[int], keys: int) -> None:
        counts = array("i", [0]) * (keys + 1)  # arrays, not lists: no int object per key
        for key_id in ids:
            counts[key_id + 1] += 1
        self._offsets = array("i", itertools.accumulate(counts))
        order = array("i", [0]) * len(ids)
        cursor = self._offsets[:-1]
        for index, key_id in enumerate(ids):
            order[cursor[key_id]] = index
            cursor[key_id] += 1
        self._order = memoryview(order)

    def __getitem__(self, key_id: int) -> Sequence[int]:
        found: Sequence[int] | None = self.get(key_id)
        if found is None:
            raise KeyError(key_id)
        return found

    def get(self, key_id: int, default: Any = None) -> Any:
        """As ``Mapping.get``, without raising and catching KeyError (a hot path)."""
        if not 0 <= key_id < len(self._offsets) - 1:
            return default
        return self._order[self._offsets[key_id] : self._offsets[key_id + 1]]

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self)))

    @classmethod
    def from_arrays(cls, offsets: array[int], order: array[int]) -> KeyIndex:
        """An index rebuilt from the two arrays ``arrays`` gave (a packed prepared source keeps
        them, so loading one skips the counting sort, a Python loop per token)."""
        index = cls.__new__(cls)
        index._offsets = offsets
        index._order = memoryview(order)
        return index

    def arrays(self) -> tuple[array[int], array[int]]:
        """The index's offsets by key id and token positions, as ``from_arrays`` takes them."""
        return self._offsets, array("i", self._order)


_LONG: Final = 255


@dataclass(frozen=True, slots=True)
class PreparedParts:
    """A prepared source's arrays and tables, apart from its text (``PreparedSource.parts``):
    per token a key id, a code-point start, a one-byte length (``_LONG`` for a long token,
    whose end is in ``long_ends``) and one byte of kind and flags; side items by the token they
    precede; the keys in id order; the key index (``KeyIndex.arrays``)."""

    ids: array[int]
    starts: array[int]
    lengths: bytes
    meta: bytes
    long_ends: dict[int, int]
    side: dict[int, tuple[str, ...]]
    keys: list[str]
    index_offsets: array[int]
    index_order: array[int]


@dataclass(frozen=True, slots=True)
class _Refusal:
    """Why one candidate run was refused, and which source tokens show it."""

    reason: str
    first: int
    last: int
    differing: tuple[int, ...]


def normalized_digest(text: str, code: CodeSpans | None = None) -> str:
    """``sha256:<hex>`` of the comparison keys of ``text``, one per line.

    Two texts with the same digest give the same result for every quote, which is what lets a
    snapshot record say which normalized text its citations were checked against.  The keys
    are hashed batch by batch as the text is scanned, case settled in bulk, so a large text is
    never held as a token list.  A text with code (``code``, or backtick-delimited runs) also
    hashes, after the keys, each span's place among the tokens and its text (whitespace
    collapsed, line breaks kept), which is all that code adds to the comparison; a text without
    code has the digest it always had.
    """
    hasher = hashlib.sha256()
    separator = ""
    spans = (code or NO_CODE).with_text(text)
    starts = array("q")  # the tokens' offsets, gathered in the same scan, when there is code
    for keys in comparison_key_batches(text, starts if spans else None):
        if keys:
            hasher.update((separator + "\n".join(keys)).encode("utf-8"))
            separator = "\n"
    if spans:
        for start, end in spans.ranges:
            collapsed = _CODE_SPACE.sub(_collapse_space, text[start:end])
            place = f"{bisect_left(starts, start)}:{bisect_left(starts, end)}:"
            hasher.update(("\n\x01" + place + collapsed).encode("utf-8"))
    return "sha256:" + hasher.hexdigest()


_CODE_SPACE: Final = regex.compile(r"\s+")


def _collapse_space(space: regex.Match[str]) -> str:
    return "\n" if "\n" in space.group() else " "


def check_quote(quote: str, source: str, code: CodeSpans | None = None) -> QuoteCheck:
    """Check that ``quote`` occurs in ``source`` (see the module docstring for the steps);
    ``code``: the source's code spans, if its extraction recorded them (``verifier.code``).

    Equal to ``prepare(source, code).check(quote)``; a quote is usually checked, closest
    passage included, by tokenizing only windows of the source around its rarest words
    (``verifier.oneoff``), each with the code spans inside it.  Against a source with code, a
    quote with a backtick (whose unticked form ``check`` tries) is checked in full; one with a
    lone ``,`` ``;`` ``.`` ``:`` that windows do not find is looked for again with them read
    as gaps, as ``check`` does (``_respaced_check``), in windows too.
    """
    spans = (code or NO_CODE).with_text(source)
    scanned = _only_form(quote)
    if scanned is None or (spans and "`" in quote):
        return prepare(source, spans).check(quote)
    from verifier.oneoff import read_windows  # not loaded by a process that prepares sources

    answer = read_windows(quote, scanned, source, _prepare_window, spans)
    if answer is None:
        return _full_check(quote, scanned, source, spans)
    if not answer.spans and spans and _CODE_COMMA.search(quote) is not None:
        respaced = _respaced_in_windows(quote, source, spans)
        if respaced is None:
            return prepare(source, spans).check(quote)
        answer = answer._replace(spans=respaced)
    if answer.spans:
        return _found_at(source, answer.spans)
    if answer.closest is None:  # not there, but only the whole source tells its closest passage
        return _full_check(quote, scanned, source, spans)
    return QuoteCheck(NOT_FOUND, False, None, None, None, 0, (), answer.closest, None)


def _full_check(quote: str, scanned: Scan, source: str, code: CodeSpans) -> QuoteCheck:
    """``prepare(source, code).check(quote)`` for a quote with one form, tokenized (``scanned``):
    without code, that is its one scan checked (not scanned again)."""
    if code:
        return prepare(source, code).check(quote)
    return prepare(source)._check_scans(quote, [(0, scanned)], closest=True)


def _found_at(source: str, spans: tuple[tuple[int, int], ...]) -> QuoteCheck:
    """``quote_found`` at ``spans`` (``PreparedSource._found``), for the one-off check."""
    start, end = spans[0]
    return QuoteCheck(
        QUOTE_FOUND, True, start, end, source[start:end], len(spans), spans, None, None
    )


def _respaced_in_windows(
    quote: str, source: str, code: CodeSpans
) -> tuple[tuple[int, int], ...] | None:
    """``PreparedSource._respaced_check`` of a quote with one form (no "[", no ellipsis, no
    quotation marks around it), read from windows: where it is found with its lone marks read
    as gaps, each that it reads as a token falling in code; empty when nowhere, None when the
    windows cannot tell."""
    from verifier.oneoff import find_in_code

    masked, altered = _masked(quote, ((0, len(quote)),), inner=True)
    if not altered:
        return ()
    scanned = scan_text(masked)
    if not scanned.tokens:
        return ()
    scanned = scanned._replace(text=quote)  # gaps compared as written
    marks = _token_marks(quote, altered)
    return find_in_code(quote, scanned, source, _prepare_window, code, marks)


def _prepare_window(text: str, code: CodeSpans) -> PreparedSource:
    """A window of a source tokenized with the code spans inside it, as given: its own
    backticks are not read again (their pairing is the whole source's to say)."""
    return PreparedSource(text, code, backticks=False)


def prepare(source: str, code: CodeSpans | None = None) -> PreparedSource:
    """Tokenize ``source`` once, for checking many quotes against it; ``code``: its code spans
    (``verifier.code``), if its extraction recorded them."""
    return PreparedSource(source, code)


def _number_new_keys(vocabulary: dict[str, int], keys: list[str]) -> None:
    """Give the keys not yet in ``vocabulary`` the next ids, in the order first met, with C-level
    calls only (a ``__missing__`` hook would be a Python call per distinct key)."""
    fresh = dict.fromkeys(itertools.filterfalse(vocabulary.__contains__, keys))
    vocabulary.update(zip(fresh, itertools.count(len(vocabulary))))


class PreparedSource:
    """A tokenized source kept in flat arrays; ``check`` never re-tokenizes it.

    Per token: a key id, the code-point start, a one-byte length and one byte of kind and
    flags.  The side items
    (emoji, reference marks) are kept in a small dictionary, since few tokens have them; the
    exact form of a case-sensitive word is read again from the source when compared.  The
    key → positions index is built on the second check: one check is a single search over the
    key ids.
    """

    __slots__ = (
        "_checks",
        "_code",
        "_digest",
        "_held",
        "_ids",
        "_keys",
        "_lengths",
        "_long_ends",
        "_meta",
        "_offsets",
        "_positions",
        "_side",
        "_starts",
        "_vocabulary",
        "source",
    )

    def __init__(
        self, source: str, code: CodeSpans | None = None, *, backticks: bool = True
    ) -> None:
        """``backticks=False``: ``code`` is all the code (a window of a source, whose
        backtick code the whole source's pairing decides), not read again from the text."""
        self.source = source
        self._code = (code or NO_CODE).with_text(source) if backticks else (code or NO_CODE)
        scanned_text, _ = _masked(source, self._code.ranges) if self._code else (source, [])
        side: list[SideItem] = []
        vocabulary: dict[str, int] = {}
        self._ids = array("i")
        self._starts = array("i")
        self._lengths = bytearray()
        self._long_ends: dict[int, int] = {}
        self._meta = bytearray()
        self._side: dict[int, tuple[str, ...]] = {}
        self._positions: KeyIndex | None = None
        self._checks = 0
        self._digest: str | None = None
        self._held: int | None = None
        self._offsets: TextOffsets | None = None
        in_code = self._in_span if self._code else None
        for columns in iter_columns(scanned_text, side, settle=False, code=in_code):
            _number_new_keys(vocabulary, columns.keys)
            # fromlist converts a list at once, about twice as fast as extend
            self._ids.fromlist(list(map(vocabulary.__getitem__, columns.keys)))
            self._starts.fromlist(columns.starts)
            self._extend_lengths(columns.starts, columns.ends)
            self._meta.extend(columns.flags)
        self._vocabulary = vocabulary
        self._keys: list[str] = list(vocabulary)
        for item in side:
            self._side[item.before] = (*self._side.get(item.before, ()), item.key)

    def __len__(self) -> int:
        return len(self._ids)

    def parts(self) -> PreparedParts:
        """What this prepared source holds besides its text, index built, for
        ``verifier.packed`` to write as bytes."""
        if self._code:
            raise PackError("a source read with code spans is not packed")
        if self._positions is None:
            self._build_index()
        assert self._positions is not None
        offsets, order = self._positions.arrays()
        return PreparedParts(
            self._ids,
            self._starts,
            bytes(self._lengths),
            bytes(self._meta),
            dict(self._long_ends),
            dict(self._side),
            list(self._keys),
            offsets,
            order,
        )

    @classmethod
    def from_parts(cls, source: str, parts: PreparedParts) -> PreparedSource:
        """The prepared source of ``source`` that ``parts`` describe, without tokenizing it:
        the caller vouches that ``parts`` came from ``prepare(source).parts()``
        (``verifier.packed`` checks that before calling)."""
        prepared = cls.__new__(cls)
        prepared.source = source
        prepared._code = NO_CODE.with_text(source)  # a source with code spans is never packed
        prepared._ids = parts.ids
        prepared._starts = parts.starts
        prepared._lengths = bytearray(parts.lengths)
        prepared._meta = bytearray(parts.meta)
        prepared._long_ends = parts.long_ends
        prepared._side = parts.side
        prepared._keys = parts.keys
        prepared._vocabulary = dict(zip(parts.keys, itertools.count(), strict=False))
        prepared._positions = KeyIndex.from_arrays(parts.index_offsets, parts.index_order)
        prepared._checks = 0
        prepared._digest = None
        prepared._held = None
        prepared._offsets = None
        return prepared

    def held_bytes(self) -> int:
        """About how much memory this prepared source holds (its text, arrays, keys and index,
        counted as built, so that the figure does not change): what caches of prepared sources
        bound.  Worked out once: a run's cache of texts asks it of every text it takes from
        the process's shared cache, and summing a 100 KB page's keys cost about as much as
        checking one of its quotes."""
        if self._held is None:
            tokens = len(self._ids)
            text = sys.getsizeof(self.source)
            keys = sum(map(len, self._keys)) + 120 * len(self._keys)  # a str and a dict slot each
            index = 4 * (tokens + len(self._keys))
            self._held = text + 10 * tokens + keys + index
        return self._held

    def _extend_lengths(self, starts: Sequence[int], ends: Sequence[int]) -> None:
        """Token lengths in one byte each (3 bytes a token less than an array of ends); a token of
        ``_LONG`` code points or more keeps its end in ``_long_ends``."""
        lengths = list(map(operator.sub, ends, starts))
        if max(lengths, default=0) >= _LONG:
            offset = len(self._lengths)
            for index, length in enumerate(lengths):
                if length >= _LONG:
                    self._long_ends[offset + index] = ends[index]
                    lengths[index] = _LONG
        self._lengths.extend(lengths)

    def _end(self, index: int) -> int:
        """Where token ``index`` ends (code points)."""
        length = self._lengths[index]
        if length == _LONG:
            return self._long_ends[index]
        return self._starts[index] + length

    @property
    def offsets(self) -> TextOffsets:
        """The converter of this source's offsets to UTF-16 code units and UTF-8 bytes, made on
        first use and kept with the tokens: every report converts the spans it prints, and a
        process that shares prepared sources between runs (``snap serve``, reverify) builds
        each converter once, not once per run."""
        if self._offsets is None:
            self._offsets = TextOffsets(self.source)
        return self._offsets

    def normalized_digest(self) -> str:
        """``normalized_digest(self.source, code)``, worked out once."""
        if self._digest is None:
            self._digest = normalized_digest(self.source, self._code)
        return self._digest

    def compared_forms(self, index: int, token: Token) -> tuple[str, str]:
        """The forms of source token ``index`` and of ``token`` that matching compares: with
        letter case when either is case-sensitive, folded otherwise."""
        if token.sensitive or self._sensitive(index):
            return self._exact_form(index), token.exact
        return self._keys[self._ids[index]], token.key

    def _sensitive(self, index: int) -> bool:
        """Whether the case of token ``index`` is compared.  A prepared source is scanned with
        the case unsettled (``iter_columns(settle=False)``): it is settled here, for the few
        tokens a quote is compared with, rather than for every token of the source."""
        flags = self._meta[index]
        if not flags & CASE_MAY_COUNT:
            return False
        before = self._neighbour(index - 1) if index > 0 else None
        after = self._neighbour(index + 1) if index + 1 < len(self._meta) else None
        start = self._starts[index]
        return case_counts(self.source, start, self._end(index), flags, before, after)

    def _neighbour(self, index: int) -> Neighbour:
        """What the case rule reads of token ``index`` next to a word (see ``case_counts``)."""
        return self._meta[index], self._end(index), self._exact_form(index)

    def kind(self, index: int) -> int:
        """The kind of token ``index`` (see ``verifier.tokenizer``)."""
        return self._meta[index] & KIND_MASK

    def key(self, index: int) -> str:
        """The comparison key of token ``index``."""
        return self._keys[self._ids[index]]

    def token_span(self, first: int, last: int) -> tuple[int, int]:
        """Code-point span from the start of token ``first`` to the end of token ``last``."""
        return self._starts[first], self._end(last)

    def tokens_overlapping(self, start: int, end: int) -> range:
        """Indices of the tokens that overlap the code-point range ``[start, end)``."""
        first = bisect_right(self._starts, start) - 1  # the last token starting at or before
        if first < 0 or self._end(first) <= start:
            first += 1
        return range(first, bisect_left(self._starts, end))

    def check(self, quote: str, *, closest: bool = True) -> QuoteCheck:
        """Check ``quote`` against this source; equal to ``check_quote(quote, self.source)``.

        ``closest=False`` skips the search for the closest passage of a quote not found.
        """
        forms = _quote_forms(quote)
        if len(forms) == 1:  # the common case, without a generator
            answer = self._check_scans(quote, enumerate(_scans(quote)), closest)
        else:
            scans = (
                (number, scanned) for form in forms for number, scanned in enumerate(_scans(form))
            )
            answer = self._check_scans(quote, scans, closest)
        if answer.found or not self._code:
            return answer
        if "`" in quote:
            unticked = _unticked(quote)
            if unticked is not None:
                form, runs = unticked
                found = self.check(form, closest=False)
                if found.found and self._runs_in_code(form, runs, found):
                    return found
        if _CODE_COMMA.search(quote) is None:
            return answer  # see _respaced_check
        return self._respaced_check(forms) or answer

    def _runs_in_code(self, form: str, runs: Sequence[tuple[int, int]], found: QuoteCheck) -> bool:
        """Does each run the quote had between backticks stand in the source's code wherever
        ``form`` (the quote without them) was found?  Its tokens are mapped through the match,
        a run of as many tokens, as written or with its lone marks read as gaps."""
        scans = (scan_text(form).tokens, scan_text(_masked(form, ((0, len(form)),))[0]).tokens)
        for start, end in found.spans:
            first = bisect_left(self._starts, start)
            count = len(self.tokens_overlapping(start, end))
            tokens = next((scan for scan in scans if len(scan) == count), None)
            if tokens is None:  # found in a form this cannot line up: refuse, to be safe
                return False
            for offset, token in enumerate(tokens):
                inside = any(low <= token.start < high for low, high in runs)
                if inside and self._code.span_at(self._starts[first + offset]) is None:
                    return False
        return True

    def _respaced_check(self, forms: list[str]) -> QuoteCheck | None:
        """The quote found with its ``,`` ``;`` ``.`` ``:`` between tokens read as spaces,
        where every one falls between two tokens of the source's code.  In code those marks are
        never tokens (``_masked``): a glued comma is a symbol and a spaced one sentence
        punctuation only in prose, and in code whitespace only collapses (``f(a,b)`` =
        ``f(a, b)``); what stands between two tokens of code is compared as text instead."""
        for form in forms:
            masked, altered = _masked(form, ((0, len(form)),), inner=True)
            if not altered:
                continue
            marks = _token_marks(form, altered)  # glued marks: symbols outside code
            for scanned in _scans(masked):
                if not scanned.tokens:
                    continue
                scanned = scanned._replace(text=form)  # gaps compared as written
                accepted, _ = self._accepted_runs(scanned)
                accepted = [first for first in accepted if self._in_code(first, scanned, marks)]
                if accepted:
                    return self._found(accepted, len(scanned.tokens))
        return None

    def _in_code(self, first: int, scanned: Scan, positions: Iterable[int]) -> bool:
        """Does each of the quote's ``positions`` fall between two tokens of the run at ``first``
        with code between them?"""
        tokens = scanned.tokens
        starts = [token.start for token in tokens]
        for position in positions:
            after = bisect_right(starts, position)  # tokens starting at or before it
            if not 0 < after < len(tokens) or not self._gap_in_code(
                self._end(first + after - 1), self._starts[first + after]
            ):
                return False
        return True

    def _check_scans(
        self, quote: str, scans: Iterable[tuple[int, Scan]], closest: bool
    ) -> QuoteCheck:
        """``check`` over the quote's forms as tokenized, each numbered within its form (0: its
        marks read as marks), tried in order until one is found."""
        self._checks += 1
        first_refusal: _Refusal | None = None
        primary: Scan | None = None  # the last form, marks read as marks: what is compared
        for number, scanned in scans:
            if number == 0:
                primary = scanned
            if not scanned.tokens:
                continue
            accepted, refusal = self._accepted_runs(scanned)
            if accepted:
                return self._found(accepted, len(scanned.tokens))
            first_refusal = first_refusal or refusal
        if _ANY_ELLIPSIS.search(_strip_edge_ellipses(_unwrapped(quote) or quote)):
            return _unchecked(INNER_ELLIPSIS)
        if primary is None or not primary.tokens:
            return _unchecked(EMPTY_QUOTE)
        if first_refusal is not None:
            return self._refused(first_refusal)
        nearest = self._closest(primary) if closest else None
        return QuoteCheck(NOT_FOUND, False, None, None, None, 0, (), nearest, None)

    def spans_of(
        self, scanned: Scan, code_marks: Iterable[int] | None = None
    ) -> tuple[tuple[int, int], ...]:
        """Where a tokenized quote is found under every rule, as written (one form: no ellipsis,
        marks read as marks); what ``check`` finds for such a quote, without scanning it again.
        The one-off shortcut checks its windows with it.  ``code_marks``: the quote is read
        with its lone marks as gaps, and each of these must fall in code (``_respaced_check``)."""
        self._checks += 1
        accepted, _ = self._accepted_runs(scanned)
        if code_marks is not None:
            marks = list(code_marks)
            accepted = [first for first in accepted if self._in_code(first, scanned, marks)]
        length = len(scanned.tokens)
        return tuple(self.token_span(start, start + length - 1) for start in accepted)

    def occurrences(self, quote_ids: Sequence[int]) -> list[int]:
        """Start token indices of every run of source tokens with these key ids, in order.

        Before the index exists this is one search over the packed ids (C speed, linear);
        with the index, candidates come from the rarest id's positions, falling back to the
        packed search when checking them could cost more than one pass.
        """
        length = len(quote_ids)
        if length == 0:
            return []
        if self._checks >= 2 and self._positions is None:
            self._build_index()
        if self._positions is not None:
            positions = self._positions
            rarest = min(range(length), key=lambda j: len(positions.get(quote_ids[j], ())))
            candidates = positions.get(quote_ids[rarest], ())
            if len(candidates) * length <= len(self._ids) + length:
                wanted = array("i", quote_ids)
                ids = self._ids
                return [
                    start
                    for start in (index - rarest for index in candidates)
                    if start >= 0 and ids[start : start + length] == wanted
                ]
        return self._packed_search(quote_ids)

    def _packed_search(self, quote_ids: Sequence[int]) -> list[int]:
        haystack, needle = self._ids.tobytes(), array("i", quote_ids).tobytes()
        width = self._ids.itemsize
        found: list[int] = []
        at = haystack.find(needle)
        while at >= 0:
            if at % width == 0:
                found.append(at // width)
            at = haystack.find(needle, at + 1)
        return found

    def _positions_of(self, key_ids: Sequence[int]) -> Mapping[int, Sequence[int]]:
        """Where each of ``key_ids`` occurs, in one C-level pass over the key ids: the first
        check of a source (a one-off check) does not pay for the whole index."""
        wanted = frozenset(key_ids)
        found: dict[int, array[int]] = {key_id: array("i") for key_id in wanted}
        ids = self._ids
        for index in itertools.compress(itertools.count(), map(wanted.__contains__, ids)):
            found[ids[index]].append(index)
        return found

    def _build_index(self) -> None:
        self._positions = KeyIndex(self._ids, len(self._keys))

    def _key_ids(self, scanned: Scan) -> list[int]:
        """The quote's key ids in this source's vocabulary; -1 for a key the source lacks."""
        vocabulary = self._vocabulary
        return [vocabulary.get(token.key, -1) for token in scanned.tokens]

    def _accepted_runs(self, scanned: Scan) -> tuple[list[int], _Refusal | None]:
        """The candidate runs that pass every rule, and why the first refused one failed."""
        quote_ids = self._key_ids(scanned)
        if -1 in quote_ids:
            return [], None
        accepted: list[int] = []
        first_refusal: _Refusal | None = None
        for start in self.occurrences(quote_ids):
            refusal = self._refusal(start, scanned)
            if refusal is None:
                accepted.append(start)
            elif first_refusal is None:
                first_refusal = refusal
        return accepted, first_refusal

    def _refusal(self, first: int, scanned: Scan) -> _Refusal | None:
        """None when the run at ``first`` matches the quote under every rule."""
        last = first + len(scanned.tokens) - 1
        meta, lengths, starts, source = self._meta, self._lengths, self._starts, self.source
        differing = tuple(  # the case is settled only where the forms differ: rarely
            index
            for index, token in enumerate(scanned.tokens, first)
            if (token.sensitive or meta[index] & CASE_MAY_COUNT)
            and not (  # written alike in the source: the forms are equal
                lengths[index] == len(token.exact) < _LONG
                and source.startswith(token.exact, starts[index])
            )
            and token.exact != self._exact_form(index)
            and (token.sensitive or self._sensitive(index))
        )
        if differing:
            return _Refusal("the letter case differs where case counts", first, last, differing)
        for before, keys in _side_by_gap(scanned).items():
            if not _is_subsequence(keys, self._side.get(first + before, ())):
                at = min(first + before, last)
                return _Refusal("an emoji or reference mark differs", first, last, (at,))
        if self._code:
            refusal = self._code_refusal(first, last, scanned)
            if refusal is not None:
                return refusal
        return self._edge_refusal(first, last)

    def _code_refusal(self, first: int, last: int, scanned: Scan) -> _Refusal | None:
        """A refusal by the rules of code (``verifier.code``): a word in code whose case
        differs, a difference between two tokens of code other than whitespace, or a match
        that begins or ends where the code goes on along its line."""
        code, tokens, quote = self._code, scanned.tokens, scanned.text
        differing = tuple(
            index
            for index, token in enumerate(tokens, first)
            if token.kind == WORD
            and code.span_at(self._starts[index]) is not None
            and token.exact != self._exact_form(index)
        )
        if differing:
            return _Refusal("the letter case differs in code", first, last, differing)
        for offset in range(1, len(tokens)):
            left, right = first + offset - 1, first + offset
            gap_start, gap_end = self._end(left), self._starts[right]
            if self._gap_in_code(gap_start, gap_end) and compared_text(
                self.source[gap_start:gap_end]
            ) != compared_text(quote[tokens[offset - 1].end : tokens[offset].start]):
                return _Refusal(_CODE_BETWEEN, first, last, (left, right))
        start, end = self._starts[first], self._end(last)
        ending = code.span_at(end - 1)
        if ending is not None and ending[1] > end:
            line_end = self.source.find("\n", end, ending[1])
            tail = compared_text(self.source[end : ending[1] if line_end < 0 else line_end])
            if tail != compared_text(quote[tokens[-1].end :]):
                return _Refusal(_CODE_GOES_ON, first, last, (last,))
        opening = code.span_at(start)
        if opening is not None and opening[0] < start:
            line_start = max(opening[0], self.source.rfind("\n", opening[0], start) + 1)
            lead = compared_text(self.source[line_start:start])
            if lead != compared_text(quote[: tokens[0].start]):
                return _Refusal(_CODE_GOES_ON, first, last, (first,))
        return None

    def _in_span(self, position: int) -> bool:
        return self._code.span_at(position) is not None

    def _gap_in_code(self, start: int, end: int) -> bool:
        """Is the text between two tokens (``[start, end)``) code: both tokens in one span,
        or a character other than whitespace of the gap in a span?"""
        code = self._code
        span = code.span_at(start - 1)
        if span is not None and span[1] > end:
            return True
        return any(
            compared_text(self.source[low:high]) for low, high in code.overlapping(start, end)
        )

    def _exact_form(self, index: int) -> str:
        """The token's key with letter case kept: read again from the source for a word (only
        words are ever case-sensitive, so no token keeps a copy of it)."""
        if self.kind(index) != WORD:
            return self._keys[self._ids[index]]
        return fold_word(self.source[self._starts[index] : self._end(index)])

    def _edge_refusal(self, first: int, last: int) -> _Refusal | None:
        """A refusal when the run cuts the source at either edge (see step 3c)."""
        meta = self._meta
        if first > 0:
            before = first - 1
            if meta[first] & GLUED and not self._opening(before, first):
                return _Refusal(
                    "the quote cuts a word, number or symbol of the source", before, last, (before,)
                )
            if self.kind(first) in (NUMBER, SCRIPT) and self._continues(before, first, before):
                return _Refusal("the source continues the number", before, last, (before,))
        after = last + 1
        if after < len(meta):
            if meta[after] & GLUED and not self._closing(last, after):
                return _Refusal(
                    "the quote cuts a word, number or symbol of the source", first, after, (after,)
                )
            if self.kind(last) in (NUMBER, SCRIPT) and self._continues(last, after, after):
                return _Refusal("the source continues the number", first, after, (after,))
        return None

    def _opening(self, outside: int, inside: int) -> bool:
        """True when the glued token before a match only opens it: a bracket, a quotation
        mark that is not an apostrophe inside a word, or text in an unspaced script."""
        kind = self.kind(outside)
        if kind == OPEN or self._unspaced_boundary(outside, inside):
            return True
        if self._label_colon(outside) or self._ellipsis(outside):
            return True
        if kind != QUOTE:
            return False
        return not (
            outside > 0 and self._meta[outside] & GLUED and self.kind(outside - 1) in _WORDISH
        )

    def _compound(self, left: int, right: int, other: int) -> bool:
        """Is either number at this edge (``left`` and ``right``) a compound written with
        symbols, such as a date or a version ("2024-05-14", "2.10.2")?  Next to one, a comma
        and a space separate the items of a list ("2024-05-14, 2.10.2"), while "2019, 2020"
        goes on counting years, and a quote that stops at 2019 cuts it."""
        if other == right:
            return self._compound_part(left, -1) or self._compound_part(right, 1)
        return self._compound_part(right, 1) or self._compound_part(left, -1)

    def _compound_part(self, index: int, step: int) -> bool:
        """Is number ``index`` written with separators ("3.12.1") or glued to a symbol on the
        side ``step`` away from the gap ("05-14")?"""
        if any(mark in self._keys[self._ids[index]] for mark in ".,'_"):
            return True
        neighbour = index + step
        if not 0 <= neighbour < len(self._meta) or self.kind(neighbour) != SYMBOL:
            return False
        return bool(self._meta[max(index, neighbour)] & GLUED)

    def _ellipsis(self, index: int) -> bool:
        """Is token ``index`` an ellipsis (which marks words left out: "……and so", "work…")?"""
        return self._keys[self._ids[index]] == "\u2026" and self.kind(index) == SYMBOL

    def _label_colon(self, index: int) -> bool:
        """Is token ``index`` a full-width colon alone (see ``_LABEL_COLON``)?"""
        return self.source[self._starts[index] : self._end(index)] == _LABEL_COLON

    def _closing(self, inside: int, outside: int) -> bool:
        """True when the glued token after a match only closes it (see ``_opening``)."""
        kind = self.kind(outside)
        if kind == CLOSE or self._unspaced_boundary(inside, outside) or self._ellipsis(outside):
            return True
        if kind != QUOTE:
            return False
        following = outside + 1
        return not (
            following < len(self._meta)
            and self._meta[following] & GLUED
            and self.kind(following) in _WORDISH
        )

    def _unspaced_boundary(self, left: int, right: int) -> bool:
        """True when a match may begin or end between these glued tokens because one is text of
        a script written without spaces; not right before a Japanese negative ending, which
        turns the verb before it around ("配布され" is not in "配布されません")."""
        if CHAR not in (self.kind(left), self.kind(right)):
            return False
        return not self.source.startswith(NEGATIVE_ENDINGS, self._starts[right])

    def _continues(self, left: int, right: int, other: int) -> bool:
        """True when token ``other`` (``left`` or ``right``) continues a number at a match's
        edge: another number across whitespace and at most one punctuation mark other than a
        full stop, a list comma or a list semicolon; a symbol across whitespace only; a
        magnitude word or a unit after it.  Never across a line break or a tab, which end a
        line of code, a table row or a table cell ("5\n% of" is two rows of psql output)."""
        between = self.source[self._end(left) : self._starts[right]]
        if "\n" in between or "\t" in between or "\r" in between:
            return False
        gap = "".join(between.split())
        kind = self.kind(other)
        if kind in (NUMBER, SCRIPT):  # "5 000", "5,000"; not "7. 4", nor a list "14, 2.10.2"
            listed = _LIST_SEPARATOR.fullmatch(between) and self._compound(left, right, other)
            return len(gap) <= 1 and gap != "." and not listed
        if kind == SYMBOL:
            return not gap and not self._label_colon(other)
        if other != right or kind != WORD or gap:
            return False
        key = self._keys[self._ids[other]]
        return key in MAGNITUDE_WORDS or key.casefold() in UNIT_WORDS

    def _found(self, accepted: list[int], length: int) -> QuoteCheck:
        spans = tuple(self.token_span(s, s + length - 1) for s in accepted)
        start, end = spans[0]
        original = self.source[start:end]
        return QuoteCheck(QUOTE_FOUND, True, start, end, original, len(spans), spans, None, None)

    def _refused(self, refusal: _Refusal) -> QuoteCheck:
        """``not_found`` for a quote whose words occur only where a rule refuses them: the
        refused passage, widened to what the source continues with, is the closest one."""
        start, end = self.token_span(refusal.first, refusal.last)
        size = refusal.last - refusal.first + 1
        closest = Closest(
            score=(size - len(refusal.differing)) / size,
            text=self.source[start:end],
            start=start,
            end=end,
            differences=tuple(self.token_span(i, i) for i in refusal.differing),
        )
        return QuoteCheck(NOT_FOUND, False, None, None, None, 0, (), closest, refusal.reason)

    def _closest(self, scanned: Scan) -> Closest | None:
        quote_ids = self._key_ids(scanned)
        positions = (
            self._positions if self._positions is not None else self._positions_of(quote_ids)
        )
        window = closest_passage.best_window(quote_ids, self._ids, positions)
        if window is None:
            return None
        return self.closest_at(scanned, window[0], 0, len(self._ids))

    def aligned_scores(self, scanned: Scan, firsts: Iterable[int]) -> list[int]:
        """The closest passage's score (equal positions) of the quote laid at each token index
        of ``firsts``: the one-off check scores windows of a source with it."""
        quote_ids = self._key_ids(scanned)
        return [closest_passage.aligned_equal(quote_ids, self._ids, first) for first in firsts]

    def closest_at(self, scanned: Scan, first: int, lo: int, hi: int) -> Closest | None:
        """The closest passage of the quote whose window starts at token ``first``, lined up
        with the quote by an edit alignment of the tokens around the window (``align``), or None
        when those tokens reach past ``[lo, hi)``, the tokens the caller may read (the one-off
        check reads windows of the source, and then needs the whole source)."""
        quote_ids = self._key_ids(scanned)
        reach = closest_passage.reach(len(quote_ids))
        start, stop = first - reach, first + len(quote_ids) + reach
        if (start < lo and lo > 0) or (stop > hi and hi < len(self._ids)):
            return None
        tokens = scanned.tokens

        def alike(quote_index: int, source_index: int) -> bool:
            """A changed token, not an added one: of the same kind, and a word spelled alike."""
            token = tokens[quote_index]
            if token.kind != self.kind(source_index):
                return False
            source_key = self._keys[self._ids[source_index]]
            return token.kind != WORD or closest_passage.spelled_alike(token.key, source_key)

        steps = closest_passage.align(quote_ids, self._ids, max(start, lo), min(stop, hi), alike)
        return self._aligned(scanned, steps)

    def _aligned(self, scanned: Scan, steps: list[closest_passage.Step]) -> Closest:
        """The passage and its differences, from the alignment's steps."""
        first = min(step.s0 for step in steps if step.s1 > step.s0)
        last = max(step.s1 for step in steps if step.s1 > step.s0) - 1
        start, end = self.token_span(first, last)
        edits: list[Edit] = []
        differences: list[tuple[int, int]] = []
        for step in steps:
            words = _spaced(scanned.tokens[step.q0 : step.q1])
            if step.kind == EditKind.ADDED:
                at = self._starts[step.s0] if step.s0 <= last else end
                edits.append(Edit(step.kind, words, at, at))
                differences.append((at, at))
                continue
            span = self.token_span(step.s0, step.s1 - 1)
            edits.append(Edit(step.kind, words, *span))
            if step.kind != EditKind.EQUAL:
                differences.extend(self.token_span(i, i) for i in range(step.s0, step.s1))
        size = len(scanned.tokens) + last - first + 1
        return Closest(
            score=2 * closest_passage.equal_tokens(steps) / size,
            text=self.source[start:end],
            start=start,
            end=end,
            differences=tuple(differences),
            alignment=tuple(edits),
        )


_CODE_COMMA: Final = regex.compile(r"[,;.:]")
_OPERATOR: Final = r"[[\p{P}\p{S}]--[\p{Ps}\p{Pe}\p{Pi}\p{Pf}\"']]"


@functools.cache
def _lone_mark() -> regex.Pattern[str]:
    """Compiled on first use: only a quote compared as code needs it."""
    return regex.compile(
        rf"(?<![,;.:])[,;](?![,;.:])|(?<!{_OPERATOR})[.:](?!{_OPERATOR})", regex.VERSION1
    )


_INNER: Final = regex.compile(r"[^\s,;.:]")


def _unticked(quote: str) -> tuple[str, list[tuple[int, int]]] | None:
    """The quote without the backticks of its inline Markdown code (```` `x` ````), and where
    that code stands in it; None when it has none."""
    runs = [
        (start, end)
        for start, end in CodeSpans.in_text(quote).ranges
        if start > 0
        and quote[start - 1] == "`"
        and quote[end : end + 1] == "`"
        and "\n" not in quote[start:end]
    ]
    if not runs:
        return None
    pieces: list[str] = []
    placed: list[tuple[int, int]] = []
    last = length = 0
    for start, end in runs:
        opening = start
        while opening > last and quote[opening - 1] == "`":
            opening -= 1
        pieces.append(quote[last:opening])
        length += opening - last
        placed.append((length, length + end - start))
        pieces.append(quote[start:end])
        length += end - start
        last = end
        while last < len(quote) and quote[last] == "`":
            last += 1
    pieces.append(quote[last:])
    return "".join(pieces), placed


def _token_marks(form: str, positions: list[int]) -> list[int]:
    """Those of ``positions`` (marks of ``form``) that the quote as written reads as tokens (a
    glued ``,`` is a symbol): read as a gap, each must fall in code.  The others are
    sentence punctuation as written too, and may fall anywhere."""
    tokens = scan_text(form).tokens
    starts = [token.start for token in tokens]
    inside = []
    for position in positions:
        before = bisect_right(starts, position)
        if before and position < tokens[before - 1].end:
            inside.append(position)
    return inside


def _masked(
    text: str, ranges: Iterable[tuple[int, int]], *, inner: bool = False
) -> tuple[str, list[int]]:
    """``text`` with each ``,`` ``;`` ``.`` ``:`` in ``ranges`` that stands alone read as a
    space, and where they stand: a ``,`` or ``;`` with no such mark next to it, a ``.`` or
    ``:`` with no punctuation or symbol next to it (not ``::``, ``...``, ``:=``, ``?.``).
    ``inner``: only those with other text on both sides (a quote's leading and trailing marks
    are read as ever)."""
    positions: list[int] = []
    for start, end in ranges:
        low, high = start, end
        if inner:
            inside = [match.start() for match in _INNER.finditer(text, start, end)]
            if not inside:
                continue
            low, high = inside[0] + 1, inside[-1]
        positions.extend(match.start() for match in _lone_mark().finditer(text, low, high))
    if not positions:
        return text, positions
    pieces = [text[start + 1 : end] for start, end in itertools.pairwise([-1, *positions])]
    return " ".join([*pieces, text[positions[-1] + 1 :]]), positions


def _spaced(tokens: Sequence[Token]) -> str:
    """Quote tokens as written, with one space where the quote has a gap between two."""
    return "".join(
        (" " if index and not token.glued else "") + token.text
        for index, token in enumerate(tokens)
    )


def _only_form(quote: str) -> Scan | None:
    """The tokens of a quote that has one form to try (no ellipsis, no "[": see ``check``), or
    None: what the one-off shortcut needs, and what the full check reuses after it."""
    if "[" in quote or _ANY_ELLIPSIS.search(quote) or _unwrapped(quote) is not None:
        return None
    return scan_text(quote)


def _quote_forms(quote: str) -> list[str]:
    """The quote as written, then without the quotation marks around it, then each without an
    ellipsis at its start or end (in that order; each form once)."""
    unwrapped = _unwrapped(quote)
    written = [quote] if unwrapped is None else [quote, unwrapped]
    forms = [*written, *map(_strip_edge_ellipses, written)]
    return list(dict.fromkeys(forms))


# The pairs of marks a quotation is wrapped in, by how people and models write them.
_WRAPPING: Final = {
    "\u201c": "\u201d\u201c",  # “…” (and “…“)
    "\u201e": "\u201c\u201d",  # „…“ „…”
    '"': '"\u201d',
    "\u201d": "\u201d",  # ”…” (Finnish, Swedish)
    "\u00ab": "\u00bb",  # «…»
    "\u00bb": "\u00ab",  # »…« (German, Danish)
    "\u2018": "\u2019",  # ‘…’
    "\u201a": "\u2018\u2019",
    "\u2039": "\u203a",
    "\u203a": "\u2039",
    "\u300c": "\u300d",  # 「…」
    "\u300e": "\u300f",  # 『…』
    "\uff02": "\uff02",
}
_WRAPPING_KIND: Final = {
    **dict.fromkeys('\u201c\u201d\u201e"\u00ab\u00bb\uff02', DOUBLE_QUOTES),
    **dict.fromkeys("\u2018\u201a\u2039\u203a", SINGLE_QUOTES),
    "\u300c": "\u300c\u300d",
    "\u300e": "\u300e\u300f",
}


def _unwrapped(quote: str) -> str | None:
    """The quote without the pair of quotation marks around it (“…”, "…", «…», 「…」, …), or
    None when it is not wrapped in one: a mark of the same kind inside it (``"a" and "b"``)
    means the marks are the source's, not the quoter's.  A source that has the marks too
    matches the quote as written, which is tried first."""
    text = quote.strip()
    if len(text) < 3 or text[-1] not in _WRAPPING.get(text[0], ""):
        return None
    inner = text[1:-1]
    if any(mark in inner for mark in _WRAPPING_KIND[text[0]]):
        return None
    return inner


def _strip_edge_ellipses(quote: str) -> str:
    if _ANY_ELLIPSIS.search(quote) is None:  # one search instead of two substitutions
        return quote
    leading, trailing = _edge_ellipses()
    return trailing.sub("", leading.sub("", quote))


@functools.cache
def _edge_ellipses() -> tuple[regex.Pattern[str], regex.Pattern[str]]:
    """A quote's leading and trailing ellipsis, compiled on first use (most quotes have none)."""
    return (
        regex.compile(rf"^\s*{_EDGE_ELLIPSIS}\s*"),
        regex.compile(rf"\s*{_EDGE_ELLIPSIS}\s*$"),
    )


def _scans(form: str) -> list[Scan]:
    """The quote's tokens with "[1]"-like marks as reference marks, then (if it has any) as
    text: whether a bracketed number is a footnote mark is the source's to say."""
    scanned = scan_text(form)
    if not scanned.side or "[" not in form:
        return [scanned]
    return [scanned, scan_text(form, references=False)]


def _side_by_gap(scanned: Scan) -> dict[int, tuple[str, ...]]:
    grouped: dict[int, tuple[str, ...]] = {}
    for item in scanned.side:
        grouped[item.before] = (*grouped.get(item.before, ()), item.key)
    return grouped


def _is_subsequence(wanted: Sequence[str], available: Sequence[str]) -> bool:
    remaining = iter(available)
    return all(any(item == candidate for candidate in remaining) for item in wanted)


def _unchecked(reason: str) -> QuoteCheck:
    return QuoteCheck(COULD_NOT_CHECK, False, None, None, None, 0, (), None, reason)
