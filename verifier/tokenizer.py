"""The tokenizer: text to comparison tokens that keep their code-point spans.

snap compares **every character** of a quote with its source, except the differences on the
short list of harmless copy noise below (docs/matching.md carries the same list, one line each, and
every entry has its own tests).  Tokenizing is how the list is applied: whatever the list
allows to differ is either left out of the tokens or folded into the same comparison key;
everything else is kept, as written, in some token.

The copy-noise list:

1. Whitespace of any kind separates tokens and is otherwise ignored ("5 %" = "5%"); it is never
   dropped between two words or two numbers ("foo bar" != "foobar", "1 000" != "1000").
2. Invisible characters are dropped (``INVISIBLE``: zero-width space, soft hyphen, word joiner,
   BOM, bidirectional marks, variation selectors, a ZWJ/ZWNJ but one after a letter of an
   Indic script, ``_INDIC``); a hyphen or soft hyphen followed by a line break and a
   lower-case letter joins a hyphenated word.
3. Quotation marks are compared by kind only: every double mark (and the Hebrew gershayim) is
   one character, every single mark (apostrophe, geresh) another.
4. A dash standing alone is one character whatever its kind (``DASHES``, U+2212 minus included).
5. Letter case of ordinary words is folded; case is kept (see ``_case_rule``) for
   mixed-case words ("mW", "MHz"), all-capital words of 2-3 letters ("MB"), a letter repeated
   ("hhhh"), short words next to a number or glued to a symbol ("5 m", "A+"), words in code
   (``_word_in_code``: "self.Items") and one-letter codes (``_letter_is_code``: "%H", "h" in a
   table cell).
6. Compatibility forms are folded (NFKC: ligatures, full-width forms), never superscripts,
   subscripts or fractions: those are tokens of their own, compared as written.
7. Emoji (with their joiners, selectors and modifiers) and reference marks such as "[12]" are
   side items: kept, but a quote may leave them out (``PreparedSource`` compares the ones a
   quote has).  A "[...]" that is code (``reads_as_index``: "sys.exc_info()[1]", "Type[T]")
   is not a reference mark but tokens.
8. Sentence punctuation (``,`` ``;`` anywhere but between digits, glued to what follows or
   closed by a "]" on its line, ``_GLUED_COMMA``; ``.`` ``:`` before whitespace, a closing mark
   or the end, but not at the very start of the text, where nothing precedes them; CJK and
   Indic full stops and commas; the Greek question mark) separates tokens only.

Token kinds:

* ``WORD``: letters of a script written with spaces (NFKC and case folded, see 5);
* ``CHAR``: one grapheme of a script written without spaces (Han, Kana, Thai, ...), so a part
  of a Japanese or Thai sentence can be found;
* ``NUMBER``: decimal digits with the separators between them ("5'000", "1,000.50", "v1.3.1"
  gives "v" and "1.3.1"), compared as written;
* ``SCRIPT``: a run of superscript or subscript characters ("⁶", "₂", "⁻", "™");
* ``SYMBOL``: a run of any other punctuation or symbols ("&&", "?", "::", "->", "%", "€"),
  compared as written; ``OPEN``/``CLOSE``: one bracket; ``QUOTE``: one quotation mark.

A token's ``glued`` flag says that nothing but invisible characters separates it from the
token before it: the matcher refuses a match that cuts the source between glued tokens.
"""

from __future__ import annotations

import functools
import itertools
import operator
import re
import sys
import unicodedata
from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import Final, NamedTuple

import regex

NORMALIZER_ID: Final = "snap-exact@4"
"""@4: code spans (``verifier.code``), given or backtick-delimited, are compared as code."""

WORD: Final = 1
CHAR: Final = 2
NUMBER: Final = 3
SCRIPT: Final = 4
SYMBOL: Final = 5
OPEN: Final = 6
CLOSE: Final = 7
QUOTE: Final = 8

KIND_MASK: Final = 0x0F
GLUED: Final = 0x10
SENSITIVE: Final = 0x20

# Characters whose Unicode decomposition is tagged <super> or <sub> (checked against the running
# Python's unicodedata by the tests): never folded, always tokens of their own.
SUPER_SUB: Final = (
    "\u00aa\u00b2\u00b3\u00b9\u00ba\u02b0-\u02b8\u02e0-\u02e4\u10fc\u1d2c-\u1d2e\u1d30-\u1d3a"
    "\u1d3c-\u1d4d\u1d4f-\u1d6a\u1d78\u1d9b-\u1dbf\u2070\u2071\u2074-\u208e\u2090-\u209c"
    "\u2120\u2122\u2c7c\u2c7d\u2d6f\u3192-\u319f\ua69c\ua69d\ua770\ua7f2-\ua7f4\ua7f8\ua7f9"
    "\uab5c-\uab5f\uab69\U00010781-\U00010785\U00010787-\U000107b0\U000107b2-\U000107ba"
    "\U0001e030-\U0001e06d\U0001f16a-\U0001f16c"
)
FRACTIONS: Final = "\u00bc-\u00be\u2150-\u215f\u2189"
INVISIBLE: Final = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u206f\ufe00-\ufe0f\ufeff\U000e0001\U000e0100-\U000e01ef"
)
DASHES: Final = "-\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d\u05be\u2e3a\u2e3b"
# The Hebrew gershayim and geresh (U+05F4, U+05F3) are typed as ASCII " and ' everywhere: they
# are compared as double and single marks.
DOUBLE_QUOTES: Final = '"\u201c\u201d\u201e\u201f\u00ab\u00bb\u301d\u301e\u301f\uff02\u05f4'
SINGLE_QUOTES: Final = "'\u2018\u2019\u201a\u201b\u2039\u203a\uff07\u05f3"
UNSPACED: Final = (
    r"\p{Han}\p{Hiragana}\p{Katakana}\p{Bopomofo}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}\p{Yi}"
    "\u30fc\u3005\u3006\u3007\u309d\u309e\u30fd\u30fe\uff70"
)
# U+037E, the Greek question mark, is canonically ";" (NFC turns one into the other).
_SENTENCE_ALWAYS = ",;\u037e\u3001\uff0c\uff1b\u060c\u061b\u0964\u0965\u3002\uff61\ufe12"
_SENTENCE_BEFORE_GAP = ".:\uff0e\uff1a"
_CLOSERS = rf"\s\p{{Pe}}\p{{Pf}}{DOUBLE_QUOTES}{SINGLE_QUOTES}\["
_LETTER = r"[\p{L}\p{M}\p{Nl}]"
# Scripts where a zero-width joiner or non-joiner after a letter changes the spelling (the
# Devanagari eyelash ra, Malayalam chillu letters, Sinhala conjuncts): there it is compared.
_INDIC = (
    r"\p{Devanagari}\p{Bengali}\p{Gurmukhi}\p{Gujarati}\p{Oriya}\p{Tamil}\p{Telugu}"
    r"\p{Kannada}\p{Malayalam}\p{Sinhala}"
)
_INDIC_JOINER = rf"(?:(?<=[{_INDIC}])[\u200c\u200d])"
_HYPHEN_BREAK = r"[\-\u2010\u00ad][^\S\n]*+\r?\n[^\S\n]*+"
_SYMBOL_CHAR = (
    rf"[[\p{{P}}\p{{S}}\p{{No}}]--[{SUPER_SUB}{DOUBLE_QUOTES}{SINGLE_QUOTES}\p{{Ps}}\p{{Pe}}"
    rf"{_SENTENCE_ALWAYS}{_SENTENCE_BEFORE_GAP}]]"
)
_EMOJI_ATOM = r"\p{Extended_Pictographic}[\ufe0e\ufe0f]?[\U0001f3fb-\U0001f3ff]?"
_EMOJI = (
    r"\p{Regional_Indicator}{2}|[#*0-9]\ufe0f?\u20e3"
    r"|(?=[\U0001f000-\U0001faff\u2300-\u23ff\u2600-\u27bf\u2b00-\u2bff]"
    r"|\p{Extended_Pictographic}(?:\ufe0f|[\U0001f3fb-\U0001f3ff]|\u200d))"
    rf"{_EMOJI_ATOM}(?:\u200d{_EMOJI_ATOM})*[\U000e0020-\U000e007f]*"
)
_REFERENCE_BODY = (  # spaces as [ ]: the scanner is a VERBOSE pattern
    r"\d{1,3}|[a-z]{1,2}|[ivx]{1,5}|(?:note|nb|n|fn)[ ]?\d{1,3}"
    r"|citation[ ]needed|clarification[ ]needed|verification[ ]needed|better[ ]source[ ]needed"
    r"|failed[ ]verification|dubious|page[ ]needed|who\?|when\?|which\?|by[ ]whom\?"
    r"|according[ ]to[ ]whom\?"
)
# A "," or ";" is syntax, not sentence punctuation, and compared like any symbol, when it is
# glued to what follows ("a{4,}b", "(x,)", "((),)"; not before a closing quotation mark, other
# sentence punctuation that ends at a space, or a reference mark: "He said," she wrote;
# "word,[1]"), or when a "]"
# closes it within ``_IN_BRACKETS`` characters on its line ("[x; n]", "dict[str, int]").
_IN_BRACKETS: Final = 24
_LINE_END = r"\n\r\x85\u2028\u2029"
_GLUED_COMMA = (
    rf"[,;](?:(?![\s\p{{Pf}}{DOUBLE_QUOTES}{SINGLE_QUOTES}]|[,;.:]+(?:\s|$)|$"
    rf"|\[(?i:{_REFERENCE_BODY})\])"
    rf"|(?=[^\[\]{_LINE_END}]{{0,{_IN_BRACKETS}}}\]))"
)

