"""How the closest passage shows its alignment with the quote: one notation for the text
output and the evidence page (issue 23).

Only the words that really differ are marked, in the order of git's word diff: ``[-word]`` is
in the source but not in the quote (a word the quote drops), ``[+word]`` is in the quote but
not in the source (a word the quote adds, shown at the gap where it would stand), and a
replaced word is both, ``[-source][+quote]``.  The brackets are the first pair of ``MARKS``
that neither the passage nor the quote's words hold, so a bracket inside a word is never
read as a mark; a sign always follows the opening mark, so no mark is ambiguous.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from verifier.closest import Closest, Edit, EditKind

MARKS: Final = (("[", "]"), ("⟨", "⟩"), ("«", "»"), ("⟪", "⟫"))
ADDED: Final = EditKind.ADDED.value
DROPPED: Final = EditKind.DROPPED.value
SAME: Final = EditKind.EQUAL.value
SIGNS: Final = {ADDED: "+", DROPPED: "-"}


@dataclass(frozen=True, slots=True)
class Piece:
    """A run of the shown passage: source text (``equal``), or a marked word or gap."""

    kind: str  # "equal", "added" or "dropped"
    text: str


def rounded_score(closest: Closest) -> float:
    """The closest passage's score as snap shows it, in JSON and in words (four places): the
    text output compares and prints the number ``--json`` gives."""
    return round(closest.score, 4)


def marks_outside(texts: Iterable[str]) -> tuple[str, str]:
    """The first pair of ``MARKS`` that none of ``texts`` holds (the last pair if all do)."""
    shown = "".join(texts)
    return next(
        (pair for pair in MARKS if pair[0] not in shown and pair[1] not in shown), MARKS[-1]
    )


def passage_pieces(text: str, start: int, alignment: Sequence[Edit]) -> list[Piece]:
    """The passage ``text`` (starting at code point ``start`` of the source) cut into source
    text and marked words, from its alignment with the quote (``verifier.Closest.alignment``).
    A gap gets a space on a side where the source has none, so ``[+word]`` never sticks to
    its neighbour."""
    pieces: list[Piece] = []
    cursor = 0
    for edit in alignment:
        a, b = edit.start - start, edit.end - start
        if a > cursor:
            pieces.append(Piece(SAME, text[cursor:a]))
        if edit.kind is EditKind.EQUAL:
            pieces.append(Piece(SAME, text[a:b]))
        elif edit.kind is EditKind.ADDED:
            before = " " if a > 0 and not text[a - 1].isspace() else ""
            after = " " if a < len(text) and not text[a].isspace() else ""
            pieces += [Piece(SAME, before), Piece(ADDED, edit.quote), Piece(SAME, after)]
        else:
            pieces.append(Piece(DROPPED, text[a:b]))
            if edit.kind is EditKind.REPLACE:  # the source's words, then the quote's
                pieces.append(Piece(ADDED, edit.quote))
        cursor = max(cursor, b)
    pieces.append(Piece(SAME, text[cursor:]))
    return [piece for piece in pieces if piece.text or piece.kind != SAME]


def marked_text(text: str, start: int, alignment: Sequence[Edit]) -> str:
    """The passage with its differences in the notation above, as plain text."""
    opening, closing = marks_outside([text, *(edit.quote for edit in alignment)])
    return "".join(
        piece.text if piece.kind == SAME else f"{opening}{SIGNS[piece.kind]}{piece.text}{closing}"
        for piece in passage_pieces(text, start, alignment)
    )
