"""Claims: the words of an answer a citation is attached to, with their span in the answer in
all three offset units. Shared by the provider adapters."""

from __future__ import annotations

import re
from typing import Any

from records.inputs.model import Claim
from records.offset_units import span_units
from verifier.errors import OffsetError

# a sentence ends at its mark and white space, with any reference markers between the two:
# "…every Tuesday.[1] Purge…" ends after "Tuesday."
_END_AND_MARKERS = r"[.!?。！？](?:\[\d+\])*"
SENTENCE_END = re.compile(_END_AND_MARKERS + r"\s|\n")
MARKS_AFTER_END = re.compile(_END_AND_MARKERS + r"\Z")
# an inline Markdown link, alone or in parentheses: "([example.org](https://example.org/…))"
INLINE_LINK = re.compile(r"\s*\(?\s*\[[^\]\n]*\]\([^)\s]*\)\s*\)?\s*")


def claim_at(answer: str, start: int, end: int) -> Claim | None:
    """``answer[start:end]`` (code points) as a claim, ``None`` when the span is not in it."""
    try:
        span = span_units(answer, start, end)
    except OffsetError:
        return None
    text = answer[start:end]
    return Claim(text, span) if text.strip() else None


def sentence_around(answer: str, index: int) -> tuple[int, int]:
    """The sentence of ``answer`` holding (or just ending at) code point ``index``."""
    index = max(0, min(index, len(answer)))
    start = 0
    for match in SENTENCE_END.finditer(answer, 0, max(index - 1, 0)):
        start = match.end()
    found = SENTENCE_END.search(answer, index)
    end = found.start() + 1 if found else len(answer)
    return start, min(max(end, index), len(answer))


def sentence_claim(answer: str, index: int) -> Claim | None:
    return stripped_claim(answer, *sentence_around(answer, index))


def stripped_claim(answer: str, start: int, end: int) -> Claim | None:
    """``answer[start:end]`` without the white space at either end, as a claim."""
    while start < end and answer[start].isspace():
        start += 1
    while end > start and answer[end - 1].isspace():
        end -= 1
    return claim_at(answer, start, end)


def linked_claim(answer: str, start: int, end: int) -> Claim | None:
    """The claim an annotated span stands for. When the span is an inline link (OpenAI's
    ``url_citation`` annotates ``([domain](url))``, not the words it supports), the claim is
    the sentence the link is attached to, up to the link; else the span itself.

    "Blue skies. ([a.org](https://a.org/))" and "Blue skies ([a.org](https://a.org/))." both
    give "Blue skies…"; a link opening a sentence gives the rest of that sentence."""
    if not 0 <= start <= end <= len(answer) or not INLINE_LINK.fullmatch(answer, start, end):
        return claim_at(answer, start, end)
    before = len(answer[:start].rstrip())
    first = 0
    for match in SENTENCE_END.finditer(answer, 0, before - 1 if before else 0):
        first = match.end()
    if answer[first:before].strip():
        return stripped_claim(answer, first, before)
    after = SENTENCE_END.search(answer, end)
    return stripped_claim(answer, end, after.start() + 1 if after else len(answer))


def marker_claim(answer: str, number: int) -> Claim | None:
    """The first sentence carrying the reference marker ``[number]`` (Perplexity style). A
    marker written after a sentence's full stop ("…Tuesday.[1] Purge…") belongs to that
    sentence, not to the one it stands before."""
    found = re.search(rf"\[{number}\]", answer)
    if found is None:
        return None
    after_end = MARKS_AFTER_END.search(answer, 0, found.start())
    return sentence_claim(answer, after_end.start() if after_end else found.start())


def claim_details(claim: Claim | None, problem: str | None = None) -> dict[str, Any]:
    return {} if claim is not None or problem is None else {"claimProblem": problem}