# One alternative per token kind, tried in this order at each position; characters that no
# alternative takes (whitespace, invisible characters, sentence punctuation, controls) only
# separate tokens.
_SCANNER: Final = regex.compile(
    rf"""
    \s*+(?:
      (?P<word>{_LETTER}++(?:(?:[{INVISIBLE}]++|{_HYPHEN_BREAK}(?=\p{{Ll}})){_LETTER}++)*+
               {_INDIC_JOINER}?)
    | (?P<number>\p{{Nd}}++(?:[.,'\u2019_]\p{{Nd}}++)*+(?![\ufe0f\u20e3]))
    | (?P<emoji>{_EMOJI})
    | (?P<script>[{SUPER_SUB}]++)
    | (?P<reference>(?=\[)(?<=[\p{{L}}\p{{N}}\p{{M}}.,;:!?)\]"'\u201d\u2019\u00bb][{INVISIBLE}]*)
        \[(?i:{_REFERENCE_BODY})\]
        (?=[.,;:!?)"'\u201d\u2019\u00bb\[]|\s*$|\s+[\p{{L}}\p{{N}}(\[{DOUBLE_QUOTES}{SINGLE_QUOTES}]))
    | (?P<quote>[{DOUBLE_QUOTES}{SINGLE_QUOTES}])
    | (?P<open>\p{{Ps}})
    | (?P<close>\p{{Pe}})
    | (?P<ellipsis>\.\.\.|\u2026|\u22ef)
    | (?P<symbol>(?:(?!{_EMOJI}){_SYMBOL_CHAR}|[{_SENTENCE_BEFORE_GAP}](?![{_CLOSERS}]|$)
                   |(?<=\A\s*)[{_SENTENCE_BEFORE_GAP}]|{_GLUED_COMMA})++)
    )""",
    regex.VERBOSE | regex.VERSION1,
)
# One comparison unit of a script written without spaces: a grapheme, with a Thai or Lao vowel
# written before its consonant and the vowels written after it kept together with it, so a
# quote cannot start or end inside a syllable ("ปิด", close, is not in "เปิด", open).
_UNSPACED_UNIT = (
    rf"(?=[{UNSPACED}])[\u0e40-\u0e44\u0ec0-\u0ec4]?\X[\u0e30\u0e32\u0e33\u0e45\u0eb0\u0eb2\u0eb3]*"
)


# Words are scanned with a plain letter class (a class with subtractions is several times
# slower); the rare word that holds characters of an unspaced script or superscript letters is
# split again by this scanner.
# Both are compiled on first use, as are the other patterns below that only some texts need
# (code, reference marks, invisible characters, the twin's pieces): a plain one-citation check
# compiles the scanner and little else (compiling a ``regex`` pattern is parsing it in Python).
@functools.cache
def _needs_split_pattern() -> regex.Pattern[str]:
    return regex.compile(rf"[{UNSPACED}{SUPER_SUB}]")


@functools.cache
def _word_parts() -> regex.Pattern[str]:
    return regex.compile(
        rf"(?P<char>{_UNSPACED_UNIT})|(?P<script>[{SUPER_SUB}]++)"
        rf"|(?P<word>[^{UNSPACED}{SUPER_SUB}]++)",
        regex.VERSION1,
    )


@functools.cache
def _scanner_without_references() -> regex.Pattern[str]:
    """The scanner with "[1]"-like marks read as text; compiled on first use (rarely needed)."""
    return regex.compile(
        _SCANNER.pattern.replace("(?P<reference>", "(?P<reference>(?!)"),
        regex.VERBOSE | regex.VERSION1,
    )


# The scanner's twin for the common case, written for Python's ``re`` (about twice as fast as
# ``regex`` on the same text): used only on a piece of text (see ``_twin_pieces``) whose every
# character is in the twin's alphabet (Latin, Greek and Cyrillic letters, combining accents,
# general punctuation, currency, letter-like signs, number forms, arrows, mathematical operators)
# and, for the text's first piece, that does not open with "." or ":"; the scanner reads the other
# pieces, so one character outside the alphabet costs its piece, not the whole text.  None of these
# characters is invisible or able to start an emoji, so the scanner's look-behinds become
# fixed-width and its emoji branch never matches; every class of the twin is the set of alphabet
# characters that the scanner's own class takes, worked out with ``regex`` itself on first use.  So
# on such a piece both make the same matches, which the tests check on random texts over the
# alphabet.
_TWIN_RANGES: Final = (
    (0x0000, 0x00AC),  # not U+00AD, the soft hyphen, nor U+034F, the grapheme joiner (invisible)
    (0x00AE, 0x012F),  # not U+0130, U+0131, U+017F, U+212A: case-insensitive matching (of "[i]"
    (0x0132, 0x017E),  # marks) takes them for ASCII letters in ``re`` or ``regex`` but not both
    (0x0180, 0x034E),
    (0x0350, 0x052F),
    (0x2000, 0x200A),
    (0x2010, 0x2029),
    (0x202F, 0x205F),
    (0x2070, 0x20CF),
    (0x2100, 0x2129),
    (0x212B, 0x22FF),
)
# The wide twin's alphabet adds Chinese and Japanese text (CJK ideographs, kana, CJK punctuation,
# full-width forms) and the box drawing and geometric shapes of text-mode diagrams.  It reads a
# character of an unspaced script as a token of its own (the scanner reads a run of them as one
# word and splits it into units, ``_split_words``): the same tokens, with three exceptions kept
# out.  The characters that extend a grapheme (U+302A-U+302F, the kana voicing marks U+3099,
# U+309A, U+FF9E, U+FF9F) are left out of the alphabet, and a piece where a combining mark or a
# hyphenated line break follows such a character is read by the scanner (``_wide_guard``), since
# there the scanner's unit is longer than one character.
_WIDE_RANGES: Final = (
    *_TWIN_RANGES,
    (0x2500, 0x25FF),
    (0x3000, 0x3029),
    (0x3030, 0x3098),
    (0x309B, 0x30FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF),
    (0xFF00, 0xFF9D),
    (0xFFA0, 0xFFEF),
)


def _alphabet(ranges: tuple[tuple[int, int], ...]) -> str:
    return "".join(rf"\u{low:04x}-\u{high:04x}" for low, high in ranges)


@functools.cache
def _outside_twin() -> re.Pattern[str]:
    """Compiled on first use, as the tokenizer's other patterns that not every text needs."""
    return re.compile(rf"[^{_alphabet(_TWIN_RANGES)}]")


@functools.cache
def _outside_wide() -> re.Pattern[str]:
    return re.compile(rf"[^{_alphabet(_WIDE_RANGES)}]")


