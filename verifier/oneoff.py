"""A one-off check that tokenizes only the parts of the source that could hold the quote.

``check_quote(quote, source)`` for a single quote need not tokenize the whole source: every
occurrence of the quote contains the text of each of its ASCII tokens, so the source is searched
for those texts (case-insensitively, in C), longest first, and only windows around the hits of
one of them (the anchor: the first found exactly once, when each searched before it is found,
else the rarest) are tokenized and checked with the full rules.  The windows are cut at
whitespace (no token spans whitespace) and an occurrence counts only with at least one whole
token of context on each side, so the edge rules see what they would see in the whole source.

A quote that is not there (a searched token is found nowhere, or no window holds the quote) has
its closest passage read from windows around the hits of its searched tokens, rarest first,
stopping where the full search stops (see ``_closest_of_changed``).

The shortcut is taken only when its answer is certain to equal ``prepare(source).check``: the
quote has no ellipsis or bracket (one form to try: ``matcher.check_quote`` decides), and its
searched tokens have few enough hits.  Otherwise, and whenever windows cannot tell, ``None``
sends the caller to the full check.

A token's text is literally in the source except where folding changes it (``_Unliteral``): a
character that NFKC changes (a ligature, a full-width letter, "…"), an invisible character, a
word joined across a hyphenated line break.  Those places are found once per check; one counts as
a hit of a searched token when the token there has its key, so it is read as a window too, and no
window is cut inside a joined word: real pages have such characters here and there, and they
cost the windows around them, not the shortcut for the whole source.

A source with code (``verifier.code``: spans given, or backtick code in its text) is read in
windows too, each tokenized with the spans inside it, shifted, and never its own backticks (a
window's backticks could pair otherwise than the whole source's).  Code changes what a window
would see: its lone ``,`` ``;`` ``.`` ``:`` are gaps, a "[1]" is tokens, and its rules read the
span around a run to its line's ends.  A window's edges are therefore moved outside every span
(the whitespace it begins with, and the one after it, stand outside code), so that each span
in it is whole and has the character before it that masking reads.  The matcher checks a quote
with a backtick in full, and looks for a quote with a lone mark again with its marks as gaps
(``find_in_code``), as ``PreparedSource.check`` does.

An occurrence's tokens can stand any distance apart in the source (whitespace, reference marks
and emoji between them are copy noise), so a window is trusted only when it holds as many
tokens around each hit as the quote has around its anchor, plus one of context; one that does not
is read again wider.
"""

from __future__ import annotations

import functools
import operator
import re
import unicodedata
from bisect import bisect_right, insort
from collections.abc import Callable, Iterable, Iterator
from typing import Final, NamedTuple, Protocol

import regex

from verifier import closest as closest_passage
from verifier.closest import Closest, Edit
from verifier.code import NO_CODE, CodeSpans
from verifier.tokenizer import NUMBER, REFERENCE_REACH, SYMBOL, WORD, Scan, Token, scan_text

MAX_HITS: Final = 64
ANCHOR_TRIES: Final = 8
MARGIN: Final = 16
WIDEST: Final = 16
# A hyphen at a line break: the tokenizer joins the words around it into one word when a letter
# stands before it and a lower-case letter after (``tokenizer._HYPHEN_BREAK``).  ``re`` skips in C
# to a pattern's first character when it is a literal, but tries a class at every character
# (five to eight times the time on real pages): the ASCII hyphen's pattern is searched unless the
# page has one of the other two (``_line_break_hyphens``).
_LINE_BREAK_HYPHEN: Final = re.compile(r"[\-\u2010\u00ad][^\S\n]*\r?\n[^\S\n]*")
_LINE_BREAK_ASCII_HYPHEN: Final = re.compile(r"-[^\S\n]*\r?\n[^\S\n]*")
_LETTER_BEFORE: Final = regex.compile(r"[\p{L}\p{M}\p{Nl}]")
_LOWER_AFTER: Final = regex.compile(r"\p{Ll}")
# Characters that NFKC changes, but whitespace (which only separates tokens): one of them in a
# token may give it a key other than its text.  Default-ignorable characters hold every invisible
# one.  Each is a property ``regex`` searches for fast (a class that joins them is several times
# slower); the tests check both against the running Python's ``unicodedata`` and the tokenizer.
NFKC_CHANGES: Final = regex.compile(r"\p{NFKC_QC=N}(?<=\S)")
IGNORABLE: Final = regex.compile(r"\p{Default_Ignorable_Code_Point}")
# Both are non-ASCII characters, and most pages have few of those: the characters of these runs
# are then told one by one (``_unliteral_character``) instead of by two searches of the page.
_NON_ASCII: Final = regex.compile(r"[^\x00-\x7f]+")
_NON_ASCII_SHARE: Final = 32
"""Told one by one while at most one character in this many is non-ASCII.  An isolated one costs
about 0.4 µs, as much as 40-70 characters of the two whole-page searches, and one in a run less;
on the small real pages a share of 32 gave 6.61 µs a page, 64 gave 6.81 and 128 gave 7.84."""


