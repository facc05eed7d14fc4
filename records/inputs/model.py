"""The one internal citation request every input adapter produces."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from records.vocabulary import RequestKind
from verifier import TextQuoteSelector

QUOTED: Final = RequestKind.QUOTED  # the citation carries the quoted words: they are checked
UNQUOTED: Final = RequestKind.UNQUOTED  # the citation names a source but quotes nothing
SNIPPET: Final = RequestKind.SNIPPET  # a search-engine excerpt: never promised verbatim


@dataclass(frozen=True)
class Position:
    start: int
    end: int
    unit: str  # "codepoint" | "utf16"


@dataclass(frozen=True)
class Claim:
    """What the answer says, apart from what it quotes: the text and its span in the answer,
    in all three offset units (see ``records.offset_units``)."""

    text: str
    span: Mapping[str, Mapping[str, int]] | None = None


@dataclass(frozen=True)
class CitationRequest:
    """One citation to check, as the input gave it."""

    label: str  # where it came from, as a JSON path, for messages
    quote: TextQuoteSelector | None  # None only for UNQUOTED citations
    citation_id: str | None = None
    url: str | None = None
    snapshot_id: str | None = None
    position: Position | None = None
    page: str | None = None
    hashes: Mapping[str, str] | None = None
    claim_text: str | None = None
    answer_id: str | None = None
    kind: str = QUOTED
    claim: Claim | None = None
    details: Mapping[str, Any] = field(default_factory=dict)  # provider, citation type, hints


@dataclass(frozen=True)
class GivenDocument:
    """A source the model was given (cited or not): where a misattributed quote may be."""

    index: int | None
    url: str | None = None
    snapshot_id: str | None = None


@dataclass(frozen=True)
class VerifyInput:
    requests: tuple[CitationRequest, ...]
    is_answer: bool = False
    answer_id: str | None = None
    origin: str | None = None  # the file it came from, named in every later input error
    input_format: str = "snap"
    documents: tuple[GivenDocument, ...] = ()  # every source of the response, for foundElsewhere