class _Twin(NamedTuple):
    """The twin scanner, worked out with what reads its results (see above).

    ``pattern`` has the scanner's named groups and, in the wide twin, ``char`` (the tests compare
    its matches with the scanner's);
    ``splitter`` is the same pattern with two groups,
    the whitespace before a token and the token, for ``re.split``: its pieces tile the text, so
    spans are running sums of lengths, with no match object per token.  A token's kind follows
    from its text alone (``kind_of``, the alternatives' order on its first character), since the
    twin's alternatives cannot take the same text.
    """

    pattern: str
    splitter: re.Pattern[str]
    kind_of: re.Pattern[str]
    opens_with_stop: re.Pattern[str]
    references: bool
    wide: bool


_TWIN_AFTER: Final = 1 << 16
"""Characters of text scanned before the twin is built: building it (about 20 ms) then costs at
most what scanning has already cost, so a command that reads one small page never pays for it."""


class _TwinDemand:
    """Characters of text scanned so far (see ``_TWIN_AFTER``)."""

    __slots__ = ("scanned",)

    def __init__(self) -> None:
        self.scanned = 0

    def met(self, length: int) -> bool:
        """Count ``length`` more characters; has the twin been earned?"""
        self.scanned += length
        return self.scanned >= _TWIN_AFTER


_TWIN_DEMAND: Final = _TwinDemand()
_WIDE_DEMAND: Final = _TwinDemand()
"""Characters of pieces the scanner read that the wide twin could have read (building the wide
twin costs about 50 ms: its classes span the CJK ideographs)."""


def _scanner_for(text: str, references: bool) -> _Twin | regex.Pattern[str]:
    """The twin once it has been earned (it hands the pieces outside its alphabet to the
    scanner: ``_twin_batches``), else the scanner itself."""
    if _TWIN_DEMAND.met(len(text)):
        return _twin(references)
    return _scanner(references)


def _scanner(references: bool) -> regex.Pattern[str]:
    return _SCANNER if references else _scanner_without_references()


@functools.cache
def _twin(references: bool, wide: bool = False) -> _Twin:
    """The scanner's twin (see ``_TWIN_RANGES``), built on first use (about 20 ms); ``wide``:
    over the wide alphabet (``_WIDE_RANGES``)."""
    members = functools.partial(_members, wide=wide)
    space = members(r"\s")
    line_space = members(r"[^\S\n]")
    letter = members(rf"[{_LETTER}--[{UNSPACED}]]")
    unspaced = members(rf"[{_LETTER}&&[{UNSPACED}]]")
    char = f"(?P<char>[{unspaced}])|" if unspaced else ""  # the narrow alphabet has none
    lower = members(r"\p{Ll}")
    digit = members(r"\p{Nd}")
    script = members(f"[{SUPER_SUB}]")
    quotes = members(f"[{DOUBLE_QUOTES}{SINGLE_QUOTES}]")
    opening = members(r"\p{Ps}")
    closing = members(r"\p{Pe}")
    symbol = members(_SYMBOL_CHAR)
    stop = members(f"[{_SENTENCE_BEFORE_GAP}]")
    closers = members(f"[{_CLOSERS}]")
    cited = members(r"[\p{L}\p{N}\p{M}.,;:!?)\]\"'\u201d\u2019\u00bb]")
    cite_end = members(r"[.,;:!?)\"'\u201d\u2019\u00bb\[]")
    next_word = members(rf"[\p{{L}}\p{{N}}(\[{DOUBLE_QUOTES}{SINGLE_QUOTES}]")
    comma_break = members(rf"[\s\p{{Pf}}{DOUBLE_QUOTES}{SINGLE_QUOTES}]")
    glued_comma = (
        rf"[,;](?:(?![{comma_break}]|[,;.:]+(?:[{space}]|$)|$|\[(?i:{_REFERENCE_BODY})\])"
        rf"|(?=[^\[\]{_LINE_END}]{{0,{_IN_BRACKETS}}}\]))"
    )
    reference = (
        rf"""(?=\[)(?<=[{cited}])\[(?i:{_REFERENCE_BODY})\]
             (?=[{cite_end}]|[{space}]*$|[{space}]+[{next_word}])"""
        if references
        else "(?!)"
    )
    alternatives = rf"""
          {char}
          (?P<word>[{letter}]++(?:[\-\u2010][{line_space}]*+\r?\n[{line_space}]*+
                                 (?=[{lower}])[{letter}]++)*+)
        | (?P<number>[{digit}]++(?:[.,'\u2019_][{digit}]++)*+)
        | (?P<emoji>(?!))
        | (?P<script>[{script}]++)
        | (?P<reference>{reference})
        | (?P<quote>[{quotes}])
        | (?P<open>[{opening}])
        | (?P<close>[{closing}])
        | (?P<ellipsis>\.\.\.|\u2026|\u22ef)
        | (?P<symbol>(?:[{symbol}]|[{stop}](?![{closers}]|$)|{glued_comma})++)"""
    unnamed = re.sub(r"\(\?P<\w+>", "(?:", alternatives)
    kind_of = rf"""{char}(?P<word>[{letter}])|(?P<number>[{digit}])|(?P<script>[{script}])
        |(?P<reference>\[.)|(?P<quote>[{quotes}])|(?P<open>[{opening}])|(?P<close>[{closing}])
        |(?P<ellipsis>(?:\.\.\.|\u2026|\u22ef)\Z)|(?P<symbol>)"""
    return _Twin(
        rf"[{space}]*+(?:{alternatives})",
        re.compile(rf"([{space}]*+)({unnamed})", re.VERBOSE),
        re.compile(kind_of, re.VERBOSE),
        re.compile(rf"[{space}]*[{stop}]"),
        references,
        wide,
    )


@functools.cache
def _wide_guard() -> re.Pattern[str]:
    """Where the wide twin and the scanner's units may differ (see ``_WIDE_RANGES``): a
    character of an unspaced script followed by a character that extends its grapheme, or by a
    hyphenated line break (the scanner's word may go on across it, and then its last unit holds
    the hyphen)."""
    unspaced = _members(rf"[{_LETTER}&&[{UNSPACED}]]", wide=True)
    extending = _members(r"\X", wide=True, after="\u6f22")
    line_space = _members(r"[^\S\n]", wide=True)
    hyphen_break = rf"[\-\u2010][{line_space}]*\r?\n"
    return re.compile(rf"[{unspaced}](?:[{extending}]|{hyphen_break})")


@functools.cache
def _members(character_class: str, wide: bool = False, after: str = "") -> str:
    """The characters of the twin's alphabet (``wide``: the wide twin's) that
    ``character_class`` (a ``regex`` pattern) takes, as the body of a ``re`` class, in ranges;
    ``after``: the characters that the pattern takes together with ``after`` before them."""
    characters = _twin_characters(wide)
    if after:
        pattern = regex.compile(character_class, regex.VERSION1)
        taken = [char for char in characters if pattern.fullmatch(after + char)]
        codes = list(map(ord, taken))
    else:
        codes = list(map(ord, regex.findall(character_class, characters, regex.VERSION1)))
    runs: list[list[int]] = []
    for code in codes:
        if runs and runs[-1][1] == code - 1:
            runs[-1][1] = code
        else:
            runs.append([code, code])
    return "".join(
        rf"\u{low:04x}" if low == high else rf"\u{low:04x}-\u{high:04x}" for low, high in runs
    )


@functools.cache
def _twin_characters(wide: bool = False) -> str:
    """Every character of the twin's alphabet (``wide``: the wide twin's), in order."""
    ranges = _WIDE_RANGES if wide else _TWIN_RANGES
    return "".join(chr(code) for low, high in ranges for code in range(low, high + 1))


@functools.cache
def _invisible_run() -> regex.Pattern[str]:
    return regex.compile(rf"[{INVISIBLE}]+")


@functools.cache
def _noise_in_word() -> regex.Pattern[str]:
    return regex.compile(
        rf"(?<![{_INDIC}])[\u200c\u200d]|[[{INVISIBLE}]--[\u200c\u200d]]", regex.VERSION1
    )


@functools.cache
def _hyphenation() -> regex.Pattern[str]:
    return regex.compile(_HYPHEN_BREAK)


@functools.cache
def _only_invisible() -> regex.Pattern[str]:
    return regex.compile(rf"[{INVISIBLE}]*")