class Tokenized(Protocol):
    """What this module reads of a tokenized window (``verifier.matcher.PreparedSource``)."""

    def __len__(self) -> int: ...
    def key(self, index: int) -> str: ...
    def token_span(self, first: int, last: int) -> tuple[int, int]: ...
    def tokens_overlapping(self, start: int, end: int) -> range: ...
    def spans_of(
        self, scanned: Scan, code_marks: Iterable[int] | None = None
    ) -> tuple[tuple[int, int], ...]: ...
    def aligned_scores(self, scanned: Scan, firsts: Iterable[int]) -> list[int]: ...
    def closest_at(self, scanned: Scan, first: int, lo: int, hi: int) -> Closest | None: ...


# How a window is tokenized, with the code spans inside it (window offsets, taken as they are:
# the window's own backticks are not read again, since their pairing depends on the whole
# source): the matcher passes it, so that this module, which the matcher calls, never imports
# the matcher (the layers' check forbids the cycle).
Prepare = Callable[[str, CodeSpans], Tokenized]


class WindowAnswer(NamedTuple):
    """What windows of the source tell about a quote: the spans where it is found, or, when it
    is not there (a token of it is found nowhere), its closest passage; None when windows show
    it is not there but cannot tell its closest passage (the full check can, and the matcher
    may first look for the quote read otherwise)."""

    spans: tuple[tuple[int, int], ...]
    closest: Closest | None


def read_windows(
    quote: str, scanned: Scan, source: str, prepare: Prepare, code: CodeSpans = NO_CODE
) -> WindowAnswer | None:
    """What reading only windows of ``source`` tells about ``quote`` (tokenized: ``scanned``,
    its only form), equal to what the full check would say; None when the whole source must be
    read (see the module docstring).  ``code``: the source's code spans, all of them (backtick
    code included); a window never cuts one, and is read with those inside it."""
    searched = _searched(quote, scanned, source, prepare, code, until_unique=True)
    if searched is None:
        return None
    around, found, candidates, unreached = searched
    reads: list[_Read] = []
    if all(found.values()):  # every searched token is somewhere: the quote may be there
        anchor = min(found, key=lambda candidate: len(found[candidate]))
        copied = around.written_at(anchor, found[anchor])
        margin = 0 if copied else _alignment_extra(quote, scanned) // 2
        read = around.read(anchor, found[anchor], _reach(scanned, anchor), margin)
        if read is None:
            return None
        reads.extend(read)
        spans = _spans(reads, scanned)
        if spans is None:
            return None
        if spans:
            return WindowAnswer(spans, None)
    if unreached:  # the search stopped at a token found once: the closest passage needs them all
        found |= around.search(unreached)[0]
    closest = _closest_of_changed(around, found, reads, candidates[ANCHOR_TRIES:])
    return WindowAnswer((), closest)


def find_in_code(
    quote: str,
    scanned: Scan,
    source: str,
    prepare: Prepare,
    code: CodeSpans,
    marks: list[int],
) -> tuple[tuple[int, int], ...] | None:
    """Where windows find ``scanned`` (the quote with its lone marks read as gaps) with each of
    its ``marks`` between two tokens of code, as ``PreparedSource._respaced_check`` would find
    it in the whole source: every occurrence holds the anchor's text, so the windows around its
    hits see them all.  Empty when it is certainly nowhere; None when windows cannot tell."""
    searched = _searched(quote, scanned, source, prepare, code)
    if searched is None:
        return None
    around, found, _, _ = searched
    if not all(found.values()):
        return ()  # a token every occurrence holds is nowhere
    anchor = min(found, key=lambda candidate: len(found[candidate]))
    reads = around.read(anchor, found[anchor], _reach(scanned, anchor))
    if reads is None:
        return None
    return _spans(reads, scanned, marks)


def _searched(
    quote: str,
    scanned: Scan,
    source: str,
    prepare: Prepare,
    code: CodeSpans,
    *,
    until_unique: bool = False,
) -> tuple[_Around, dict[int, list[int]], list[int], list[int]] | None:
    """The windows' reader, the hits of the first ``ANCHOR_TRIES`` searched tokens (those with
    not too many), every token that may be searched, and those of the first ``ANCHOR_TRIES`` the
    search did not reach; None when none may be searched, or none of those searched has few
    enough hits.  ``until_unique``: the search stops at the first token found exactly once when
    every one before it was found (see ``_Around.search``)."""
    candidates = _anchor_candidates(scanned.tokens)
    if not candidates:
        return None
    around = _Around(quote, scanned, source, _Unliteral(source, code, prepare), prepare)
    found, unreached = around.search(candidates[:ANCHOR_TRIES], until_unique=until_unique)
    return (around, found, candidates, unreached) if found else None