_DASH_SET: Final = frozenset(DASHES)
# Characters that often open the gap between two tokens and are not invisible: a gap starting
# with one is not glued, so the gap need not be matched against ``_only_invisible()``.
_VISIBLE_GAP: Final = frozenset(" \n\t\r,.;:!?\u3001\u3002\uff0c")
_DOUBLE_SET: Final = frozenset(DOUBLE_QUOTES)
_FRACTION_SET: Final = frozenset("\u00bc\u00bd\u00be\u2189") | frozenset(
    chr(code) for code in range(0x2150, 0x2160)
)
_KINDS: Final = {
    "word": WORD,
    "number": NUMBER,
    "char": CHAR,
    "script": SCRIPT,
    "quote": QUOTE,
    "open": OPEN,
    "close": CLOSE,
    "ellipsis": SYMBOL,
    "symbol": SYMBOL,
}
SIDE_KINDS: Final = frozenset({"emoji", "reference"})
SHORT_WORD: Final = 4


class Token(NamedTuple):
    """One comparison token: its original text and span, kind, flags and comparison keys.

    ``key`` is what matching compares; ``exact`` is the key with letter case kept, compared
    instead of ``key`` when either side's token is case-sensitive.
    """

    text: str
    start: int
    end: int
    kind: int
    key: str
    exact: str
    glued: bool
    sensitive: bool


class SideItem(NamedTuple):
    """An emoji or reference mark: a quote may leave it out, but may not change it."""

    before: int  # index of the token it precedes (the token count when it ends the text)
    key: str
    start: int
    end: int


class Scan(NamedTuple):
    """A tokenized text: its tokens, its side items, and the text (what code compares between
    tokens: ``verifier.code``)."""

    tokens: list[Token]
    side: list[SideItem]
    text: str = ""


def tokenize(text: str, *, references: bool = True) -> list[Token]:
    """The tokens of ``text`` (spans are code-point offsets into ``text``)."""
    return scan_text(text, references=references).tokens


SIDE_ITEM_MARK: Final = "\x00"  # before a side item's key in ``token_keys``: never a token's


def token_keys(text: str) -> list[str]:
    """The comparison keys of ``text``, case kept where it is compared, side items marked."""
    return list(itertools.chain.from_iterable(comparison_key_batches(text)))


def word_keys(text: str) -> list[str]:
    """``token_keys`` without the side items (emoji, reference marks): what stays of a quote
    whichever of those it leaves out (rule 7), so two quotes equal but for them are equal."""
    return [key for key in token_keys(text) if not key.startswith(SIDE_ITEM_MARK)]


def comparison_key_batches(text: str, starts: array[int] | None = None) -> Iterator[list[str]]:
    """The comparison keys of ``text``, a batch at a time, so that a large text is never held as
    a token list: one key per token (the exact one where case counts), and each side item's key,
    marked with a NUL, in its place.  The last batch holds the side items after the last token
    (it may be empty).  ``starts``, when given, is extended with each token's start offset, in
    order: what a digest of a text with code places its spans by, without a second scan."""
    side: list[SideItem] = []
    placed = 0  # side items given out so far
    count = 0  # tokens given out so far
    for columns in iter_columns(text, side):
        if starts is not None:
            starts.extend(columns.starts)
        keys = _comparison_keys(columns)
        end = count + len(keys)
        inside = placed  # side items come in scan order: those before ``end`` come first
        while inside < len(side) and side[inside].before < end:
            inside += 1
        for item in reversed(side[placed:inside]):  # few: put in place, last first
            keys.insert(item.before - count, SIDE_ITEM_MARK + item.key)
        placed, count = inside, end
        yield keys
    yield [SIDE_ITEM_MARK + item.key for item in side[placed:]]


def _comparison_keys(columns: Columns) -> list[str]:
    """A batch's comparison keys: its keys, with the exact form where case counts.  Few tokens
    are case-sensitive, so they are found and patched in C-level passes, not read one by one."""
    keys = list(columns.keys)
    sensitive = map(operator.and_, columns.flags, itertools.repeat(SENSITIVE))
    for index in itertools.compress(itertools.count(), sensitive):
        keys[index] = columns.exacts[index]
    return keys


def scan_text(text: str, *, references: bool = True) -> Scan:
    """Tokenize ``text``: every token with its flags, and every side item where it stands."""
    side: list[SideItem] = []
    tokens = list(iter_tokens(text, side, references=references))
    return Scan(tokens, side, text)


Row = tuple[str, int, int, int, str, str, bool, bool]
"""A token as a plain tuple, in ``Token``'s field order."""

CHUNK: Final = 256
"""Tokens scanned per batch: large enough that per-batch costs vanish, small enough that a
batch's match objects and columns stay near 50 KB, whatever the text's size (at 1,024 they
were 0.5x a 1 MB source's size at the peak of preparing it)."""

# How a word's case is settled (see ``_settle``), decided once per distinct word: not
# compared (also set for mixed case, whose ``SENSITIVE`` bit is set at once); compared only next
# to a number, script or symbol (a short word: "5 m", "A+"); or by the capitals next to it
# ("MB" but not "IN" in "WORDS IN CAPITALS").  The values are bits: see ``_settle_inner``.
_CASE_NEVER: Final = 0
_CASE_NEIGHBOURS: Final = 1
_CASE_CAPITALS: Final = 2
_CASE_LETTER: Final = 3
CASE_SHIFT: Final = 6
"""Where a token's flags keep its ``_CASE_*`` rule (two bits above ``SENSITIVE``)."""
CASE_MAY_COUNT: Final = SENSITIVE | 3 << CASE_SHIFT
"""The flags that say a token's case may be compared: mixed case, or a ``_CASE_*`` rule."""
_NUMBERISH_BEFORE: Final = bytes(
    1 if flags & KIND_MASK in (NUMBER, SCRIPT, SYMBOL, OPEN, CLOSE) else 0 for flags in range(256)
)
_CASE_RULE: Final = bytes(flags >> CASE_SHIFT for flags in range(256))
_NUMBERISH_AFTER: Final = bytes(
    1 if flags & KIND_MASK in (NUMBER, SYMBOL, OPEN, CLOSE) else 0 for flags in range(256)
)


Neighbour = tuple[int, int, str]
"""What the case rule reads of a word's neighbour: its flags, its end and its exact form."""


class Columns(NamedTuple):
    """The tokens of one batch, column by column, so a prepared source extends its arrays with
    whole columns instead of appending token by token.  ``flags`` holds the kind with the
    ``GLUED`` and ``SENSITIVE`` bits, and the ``_CASE_*`` rule in the bits from ``CASE_SHIFT``."""

    texts: list[str]
    starts: list[int]
    ends: list[int]
    flags: list[int]
    keys: list[str]
    exacts: list[str]

    @classmethod
    def empty(cls) -> Columns:
        return cls([], [], [], [], [], [])

    @classmethod
    def joined(cls, parts: list[Columns]) -> Columns:
        """The batches ``parts``, in order, as one."""
        columns = zip(*parts, strict=True)
        return cls(*(list(itertools.chain.from_iterable(column)) for column in columns))

    def neighbour(self, index: int) -> Neighbour:
        """What the case rule reads of token ``index`` as a word's neighbour."""
        return self.flags[index], self.ends[index], self.exacts[index]

    def rows(self) -> Iterator[Row]:
        """The batch's tokens as ``Row`` tuples, in order."""
        flags = self.flags
        return zip(
            self.texts,
            self.starts,
            self.ends,
            map(operator.and_, flags, itertools.repeat(KIND_MASK)),
            self.keys,
            self.exacts,
            map(bool, map(operator.and_, flags, itertools.repeat(GLUED))),
            map(bool, map(operator.and_, flags, itertools.repeat(SENSITIVE))),
            strict=True,
        )


def iter_tokens(text: str, side: list[SideItem], *, references: bool = True) -> Iterator[Token]:
    """Yield the tokens of ``text`` one by one, appending side items to ``side`` as met."""
    return map(Token._make, iter_rows(text, side, references=references))


def iter_rows(text: str, side: list[SideItem], *, references: bool = True) -> Iterator[Row]:
    """The tokens of ``text`` as plain tuples, in order."""
    for columns in iter_columns(text, side, references=references):
        yield from columns.rows()


def iter_columns(
    text: str,
    side: list[SideItem],
    *,
    references: bool = True,
    chunk: int = CHUNK,
    settle: bool = True,
    code: Callable[[int], bool] | None = None,
) -> Iterator[Columns]:
    """The tokens of ``text`` in batches of about ``chunk``, case sensitivity settled, appending
    side items to ``side`` as met: a prepared source never holds the whole token list, nor an
    object per token.

    A batch is yielded once the next one is scanned, since the case of its last word can depend
    on the token after it.  ``settle=False`` leaves the case unsettled (only the ``SENSITIVE``
    bit of mixed case is set; the rule is in the bits from ``CASE_SHIFT``): a prepared source
    settles it with ``case_counts`` for the few tokens a quote is compared with, reading the
    exact forms from the text, so the ``exacts`` column is then not to be read (a batch read in
    bulk leaves it empty).  ``code`` says whether a place is code, where a "[1]" is tokens, not a
    reference mark.
    """
    scanner = _scanner_for(text, references)
    position = _Position(code, exacts=settle)
    pending: Columns | None = None  # scanned, all but its last word settled
    before_pending: Neighbour | None = None  # the token before the pending batch's first
    if isinstance(scanner, _Twin):
        batches = _twin_batches(text, scanner, side, position, chunk * _TWIN_CHARACTERS_PER_TOKEN)
    else:
        batches = _scanner_batches(text, scanner, side, position, chunk)
    if not settle:
        yield from (columns for columns in batches if columns.starts)
        return
    for columns in batches:
        if not columns.starts:
            continue
        if pending is not None:
            _settle_last(text, pending, before_pending, columns.neighbour(0))
            before_pending = pending.neighbour(len(pending.starts) - 1)
            yield pending
        _settle_inner(text, columns, before_pending)
        pending = columns
    if pending is not None:
        _settle_last(text, pending, before_pending, None)
        yield pending


def _scanner_batches(
    text: str,
    scanner: regex.Pattern[str],
    side: list[SideItem],
    position: _Position,
    chunk: int,
    start: int = 0,
    end: int | None = None,
) -> Iterator[Columns]:
    """The scanner's matches from ``start`` on (to ``end``, a place the twin may cut: see
    ``_twin_cut_pattern``), ``chunk`` at a time, as columns."""
    matches = scanner.finditer(text, start, end)
    plan = _plan(scanner)
    while batch := list(itertools.islice(matches, chunk)):
        yield _batch_columns(text, batch, side, position, plan)


_TWIN_CHARACTERS_PER_TOKEN: Final = 16
"""Characters of text per token of ``chunk`` read by the twin at a time (``_twin_pieces``)."""
_TWIN_LONGEST_PIECE: Final = 64
"""A piece longer than this many times its planned size (a text with no place to cut, such as
"a,b,c,..." without a space) is read by the scanner instead, match by match, so that no text
makes the twin hold its whole token list at once."""


# Where the twin may cut a text into pieces read one by one: after a space, tab or line break that
# follows a character other than whitespace or a hyphen (a hyphen or soft hyphen can join a word
# across a line break), and not within ``REFERENCE_REACH`` of a "[" before it (a reference mark
# holds spaces, and looks past the spaces after it), nor between a "," or ";" and a "]" that close
# by (a comma looks ahead for one).  No token spans such a cut and nothing the scanner looks at
# before or after a token crosses it, so each piece scans as it would in the whole text.
@functools.cache
def _twin_cut_pattern() -> re.Pattern[str]:
    return re.compile(r"[^\s\-\u2010\u00ad][ \t\r\n]")


REFERENCE_REACH: Final = 32
_COMMA_BEFORE: Final = re.compile("[,;]")
"""More characters than the longest reference mark ("[clarification needed]")."""