def _spans(
    reads: list[_Read], scanned: Scan, code_marks: list[int] | None = None
) -> tuple[tuple[int, int], ...] | None:
    """Where the quote is found in the windows read around the hits of a token every
    occurrence holds (with ``code_marks`` between tokens of code, when given); None when one
    needs more context than its window has."""
    spans: set[tuple[int, int]] = set()
    for read in reads:
        found = _spans_in(read, scanned, code_marks)
        if found is None:
            return None
        spans.update(found)
    return tuple(sorted(spans))


def _most_hits(quote: str, source: str) -> int:
    """How many hits a searched token may have: ``MAX_HITS``, or on a large source as many as
    keep the windows around them under an eighth of it."""
    window = 4 * len(quote) + 2 * MARGIN
    return max(MAX_HITS, len(source) // (8 * window))


class _Unliteral:
    """Where a token's key may differ from its text in the source (see the module docstring).

    ``anywhere``: places that may give any token (invisible characters, joined words);
    ``folded``: places of characters NFKC changes, with the ASCII characters their folded form
    holds (case-folded), since only a token with one of those can be given by one; ``joins``: the
    spans of the line breaks inside joined words.  A place counts as a hit of a searched token
    only when the token there, read in a small window around it, has that token's key
    (``confirmed``): a no-break space or an "…" far away costs a search, not a window.
    ``code``: the source's code spans, which no window cuts (code is tokenized by other rules:
    see ``verifier.code``), read with ``prepare``.
    """

    __slots__ = ("_prepare", "_read", "_source", "anywhere", "code", "folded", "joins")

    def __init__(
        self, source: str, code: CodeSpans = NO_CODE, prepare: Prepare | None = None
    ) -> None:
        """The places of ``source``: an ASCII source (most of the web) has only joins, an
        NFKC-normalized one no folded characters, and both are told in C at once."""
        self._source = source
        self.code = code
        self._prepare = prepare
        self._read: dict[int, list[tuple[int, str]]] = {}
        self.joins = [
            match.span()
            for match in _line_break_hyphens(source)
            if match.start() > 0
            and _LETTER_BEFORE.match(source, match.start() - 1)
            and _LOWER_AFTER.match(source, match.end())
        ]
        anywhere = [start for start, _ in self.joins]
        self.folded: list[tuple[int, frozenset[str]]] = []
        if not source.isascii():
            few = _few_non_ascii(source)
            if few is None:
                anywhere.extend(match.start() for match in IGNORABLE.finditer(source))
                if not unicodedata.is_normalized("NFKC", source):
                    for match in NFKC_CHANGES.finditer(source):
                        if gives := _folds_to(match.group()):
                            self.folded.append((match.start(), gives))
            else:
                for at in few:
                    ignorable, gives = _unliteral_character(source[at])
                    if ignorable:
                        anywhere.append(at)
                    if gives:
                        self.folded.append((at, gives))
        self.anywhere = sorted(anywhere)

    def places_for(self, text: str) -> list[int]:
        """The places that may give a token with the ASCII text ``text`` (lower case)."""
        letters = frozenset(text)
        return [*self.anywhere, *(at for at, gives in self.folded if gives & letters)]

    def confirmed(self, places: list[int], key: str) -> list[int]:
        """Where the tokens with ``key`` that hold one of ``places`` start."""
        return sorted(
            {start for place in places for start, found in self._tokens_at(place) if found == key}
        )

    def _tokens_at(self, place: int) -> list[tuple[int, str]]:
        """The start and key of the tokens that hold ``place``, read in a window around it that
        cuts no token, reference mark or joined word (read once per place)."""
        if place not in self._read:
            source = self._source
            start = _start_outside(source, _whitespace_before(source, place), self)
            end = _end_outside(source, _whitespace_after(source, place + 1), self)
            sentinel = "" if start == 0 else "x "
            shift = start - len(sentinel)
            text = sentinel + source[start:end]
            if self.code and self._prepare is not None:
                code = self.inside(start, end, shift)
                self._read[place] = self._tokens_in_code(text, code, shift, place)
            else:
                self._read[place] = [
                    (token.start + shift, token.key)
                    for token in scan_text(text).tokens
                    if token.start + shift <= place < token.end + shift
                ]
        return self._read[place]

    def _tokens_in_code(
        self, text: str, code: CodeSpans, shift: int, place: int
    ) -> list[tuple[int, str]]:
        """``_tokens_at`` in a source with code: the window ``text`` (source offset ``shift``)
        read with its ``code`` as the full check reads it."""
        assert self._prepare is not None
        prepared = self._prepare(text, code)
        found = []
        for index in prepared.tokens_overlapping(place - shift, place - shift + 1):
            found.append((prepared.token_span(index, index)[0] + shift, prepared.key(index)))
        return found

    def inside(self, start: int, end: int, shift: int) -> CodeSpans:
        """The code spans inside the window ``[start, end)`` of the source (which cuts none),
        in the offsets of the window's text, whose offset 0 is the source's ``shift`` (the
        window is read after its sentinel)."""
        if not self.code:
            return NO_CODE
        ranges = tuple(self.code.overlapping(start, end))
        # the edges were moved outside code (``_start_outside``, ``_end_outside``): a cut span
        # would make the window read code as prose
        assert not ranges or (
            self.code.span_at(ranges[0][0]) == ranges[0]
            and self.code.span_at(ranges[-1][0]) == ranges[-1]
            and (start == 0 or ranges[0][0] > start)
        )
        return CodeSpans(tuple((low - shift, high - shift) for low, high in ranges))

    def code_around(self, at: int) -> tuple[int, int] | None:
        """The code span that holds ``at``, if any: a window edge there would cut it."""
        return self.code.span_at(at) if self.code else None

    def join_around(self, at: int) -> tuple[int, int] | None:
        """The span of the joined word's break that ``at`` is inside, if any."""
        index = bisect_right(self.joins, (at, _FAR)) - 1
        if index >= 0 and self.joins[index][0] < at < self.joins[index][1]:
            return self.joins[index]
        return None


_FAR: Final = 1 << 62


def _line_break_hyphens(source: str) -> Iterator[re.Match[str]]:
    """The hyphens at line breaks in ``source``, each with the spaces and line break after it
    (see ``_LINE_BREAK_HYPHEN``)."""
    other_hyphens = "\u2010" in source or "\u00ad" in source
    return (_LINE_BREAK_HYPHEN if other_hyphens else _LINE_BREAK_ASCII_HYPHEN).finditer(source)


def _few_non_ascii(source: str) -> list[int] | None:
    """The places of the non-ASCII characters of ``source``, or None when they are more than one
    in ``_NON_ASCII_SHARE`` (the whole-page searches are then cheaper)."""
    most = len(source) // _NON_ASCII_SHARE
    places: list[int] = []
    for match in _NON_ASCII.finditer(source):
        start, end = match.span()
        if len(places) + end - start > most:
            return None
        places.extend(range(start, end))
    return places


@functools.lru_cache(maxsize=1 << 12)
def _unliteral_character(character: str) -> tuple[bool, frozenset[str]]:
    """Is ``character`` default-ignorable, and the ASCII characters it gives a token's key when
    NFKC changes it (``IGNORABLE``, ``NFKC_CHANGES`` and ``_folds_to``, for one character)."""
    changes = NFKC_CHANGES.match(character) is not None
    return IGNORABLE.match(character) is not None, _folds_to(character) if changes else frozenset()


@functools.lru_cache(maxsize=1 << 12)
def _folds_to(character: str) -> frozenset[str]:
    """The ASCII characters of ``character`` folded as a token's key is (NFKC, case-folded)."""
    folded = unicodedata.normalize("NFKC", character).casefold()
    return frozenset(char for char in folded if char.isascii() and not char.isspace())


class _Reach(NamedTuple):
    """How many tokens of the quote stand before and after its anchor: an occurrence through a
    hit covers that many tokens of the source on each side, however much whitespace or how many
    side items lie between them."""

    before: int
    after: int


class _Window(NamedTuple):
    """A span of the source to tokenize, and the anchor's hits in it."""

    start: int
    end: int
    hits: list[int]


def _reach(scanned: Scan, anchor: int) -> _Reach:
    return _Reach(anchor, len(scanned.tokens) - 1 - anchor)


class _Around:
    """Reads windows of ``source`` around the hits of the quote's tokens, counting the
    characters read (``read``)."""

    __slots__ = ("_lowered", "chars", "prepare", "quote", "scanned", "source", "unliteral")

    def __init__(
        self, quote: str, scanned: Scan, source: str, unliteral: _Unliteral, prepare: Prepare
    ) -> None:
        self.quote, self.scanned, self.source = quote, scanned, source
        self.unliteral, self.prepare = unliteral, prepare
        self.chars = 0
        self._lowered: str | None = None

    def search(
        self, candidates: list[int], *, until_unique: bool = False
    ) -> tuple[dict[int, list[int]], list[int]]:
        """The hits of each of ``candidates`` that does not have too many (``_search``), and
        the candidates not searched (none unless the search stopped early).

        ``until_unique``: stop at the first candidate found exactly once, if each before it is
        found somewhere.  Every occurrence of the quote holds that token's text at its hit, so
        the one window around it tells whether the quote is there as surely as the rarest
        token's would; a found quote (most quotes) then costs no search of the others, which
        only a quote that is not there needs (a token found nowhere, the closest passage)."""
        if self._lowered is None:
            self._lowered = _ascii_lowered(self.source)
        most = _most_hits(self.quote, self.source)
        tokens, unliteral = self.scanned.tokens, self.unliteral
        found: dict[int, list[int]] = {}
        everywhere = True  # every candidate so far found somewhere
        for searched, candidate in enumerate(candidates, 1):
            hits = _search(tokens[candidate], self._lowered, unliteral, most)
            if hits is None:
                continue
            found[candidate] = hits
            everywhere = everywhere and bool(hits)
            if until_unique and everywhere and len(hits) == 1:
                return found, candidates[searched:]
        return found, []

    def written_at(self, token: int, hits: list[int]) -> bool:
        """Does the source hold the quote as written (but for the case of ASCII letters) where
        one of ``hits`` of its token ``token`` stands?  Such a quote is all but certainly there,
        so the windows around the hits need not be wide enough to line up a closest passage
        (see ``_alignment_extra``).  Searched first (``search``)."""
        assert self._lowered is not None
        lowered, quote = self._lowered, _ascii_lowered(self.quote)
        before = self.scanned.tokens[token].start
        return any(lowered.startswith(quote, hit - before) for hit in hits if hit >= before)

    def read(
        self, token: int, hits: list[int], reach: _Reach, extra: int = 0, limit: int | None = None
    ) -> list[_Read] | None:
        """The windows around ``hits`` of the quote's token ``token``, ``extra`` characters wider
        on each side, read: as far from the hit as the quote's text reaches on each side, and a
        margin; a window too small to tell is read again twice as wide, up to ``WIDEST`` times as
        far.  None if one is still too small, or when the characters read would pass ``limit``."""
        start_in_quote = self.scanned.tokens[token].start
        after = len(self.quote) - start_in_quote
        reads = []
        pending = [(1, hits)]
        while pending:
            scale, group = pending.pop()
            windows = _windows(
                group, self.source, start_in_quote, after, self.unliteral, extra, scale
            )
            self.chars += sum(window.end - window.start for window in windows)
            if limit is not None and self.chars > limit:
                return None  # told before any of them is tokenized
            for window in windows:
                read = _read(self.source, window, reach, self.prepare, self.unliteral)
                if read is not None:
                    reads.append(read)
                elif scale < WIDEST:
                    pending.append((2 * scale, window.hits))
                else:
                    return None
        return reads


def _anchor_candidates(tokens: list[Token]) -> list[int]:
    """Indices of the tokens whose text is ASCII, the first of each distinct text, longest
    (rarest, most likely) first; they are searched for ``ANCHOR_TRIES`` at a time, the next
    ones only when the closest passage needs more."""
    candidates: dict[str, int] = {}
    for index, token in enumerate(tokens):
        if token.exact.isascii() and token.text.isascii():
            text = token.exact.lower()
            if _spelled_one_way(token.kind, text):
                candidates.setdefault(text, index)
    # a stable sort, also in reverse: of texts as long, the first in the quote comes first
    return [candidates[text] for text in sorted(candidates, key=len, reverse=True)]


def _spelled_one_way(kind: int, text: str) -> bool:
    """Is every source token with this ASCII token's key (its ``kind``, its ``text`` in lower
    case) spelled as it is, but for letter case?  Only then does every occurrence hold its text.
    Not where folding joins other spellings to it: ß and ẞ fold to "ss" (the only characters NFKC
    keeps that case-fold to ASCII), every dash and the minus sign to "-", a right single
    quotation mark in a number to "'"."""
    if kind == WORD:
        return "ss" not in text
    if kind == NUMBER:
        return "'" not in text
    return kind == SYMBOL and "-" not in text


def _search(token: Token, lowered: str, unliteral: _Unliteral, most: int) -> list[int] | None:
    """A searched token's hits in the source (``lowered``: see ``_ascii_lowered``), None when it
    has more than ``most``: where its text starts, and the places where a token with its key may
    be spelled otherwise.  A search costs far less than tokenizing a window, and a changed quote
    is most often told by a token found nowhere."""
    text = token.exact.lower()
    places = unliteral.places_for(text)
    hits = None if len(places) > most else _hits(text, lowered, most - len(places))
    if hits is not None and places:
        hits = sorted({*hits, *unliteral.confirmed(places, token.key)})
    return hits


def _hits(anchor: str, lowered: str, most: int) -> list[int] | None:
    """Where ``anchor`` (ASCII, lower case) starts in ``lowered`` (see ``_ascii_lowered``),
    overlapping hits included, or None past ``most``."""
    hits: list[int] = []
    at = lowered.find(anchor)
    while at >= 0:
        hits.append(at)
        if len(hits) > most:
            return None
        at = lowered.find(anchor, at + 1)
    return hits


def _ascii_lowered(source: str) -> str:
    """``source`` with its ASCII capitals in lower case, character for character, so that an
    ASCII text is found in it wherever it stands in ``source`` in any case.

    UTF-8 writes every non-ASCII character in bytes from 0x80 up, which ``bytes.lower`` leaves
    alone, so the round trip lowers the ASCII capitals only, in C: on real pages 0.4-0.8 of the
    time of ``str.lower``, which maps every character (and can change the length, as "İ" does);
    a ``translate`` table takes thirty times as long.  A non-ASCII character that lowers to an
    ASCII letter (the Kelvin sign) is one of ``_Unliteral``'s places, confirmed there.
    """
    if source.isascii():
        return source.lower()
    return source.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")


def _windows(
    hits: list[int],
    source: str,
    before: int,
    after: int,
    unliteral: _Unliteral,
    extra: int = 0,
    scale: int = 2,
) -> list[_Window]:
    """Whitespace-bounded windows around the hits, merged where they overlap: ``scale`` times as
    far as the quote reaches on either side of the anchor, and a margin (``_read`` tells when an
    occurrence could reach past a window's edge)."""
    windows: list[_Window] = []
    for hit in hits:
        start = _whitespace_before(source, hit - scale * before - MARGIN - extra)
        start = _start_outside(source, start, unliteral)
        end = _whitespace_after(source, hit + scale * after + MARGIN + extra)
        end = _end_outside(source, end, unliteral)
        if windows and start <= windows[-1].end:
            last = windows[-1]
            windows[-1] = _Window(min(start, last.start), max(end, last.end), [*last.hits, hit])
        else:
            windows.append(_Window(start, end, [hit]))
    return windows


def _start_outside(source: str, start: int, unliteral: _Unliteral) -> int:
    """``start``, moved before any bracket, joined word or code span it would cut."""
    while True:
        moved = _start_outside_marks(source, start)
        join = unliteral.join_around(moved)
        if join is not None:
            moved = _whitespace_before(source, join[0])
        code = unliteral.code_around(moved) if moved > 0 else None
        if code is not None:  # the whitespace a window begins with stands outside code
            moved = _whitespace_before(source, code[0])
        if moved == start:
            return start
        start = moved


def _end_outside(source: str, end: int, unliteral: _Unliteral) -> int:
    """``end``, moved past any bracket, joined word or code span it would cut."""
    while True:
        moved = _end_outside_marks(source, end)
        join = unliteral.join_around(moved)
        if join is not None:
            moved = _whitespace_after(source, join[1])
        code = unliteral.code_around(moved)
        if code is not None:  # the whitespace a window ends before stands outside code
            moved = _whitespace_after(source, code[1])
        if moved == end:
            return end
        end = moved


def _start_outside_marks(source: str, start: int) -> int:
    """``start``, moved before a bracket it would cut (such as "[clarification needed]", a
    reference mark with a space), so the window never reads part of a mark as tokens ("needed",
    "]"): they would count toward the tokens it must hold before a hit."""
    while start > 0:
        opening = source.rfind("[", max(start - REFERENCE_REACH, 0), start)
        if opening < 0 or source.find("]", opening, start) >= 0:
            return start
        start = _whitespace_before(source, opening)
    return start


def _end_outside_marks(source: str, end: int) -> int:
    """``end``, moved past a bracket it would cut (see ``_start_outside_marks``)."""
    while end < len(source):
        closing = source.find("]", end, end + REFERENCE_REACH)
        if closing < 0 or source.rfind("[", end, closing) >= 0:
            return end
        end = _whitespace_after(source, closing)
    return end


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


class _Read(NamedTuple):
    """A window tokenized, and where it stands: ``start`` and ``end`` in the source; ``shift``
    turns its offsets into the source's; ``first_allowed`` and ``last_allowed`` bound the tokens
    a passage may use (one of context on each side, unless the window begins or ends the
    source); ``anchors`` are the tokens that begin at a hit."""

    prepared: Tokenized
    start: int
    end: int
    shift: int
    first_allowed: int
    last_allowed: int
    anchors: list[int]


def _read(
    source: str, window: _Window, reach: _Reach, prepare: Prepare, unliteral: _Unliteral
) -> _Read | None:
    """The window tokenized, or None if it is too small to tell (see ``_anchors``).

    A window that does not begin the source is read after a sentinel word, so that it is read
    as the middle of a text, as it stands in the source.
    """
    start, end = window.start, window.end
    sentinel = "" if start == 0 else "x "
    shift = start - len(sentinel)
    prepared = prepare(sentinel + source[start:end], unliteral.inside(start, end, shift))
    first_allowed = 0 if start == 0 else 2
    last_allowed = len(prepared) - 1 if end == len(source) else len(prepared) - 2
    read = _Read(prepared, start, end, shift, first_allowed, last_allowed, [])
    anchors = _anchors(read, window.hits, reach, len(source))
    return None if anchors is None else read._replace(anchors=anchors)


def _anchors(read: _Read, hits: list[int], reach: _Reach, size: int) -> list[int] | None:
    """The window's tokens that begin at ``hits``; None if it is too small to tell.

    An occurrence of the quote covers ``reach`` tokens of the source on each side of its
    anchor's hit, with any amount of whitespace between them, so the window must hold that many
    around every hit, and one more of context where it does not end the source (``size``
    characters); else an occurrence could run past its edge unseen.
    """
    prepared, shift = read.prepared, read.shift
    anchors = []
    for hit in hits:
        at = prepared.tokens_overlapping(hit - shift, hit - shift + 1)
        if not at or prepared.token_span(at[0], at[0])[0] != hit - shift:
            continue  # the hit is inside a token: no occurrence has its anchor there
        too_early = at[0] - reach.before < read.first_allowed and read.start > 0
        too_late = at[0] + reach.after > read.last_allowed and read.end < size
        if too_early or too_late:
            return None
        anchors.append(at[0])
    return anchors


def _spans_in(
    read: _Read, scanned: Scan, code_marks: list[int] | None = None
) -> list[tuple[int, int]] | None:
    """The spans where the quote is found in a window read (shifted), or None if one needs
    more context than the window has."""
    spans = []
    for span_start, span_end in read.prepared.spans_of(scanned, code_marks):
        tokens = read.prepared.tokens_overlapping(span_start, span_end)
        if tokens[0] < read.first_allowed or tokens[-1] > read.last_allowed:
            return None
        spans.append((read.shift + span_start, read.shift + span_end))
    return spans


def _closest_of_changed(
    around: _Around, hits: dict[int, list[int]], reads: list[_Read], spare: list[int]
) -> Closest | None:
    """The closest passage of a quote that is not in the source, read from windows around the
    hits of its searched tokens, rarest first (and from ``reads``, windows read already; the
    ``spare`` tokens are searched for when those are not enough); None when only the whole
    source can tell, or when the windows would come to half of it (reading it whole is then
    cheaper).

    It is the full check's (``closest.best_window``: the passage with the most tokens equal at
    their places, the earliest of those), found the same way: once the windows around the hits
    of ``k`` tokens are scored, any other passage has at most ``M - k`` tokens equal (``M``, the
    quote's), so the search stops when that is less than the best score (a token found nowhere
    counts at once, with no window).  The full search then stops after as many of the rarest
    tokens, or sooner; it visits at most ``k`` times the hits of the ``k``-th rarest searched
    token, so when that is under its caps its answer is exact, and the same (the order in which
    tokens are visited changes only how soon the search stops).
    """
    quote, scanned, source = around.quote, around.scanned, around.source
    length = len(scanned.tokens)
    order = sorted(hits, key=lambda candidate: (len(hits[candidate]), candidate))
    reads = sorted(reads, key=_START)
    aligned = closest_passage.reach(length)  # the alignment reads this many tokens more
    extra = _alignment_extra(quote, scanned)
    best: _Best | None = None
    processed = 0
    most = 0  # hits of the commonest token visited
    while best is None or length - processed >= best.equal:
        if processed == len(order):
            if not spare:
                break
            more, _ = around.search(spare[:ANCHOR_TRIES])
            spare = spare[ANCHOR_TRIES:]
            hits = {**hits, **more}
            order.extend(sorted(more, key=lambda candidate: (len(more[candidate]), candidate)))
            continue
        candidate = order[processed]
        most = max(most, len(hits[candidate]))
        reach = _reach(scanned, candidate)
        unread = []
        for hit in hits[candidate]:  # a hit inside a window read already is scored there
            served = _read_already(reads, hit, reach, len(source))
            if served is None:
                unread.append(hit)
            else:
                best = _best_passage(*served, scanned, reach, best)
        wide = _Reach(reach.before + aligned, reach.after + aligned) if not reads else reach
        new = around.read(candidate, unread, wide, 0 if reads else extra, len(source) // 2)
        if new is None:
            return None
        for read in new:
            best = _best_passage(read, read.anchors, scanned, reach, best)
            insort(reads, read, key=_START)
        processed += 1
    if best is None or length - processed >= best.equal or best.equal == length:
        return None  # unvisited passages could tie; or a passage equal but refused by a rule
    if processed * most >= closest_passage.MAX_WINDOWS:
        return None  # the full search could reach its caps
    return _aligned(best, quote, scanned, source, around.unliteral, around.prepare, extra)


_START: Final = operator.attrgetter("start")


def _alignment_extra(quote: str, scanned: Scan) -> int:
    """Characters to read beyond a window on each side so that the closest passage in it can
    be lined up with the quote (``closest_at`` reads ``closest.reach`` tokens around it): twice
    the quote's characters a token for each of those tokens.

    Half of it widens the windows around the anchor's hits, which every quote reads first,
    unless the source holds the quote as written there (``_Around.written_at``).  A quote that
    is not there most often has its closest passage in them (its rarest word is most often one
    it kept), and read only as wide as the quote they must be read again, wider, to line it up
    (``_aligned``: for 133 of the 136 small real documents' changed quotes whose passage windows
    found).  A quote written as in the source needs no margin: read without one, 191 of the 192
    anchor windows of the small documents' found quotes were wide enough.  In instructions a call
    (callgrind, ``bench_realtext``'s calls on 1-3 KB pages, found / not found): half for every
    quote 1.227 / 3.385 M, none 1.082 / 3.777 M, half unless written as in the source 1.098 /
    3.389 M; the full check costs 3.344 / 3.946 M.
    """
    length = len(scanned.tokens)
    return 2 * closest_passage.reach(length) * -(-len(quote) // length)


def _read_already(
    reads: list[_Read], hit: int, reach: _Reach, size: int
) -> tuple[_Read, list[int]] | None:
    """A window among ``reads`` (sorted by start) that holds ``hit`` with ``reach`` around it, and
    its anchors there; the two that begin last before the hit are tried."""
    index = bisect_right(reads, hit, key=_START)
    for read in reads[max(index - 2, 0) : index]:
        if hit < read.end and (anchors := _anchors(read, [hit], reach, size)) is not None:
            return read, anchors
    return None


class _Best(NamedTuple):
    """The best passage so far: tokens equal at their places, where it starts in the source,
    and the window and token it starts at."""

    equal: int
    at: int
    read: _Read
    first: int


def _aligned(
    best: _Best,
    quote: str,
    scanned: Scan,
    source: str,
    unliteral: _Unliteral,
    prepare: Prepare,
    extra: int,
) -> Closest | None:
    """The closest passage at ``best``, lined up with the quote; read again, in a window wide
    enough for the alignment, when its own window is not."""
    read, first = best.read, best.first
    found = read.prepared.closest_at(scanned, first, read.first_allowed, read.last_allowed + 1)
    if found is None:
        length = len(scanned.tokens)
        aligned = closest_passage.reach(length)
        start, end = read.prepared.token_span(first, first + length - 1)
        window = _windows([best.at], source, 0, end - start, unliteral, extra)[0]
        wider = _read(source, window, _Reach(aligned, length - 1 + aligned), prepare, unliteral)
        if wider is None or not wider.anchors:
            return None
        read, first = wider, wider.anchors[0]
        found = read.prepared.closest_at(scanned, first, read.first_allowed, read.last_allowed + 1)
    return _shifted(read, found)


def _best_passage(
    read: _Read, anchors: list[int], scanned: Scan, reach: _Reach, best: _Best | None
) -> _Best | None:
    """``best``, or the window's passage through one of ``anchors`` if it has more tokens equal
    at their places, or as many and starts earlier."""
    length = len(scanned.tokens)
    firsts = [
        first
        for first in (anchor_token - reach.before for anchor_token in anchors)
        if first >= read.first_allowed and first + length - 1 <= read.last_allowed
    ]  # the full search, too, skips a passage that would run past an end of the source
    for first, equal in zip(firsts, read.prepared.aligned_scores(scanned, firsts), strict=True):
        at = read.shift + read.prepared.token_span(first, first)[0]
        if best is None or equal > best.equal or (equal == best.equal and at < best.at):
            best = _Best(equal, at, read, first)
    return best


def _shifted(read: _Read, found: Closest | None) -> Closest | None:
    """A closest passage found in a window, with the source's offsets."""
    if found is None:
        return None
    shift = read.shift
    return Closest(
        score=found.score,
        text=found.text,
        start=shift + found.start,
        end=shift + found.end,
        differences=tuple((shift + a, shift + b) for a, b in found.differences),
        alignment=tuple(
            Edit(edit.kind, edit.quote, shift + edit.start, shift + edit.end)
            for edit in found.alignment
        ),
    )