def _twin_batches(
    text: str, twin: _Twin, side: list[SideItem], position: _Position, piece: int
) -> Iterator[Columns]:
    """The tokens of ``text``, a piece of about ``piece`` characters at a time, as columns: the
    twin reads a piece in its alphabet (``re.split`` gives the whitespace before each token and
    the token, which tile the piece), the scanner any other piece, from its start to its end,
    where nothing it looks at crosses (``_twin_cut_pattern``)."""
    chunk = max(piece // _TWIN_CHARACTERS_PER_TOKEN, 1)
    for start, end in _twin_pieces(text, piece):
        if end - start > piece * _TWIN_LONGEST_PIECE:
            scanner = _scanner(twin.references)
            yield from _scanner_batches(text, scanner, side, position, chunk, start)
            return
        reader = _piece_reader(text, start, end, twin)
        if reader is None:
            scanner = _scanner(twin.references)
            yield from _scanner_batches(text, scanner, side, position, chunk, start, end)
            continue
        parts = reader.splitter.split(text[start:end])
        offsets = list(itertools.accumulate(map(len, parts), initial=start))
        yield _twin_columns(text, parts[2::3], offsets[2::3], offsets[3::3], side, position, reader)


def _piece_reader(text: str, start: int, end: int, twin: _Twin) -> _Twin | None:
    """The twin that reads the piece ``start:end`` of ``text``: ``twin`` when the piece is in its
    alphabet, else the wide twin when it is in that one's (and the wide twin has been earned,
    ``_WIDE_DEMAND``); None when the scanner must read it."""
    if not _outside_twin().search(text, start, end):
        reader = twin
    elif (
        _outside_wide().search(text, start, end)
        or not _WIDE_DEMAND.met(end - start)
        or _wide_guard().search(text, start, end)
    ):
        return None
    else:
        reader = _twin(twin.references, wide=True)
    if start == 0 and reader.opens_with_stop.match(text):
        return None
    return reader


def _twin_pieces(text: str, piece: int) -> Iterator[tuple[int, int]]:
    """Spans of about ``piece`` characters that tile ``text``, cut at ``_twin_cut_pattern``."""
    start = 0
    while start < len(text):
        yield start, (start := _twin_cut(text, start + piece))


def _twin_cut(text: str, at: int) -> int:
    """The first place to cut ``text`` from ``at`` on (see ``_twin_cut_pattern``), or its end."""
    while at < len(text) and (cut := _twin_cut_pattern().search(text, at)) is not None:
        if text.find("[", max(cut.start() - REFERENCE_REACH, 0), cut.end()) < 0 and not (
            _COMMA_BEFORE.search(text, max(cut.end() - REFERENCE_REACH, 0), cut.end())
            and text.find("]", cut.end(), cut.end() + REFERENCE_REACH) >= 0
        ):
            return cut.end()
        at = cut.end()
    return len(text)


def _twin_columns(
    text: str,
    texts: list[str],
    starts: list[int],
    ends: list[int],
    side: list[SideItem],
    position: _Position,
    twin: _Twin,
) -> Columns:
    """The columns of one piece read by the twin: in bulk unless it has a reference mark or a
    word to split again.  A twin's text has no invisible characters, so glued is touching.
    ``ends``: where each token ends, which is where the split's next part starts."""
    if not texts:
        return Columns.empty()
    described = list(map(_TWIN_DESCRIPTIONS.__getitem__, texts))
    flags = list(map(_FLAGS_OF, described))
    special = _special_tokens(text, texts, starts, ends, flags)
    if not special:
        return _twin_bulk(texts, starts, ends, described, flags, side, position)
    parts = []
    at = 0
    for index in [*special, len(texts)]:
        if at < index:
            span = slice(at, index)
            parts.append(
                _twin_bulk(
                    texts[span], starts[span], ends[span], described[span], flags[span], side,
                    position,
                )
            )  # fmt: skip
        if index < len(texts):
            raw = texts[index]
            group = _twin_group(twin, raw)
            parts.append(_general_columns(text, [group], [raw], [starts[index]], side, position))
        at = index + 1
    return Columns.joined(parts)


def _special_tokens(
    text: str, texts: list[str], starts: list[int], ends: list[int], flags: list[int]
) -> list[int]:
    """Where a piece read by a twin has a reference mark, or a word to split again: those few
    tokens are read one by one (``_general_columns``), the others in bulk.  (A twin reads a
    character of an unspaced script as a token of its own, and a superscript that is not a
    letter as a script token, as the scanner's split would: only a word holding superscript
    letters is split again.)"""
    marks: Iterable[int] = ()
    if _SIDE_ITEM in flags:
        side_items = map(operator.eq, flags, itertools.repeat(_SIDE_ITEM))
        marks = itertools.compress(itertools.count(), side_items)
    if not _superscript_letters().search(text, starts[0], ends[-1]):
        return list(marks)
    words = (
        index
        for index, raw in enumerate(texts)
        if not raw.isascii() and _super_sub_letter().search(raw)
    )
    return sorted({*marks, *words})


def _twin_bulk(
    texts: list[str],
    starts: list[int],
    ends: list[int],
    described: list[Description],
    flags: list[int],
    side: list[SideItem],
    position: _Position,
) -> Columns:
    """The columns of tokens read by a twin, described in bulk.  A twin's text has no invisible
    characters, so glued is touching."""
    before_ends = [position.last_end, *ends[:-1]]
    gaps = list(map(operator.mul, map(operator.eq, starts, before_ends), itertools.repeat(GLUED)))
    return _bulk_columns(texts, starts, ends, gaps, described, flags, side, position)


def _twin_group(twin: _Twin, raw: str) -> str:
    """The scanner group that took ``raw``, read by the twin (see ``_Twin``)."""
    match = twin.kind_of.match(raw)  # always matches: the last alternative is empty
    return (match.lastgroup if match else None) or "symbol"


class _Position:
    """Where scanning stands: tokens yielded so far and the end of the last one; and, for a
    text with code, which places are code (a "[1]" there is an index, never a reference mark)."""

    __slots__ = ("code", "count", "exacts", "last_end")

    def __init__(self, code: Callable[[int], bool] | None = None, exacts: bool = True) -> None:
        self.exacts = exacts  # is the exacts column wanted (see ``iter_columns``)?
        self.count = 0
        self.last_end = 0
        self.code = code


def _batch_columns(
    text: str,
    batch: list[regex.Match[str]],
    side: list[SideItem],
    position: _Position,
    plan: _Plan,
) -> Columns:
    """The columns of one batch of scanner matches: in bulk (C-level maps) unless the batch has
    a side item, then match by match.  Words of a script written without spaces are split into
    their units first (``_split_words``)."""
    numbers = list(map(_LAST_INDEX, batch))
    texts = list(map(_GROUP, batch, numbers))
    starts = list(map(_START, batch, numbers))
    if not plan.side_numbers.isdisjoint(numbers):
        groups = list(map(plan.names.__getitem__, numbers))
        return _general_columns(text, groups, texts, starts, side, position)
    if _needs_split(texts):
        groups = list(map(plan.names.__getitem__, numbers))
        groups, texts, starts = _split_words(groups, texts, starts)
        prefixes = list(map(_GROUP_CODES.__getitem__, groups))
    else:
        prefixes = list(map(plan.prefixes.__getitem__, numbers))
    ends = list(map(operator.add, starts, map(len, texts)))
    described = list(map(_DESCRIPTIONS.__getitem__, map(operator.add, prefixes, texts)))
    only_invisible = _only_invisible().fullmatch  # looked up once, not per token
    gaps = [
        GLUED
        if start == end or (text[end] not in _VISIBLE_GAP and only_invisible(text, end, start))
        else 0
        for start, end in zip(starts, [position.last_end, *ends[:-1]], strict=True)
    ]
    flags = list(map(_FLAGS_OF, described))
    return _bulk_columns(texts, starts, ends, gaps, described, flags, side, position)


def _split_words(
    groups: list[str], texts: list[str], starts: list[int]
) -> tuple[list[str], list[str], list[int]]:
    """The batch's tokens with each word that holds characters of an unspaced script or
    superscript letters split into its units (``_word_parts``), as ``_general_columns`` splits
    them: so a page of Chinese or Japanese is described in bulk too."""
    split_groups: list[str] = []
    split_texts: list[str] = []
    split_starts: list[int] = []
    for group, raw, start in zip(groups, texts, starts, strict=True):
        if group == "word" and not raw.isascii() and _needs_split_pattern().search(raw):
            for part in _word_parts().finditer(raw):
                split_groups.append(part.lastgroup or "")
                split_texts.append(part.group())
                split_starts.append(start + part.start())
        else:
            split_groups.append(group)
            split_texts.append(raw)
            split_starts.append(start)
    return split_groups, split_texts, split_starts


def _bulk_columns(
    texts: list[str],
    starts: list[int],
    ends: list[int],
    gaps: list[int],
    described: list[Description],
    flags: list[int],
    side: list[SideItem],
    position: _Position,
) -> Columns:
    """The columns of a batch described in bulk (``described``: its tokens' descriptions,
    ``flags`` the first column of them), for the scanner's batches and the twin's pieces alike:
    the first token is not glued at the start of the text or after a side item, and
    ``position`` moves past the batch."""
    if position.count == 0 or (side and side[-1].before == position.count):
        gaps[0] = 0
    position.count += len(starts)
    position.last_end = ends[-1]
    keys = list(map(_KEY_OF, described))
    exacts = list(map(_EXACT_OF, described)) if position.exacts else []
    return Columns(texts, starts, ends, list(map(operator.or_, flags, gaps)), keys, exacts)


def _general_columns(
    text: str,
    groups: list[str],
    texts: list[str],
    starts: list[int],
    side: list[SideItem],
    position: _Position,
) -> Columns:
    """The columns of a batch with side items or words to split again, token by token."""
    columns = Columns.empty()
    only_invisible = _only_invisible().fullmatch  # looked up once, not per token
    for group, raw, start in zip(groups, texts, starts, strict=True):
        end = start + len(raw)
        index_mark = group == "reference" and (
            (position.code is not None and position.code(start)) or reads_as_index(text, start, raw)
        )
        if group in SIDE_KINDS and not index_mark:
            side.append(SideItem(position.count, _side_key(group, raw), start, end))
            continue
        glued = position.count > 0 and (
            start == position.last_end
            or (
                text[position.last_end] not in _VISIBLE_GAP
                and only_invisible(text, position.last_end, start) is not None
            )
        )
        if glued and side and side[-1].before == position.count:
            glued = False
        if index_mark:
            for part in _scanner_without_references().finditer(raw):
                name = part.lastgroup or ""
                _append(columns, name, part.group(name), start + part.start(name), glued)
                position.count += 1
                glued = True
        elif group == "word" and not raw.isascii() and _needs_split_pattern().search(raw):
            for part in _word_parts().finditer(raw):
                _append(columns, part.lastgroup or "", part.group(), start + part.start(), glued)
                position.count += 1
                glued = True
        else:
            _append(columns, group, raw, start, glued)
            position.count += 1
        position.last_end = end
    return columns


# What stands before a "[" that makes it an index or a type parameter, not a reference mark: an
# identifier (with "_", a digit, an inner "." or "::", or camelCase), or a call "name(...)".
@functools.cache
def _identifier() -> regex.Pattern[str]:
    return regex.compile(
        r"(?:\w*[_\d]\w*|\w+(?:(?:\.|::|->)\w+)+|\w*\p{Ll}\p{Lu}\w*)\Z"
        r"|(?:\w|\w[.:>]\w)[^\s(]*\([^\s]*\)\Z",
        regex.VERSION1,
    )


@functools.cache
def _capitals_body() -> regex.Pattern[str]:
    return regex.compile(r"\[(?:[A-Z]{1,2}|0)\]")


_BRACKET_RUN: Final = regex.compile(r"\S*\Z")
_RUN_REACH: Final = 64
"""Characters read back from a "[" for the code before it (a longer run is read from its end)."""


def reads_as_index(text: str, start: int, raw: str) -> bool:
    """Is the "[...]" at ``start`` (a reference mark by its form) code: an index or a type
    parameter?  A reference mark is a footnote in prose ("word[1]", "word.[12]", "[a]"); it is
    not one in capitals ("Type[T]"), nor "[0]" (notes count from 1), nor after an identifier
    ("items_2[1]", "self.items[0]"), a call ("sys.exc_info()[1]") or an index ("x_1[0][1]"),
    which are read from the text before it up to the whitespace (a plain word is prose:
    "arr[1]" stays a mark)."""
    if _capitals_body().fullmatch(raw):
        return True
    before = _BRACKET_RUN.search(text, max(start - _RUN_REACH, 0), start)
    run = before.group() if before else ""
    if run.endswith("]"):
        opening = run.rfind("[")
        if opening < 0:
            return False
        inner = run[opening:]
        at = start - len(run) + opening
        return not _reference_only().fullmatch(inner) or reads_as_index(text, at, inner)
    return _identifier().search(run.lstrip("([{\"'\u201c\u2018")) is not None


@functools.cache
def _reference_only() -> regex.Pattern[str]:
    return regex.compile(rf"\[(?i:{_REFERENCE_BODY.replace('[ ]', ' ')})\]")


def _append(columns: Columns, group: str, raw: str, start: int, glued: bool) -> None:
    kind, key, exact, _ = _DESCRIPTIONS[_GROUP_CODES[group] + raw]
    columns.texts.append(raw)
    columns.starts.append(start)
    columns.ends.append(start + len(raw))
    columns.flags.append(kind | GLUED if glued else kind)
    columns.keys.append(key)
    columns.exacts.append(exact)


def _settle_inner(text: str, columns: Columns, before_first: Neighbour | None) -> None:
    """Settle the case of every word of ``columns`` but the last, which needs the next batch;
    ``before_first`` is the token before the first (in the batch before), if any.

    The neighbour test is done on whole columns first (bytes translations and C-level maps), so
    a short word is looked at only when a number, script or symbol stands next to it: in a large
    batch and in a quote alike (for a quote of 15 words that is about a tenth of its scan less
    than settling each word with a case rule).
    """
    for index in _near_candidates(columns):
        previous = columns.neighbour(index - 1) if index > 0 else before_first
        _settle(text, columns, index, previous, columns.neighbour(index + 1))


def _near_candidates(columns: Columns) -> Iterator[int]:
    """The words of a batch (but its last) whose case may count: those with a rule other than
    ``_CASE_NEIGHBOURS``, and those with a number, script or symbol next to them."""
    count = len(columns.starts)
    flags = bytes(columns.flags)
    before = b"\x01" + flags[:-1].translate(_NUMBERISH_BEFORE)
    after = flags[1:].translate(_NUMBERISH_AFTER)
    near = map(operator.or_, before, after)
    cases = flags.translate(_CASE_RULE)
    wanted = map(operator.and_, cases, map(operator.or_, near, itertools.repeat(2)))
    return itertools.compress(range(count - 1), wanted)


def _settle_last(
    text: str, columns: Columns, before_first: Neighbour | None, after: Neighbour | None
) -> None:
    """Settle the case of the last token of ``columns``, now that the token after it is known."""
    last = len(columns.starts) - 1
    if columns.flags[last] >> CASE_SHIFT:
        before = columns.neighbour(last - 1) if last > 0 else before_first
        _settle(text, columns, last, before, after)


def _settle(
    text: str, columns: Columns, index: int, before: Neighbour | None, after: Neighbour | None
) -> None:
    flags = columns.flags[index]
    if case_counts(text, columns.starts[index], columns.ends[index], flags, before, after):
        columns.flags[index] = flags | SENSITIVE


def case_counts(
    text: str,
    start: int,
    end: int,
    flags: int,
    before: Neighbour | None,
    after: Neighbour | None,
) -> bool:
    """Is the letter case of the token at ``start:end`` (with ``flags``, as scanned) compared, given
    the tokens ``before`` and ``after`` it?  The one definition of the rule, for the tokenizer,
    which settles it as it scans, and for a prepared source, which settles it for a token only
    when a quote is compared with it."""
    if flags & SENSITIVE:
        return True
    rule = flags >> CASE_SHIFT
    if rule == _CASE_CAPITALS:
        return not (_capital_word(before) or _capital_word(after))
    if rule == _CASE_NEIGHBOURS:
        if end - start > SHORT_WORD:
            return _word_in_code(flags, before, after)
        return _unit_or_glued(text, start, flags, before, after)
    if rule == _CASE_LETTER:
        return _unit_or_glued(text, start, flags, before, after) or _letter_is_code(
            text, start, end, flags, before, after
        )
    return False


@functools.cache
def _superscript_letters() -> re.Pattern[str]:
    """The superscript and subscript letters of the wide twin's alphabet, which the scanner
    splits out of a word (``_split_words``)."""
    return re.compile(f"[{_members(rf'[[{SUPER_SUB}]&&{_LETTER}]', wide=True)}]")


@functools.cache
def _super_sub_letter() -> regex.Pattern[str]:
    return regex.compile(rf"[[{SUPER_SUB}]&&{_LETTER}]", regex.VERSION1)


def _needs_split(texts: list[str]) -> bool:
    """Could a token among ``texts`` be a word holding characters of an unspaced script or
    superscript letters, to be split again?  Only the few that are not ASCII are searched."""
    unusual = "".join(itertools.filterfalse(str.isascii, texts))
    return bool(unusual) and _needs_split_pattern().search(unusual) is not None


_LAST_INDEX: Final = operator.attrgetter("lastindex")
_FLAGS_OF: Final = operator.itemgetter(0)
_KEY_OF: Final = operator.itemgetter(1)
_EXACT_OF: Final = operator.itemgetter(2)
_START: Final = regex.Match.start
_GROUP: Final = regex.Match.group


@functools.cache
def _group_names(pattern: regex.Pattern[str]) -> tuple[str, ...]:
    """Group number -> name: ``lastindex`` and ``span(number)`` are cheaper than by name."""
    names = [""] * (pattern.groups + 1)
    for name, number in pattern.groupindex.items():
        names[number] = name
    return tuple(names)


Description = tuple[int, str, str, int]
"""``(flags, key, exact, case rule)`` of a token: see ``_describe``."""

_GROUP_CODES: Final = {group: chr(code) for code, group in enumerate(_KINDS)}
_CODE_GROUPS: Final = tuple(_KINDS)
_DESCRIPTIONS_LIMIT: Final = 1 << 15


class _Plan(NamedTuple):
    """What the batch loop needs to know of a scanner, worked out once: group names by number,
    the description-key prefix of each group, and the numbers of the side kinds."""

    names: tuple[str, ...]
    prefixes: tuple[str, ...]
    side_numbers: frozenset[int]


@functools.cache
def _plan(scanner: regex.Pattern[str]) -> _Plan:
    names = _group_names(scanner)
    return _Plan(
        names,
        tuple(_GROUP_CODES.get(name, "") for name in names),
        frozenset(number for number, name in enumerate(names) if name in SIDE_KINDS),
    )


class _Generations(dict[str, Description]):
    """Descriptions by text, so a whole batch is described by one C-level map (texts repeat
    their tokens); bounded in two generations.  When the dictionary is full its entries become
    the old generation (the one before is dropped) and it starts empty: a description still in
    use is moved back from the old generation on its first miss, at a fraction of the cost of
    working it out again (a process that prepares page after page keeps its language's words).
    """

    __slots__ = ("_old",)

    def __init__(self) -> None:
        super().__init__()
        self._old: dict[str, Description] = {}

    def __missing__(self, coded: str) -> Description:
        description = self._old.get(coded)
        if description is None:
            description = self._work_out(coded)
        if len(self) >= _DESCRIPTIONS_LIMIT:
            self._old = dict(self)
            self.clear()
        self[coded] = description
        return description

    def _work_out(self, coded: str) -> Description:
        raise NotImplementedError


class _Descriptions(_Generations):
    """Descriptions by group code + token text."""

    __slots__ = ()

    def _work_out(self, coded: str) -> Description:
        return _describe(_CODE_GROUPS[ord(coded[0])], coded[1:])


_DESCRIPTIONS: Final = _Descriptions()


_SIDE_ITEM: Final = -1
"""The kind ``_TWIN_DESCRIPTIONS`` gives a reference mark, which is a side item, not a token."""


class _TwinDescriptions(_Generations):
    """Descriptions by token text alone, for the twins, whose token texts tell their group (see
    ``_Twin``)."""

    __slots__ = ()

    def _work_out(self, raw: str) -> Description:
        group = _twin_group(_twin(True, wide=_outside_twin().match(raw) is not None), raw)
        if group in SIDE_KINDS:
            return (_SIDE_ITEM, "", "", _CASE_NEVER)
        return _describe(group, raw)


_TWIN_DESCRIPTIONS: Final = _TwinDescriptions()


def _describe(group: str, raw: str) -> Description:
    """``(flags, key, exact, case rule)`` of a token (see ``_case_rule``)."""
    kind = _KINDS[group]
    key, exact = _keys(kind, group, raw)
    key = sys.intern(key)
    flags, case = _case_rule(kind, exact)
    return flags, key, key if exact == key else exact, case


def _case_rule(kind: int, exact: str) -> tuple[int, int]:
    """The token's flags (kind, with ``SENSITIVE`` for mixed case, and its ``_CASE_*`` rule in
    the bits from ``CASE_SHIFT``) and its ``_CASE_*`` rule."""
    if kind != WORD:
        return kind, _CASE_NEVER
    if _mixed_case(exact) or _one_letter_repeated(exact):
        return kind | SENSITIVE, _CASE_NEVER
    if 2 <= len(exact) <= 3 and exact.isupper():
        return kind | _CASE_CAPITALS << CASE_SHIFT, _CASE_CAPITALS
    if len(exact) == 1:
        return kind | _CASE_LETTER << CASE_SHIFT, _CASE_LETTER
    return kind | _CASE_NEIGHBOURS << CASE_SHIFT, _CASE_NEIGHBOURS


def _keys(kind: int, group: str, raw: str) -> tuple[str, str]:
    """``(key, exact)`` of one token; they differ only for words (case)."""
    if kind == WORD:
        exact = fold_word(raw)
        return exact.casefold(), exact
    if kind == SYMBOL:
        key = "\u2026" if group == "ellipsis" else _fold_symbol(raw)
        return key, key
    if kind == QUOTE:
        key = '"' if raw in _DOUBLE_SET else "'"
        return key, key
    if kind == SCRIPT:
        return raw, raw
    key = _fold_compat(raw)
    return key, key


def _side_key(group: str, raw: str) -> str:
    """Emoji compare without their variation selectors; reference marks case-folded."""
    if group == "emoji":
        return raw.replace("\ufe0f", "").replace("\ufe0e", "")
    return raw.casefold()


@functools.lru_cache(maxsize=1 << 12)
def fold_word(raw: str) -> str:
    """A word with hyphenation and invisible characters removed (but a joiner or non-joiner
    after a letter of an Indic script: ``_INDIC``), NFKC applied, case kept.

    Cached because prose repeats its words; bounded so the cache cannot grow without end.
    """
    if raw.isascii() and raw.isalpha():
        return raw
    joined = _noise_in_word().sub("", _hyphenation().sub("", raw))
    return unicodedata.normalize("NFKC", joined)


@functools.lru_cache(maxsize=1 << 12)
def _fold_compat(raw: str) -> str:
    """NFKC for digits and unspaced-script characters (full-width forms), apostrophes unified."""
    if raw.isascii():
        return raw
    folded = unicodedata.normalize("NFKC", _invisible_run().sub("", raw))
    return folded.replace("\u2019", "'")


@functools.lru_cache(maxsize=1 << 12)
def _fold_symbol(raw: str) -> str:
    """A symbol run as compared: a lone dash of any kind is "-"; otherwise NFKC (fractions
    kept) and U+2212 MINUS SIGN as "-"."""
    if len(raw) == 1 and raw in _DASH_SET:
        return "-"
    if raw.isascii():
        return raw
    folded = "".join(
        char if char in _FRACTION_SET else unicodedata.normalize("NFKC", char) for char in raw
    )
    if len(folded) == 1 and folded in _DASH_SET:
        return "-"
    return folded.replace("\u2212", "-")


def _mixed_case(word: str) -> bool:
    """Mixed case other than Capitalized: "mW", "MHz", "iPhone" (an upper-case letter after the
    first, and a lower-case letter somewhere)."""
    rest = word[1:]
    return rest != rest.lower() and word != word.upper()


def _one_letter_repeated(word: str) -> bool:
    """A letter written two or more times, as format codes are ("hhhh", "HH"): its case is
    what it means."""
    return len(word) >= 2 and len(set(word)) == 1 and word.lower() != word.upper()


def _capitals(word: str) -> bool:
    return len(word) >= 2 and word.isupper()


def _unit_or_glued(
    text: str, start: int, flags: int, before: Neighbour | None, after: Neighbour | None
) -> bool:
    """Is a short word's case compared?  After a number across whitespace only (a unit: "5 m",
    "400 Mb"), or glued to a symbol or to a number after it ("A+", "C#", "v1").  (Mixed case,
    "mW", is always compared; 2-3 capitals, "MB", unless a neighbouring word is in capitals too,
    as in a heading where "IN" is just "in": see ``_case_rule``.)"""
    glued = flags & GLUED
    if before is not None:
        before_kind = before[0] & KIND_MASK
        if before_kind in (NUMBER, SCRIPT) and (glued or text[before[1] : start].isspace()):
            return True
        if glued and before_kind == SYMBOL:
            return True
    return after is not None and bool(after[0] & GLUED) and after[0] & KIND_MASK in (SYMBOL, NUMBER)


def _word_in_code(flags: int, before: Neighbour | None, after: Neighbour | None) -> bool:
    """Is a longer word's case compared?  In code: glued to a symbol other than a lone dash
    ("self.Items", "a+Value"),
    to an opening bracket after it ("Print(") or a closing one before it, or to brackets on both
    sides ("(Items)").  Elsewhere it is an ordinary word ("(See below)" = "(see below)")."""
    before_kind = _code_neighbour(before) if flags & GLUED else 0
    after_kind = _code_neighbour(after) if after is not None and after[0] & GLUED else 0
    if SYMBOL in (before_kind, after_kind) or after_kind == OPEN or before_kind == CLOSE:
        return True
    return before_kind in _BRACKETS and after_kind in _BRACKETS


def _code_neighbour(neighbour: Neighbour | None) -> int:
    """The kind of a neighbour, 0 for none and for a lone dash: a hyphen joins ordinary words
    ("Short-circuiting" = "short-circuiting")."""
    if neighbour is None or neighbour[2] == "-":
        return 0
    return neighbour[0] & KIND_MASK


_BRACKETS: Final = frozenset({OPEN, CLOSE})
_NEXT_TO_CODE: Final = frozenset({OPEN, CLOSE, SYMBOL, NUMBER, SCRIPT})
_SPACE_AFTER: Final = regex.compile(r"\s*")


def _letter_is_code(
    text: str,
    start: int,
    end: int,
    flags: int,
    before: Neighbour | None,
    after: Neighbour | None,
) -> bool:
    """Is the case of a one-letter word compared?  In format tables and code "h" and "H", "p"
    and "P" are different things: a lone letter keeps its case glued to a bracket, symbol or
    number on either side ("%H", "(p)", "x2"), between quotation marks ("'h'"), right before
    a colon, comma or semicolon ("b: usize", "f(a, b)"), next to a
    symbol other than a dash on its line ("x = 5"), or alone in a table cell or on a line (a
    tab, a line break or an end of the text on both sides).  Elsewhere it is an ordinary word
    ("A man" = "a man")."""
    before_kind = before[0] & KIND_MASK if before is not None else 0
    after_kind = after[0] & KIND_MASK if after is not None else 0
    glued_before = bool(flags & GLUED) and before is not None
    glued_after = after is not None and bool(after[0] & GLUED)
    if (glued_before and before_kind in _NEXT_TO_CODE) or (
        glued_after and after_kind in _NEXT_TO_CODE
    ):
        return True
    if glued_before and glued_after and before_kind == after_kind == QUOTE:
        return True
    if text.startswith((":", ",", ";"), end):  # "a: usize", "(a, b)"
        return True
    gap_before = text[before[1] : start] if before is not None else "\n"
    space = _SPACE_AFTER.match(text, end)
    gap_after = space.group() if space and space.end() < len(text) and after is not None else "\n"
    if (
        before_kind == SYMBOL and before is not None and before[2] != "-" and "\n" not in gap_before
    ) or (after_kind == SYMBOL and after is not None and after[2] != "-" and "\n" not in gap_after):
        return True
    return _cell_edge(gap_before) and _cell_edge(gap_after)


def _cell_edge(gap: str) -> bool:
    return "\t" in gap or "\n" in gap


def _capital_word(neighbour: Neighbour | None) -> bool:
    return neighbour is not None and neighbour[0] & KIND_MASK == WORD and _capitals(neighbour[2])
