"""What a batch item did, typed by its batch's kind, and the one text form its row keeps.

A done item's ``result`` column is one ``Text`` for every kind, and what it holds depends on
the kind: a capture's snapshot id, a re-verification's sentence of counts, a re-extraction's
extraction ids as a JSON list. The columns and their contents are as they were before this
module (rows written by any version of snap read back); the code inside reads and writes
them only here, as a small tagged type (``Captured``, ``Reverified``, ``Reextracted``, each
naming its ``kind``), so no caller parses a sentence or a JSON string it did not write.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import ClassVar, Final

from records.errors import DatabaseError
from records.vocabulary import BatchKind


@dataclass(frozen=True)
class Captured:
    """A capture item: the snapshot it stored (recorded with the capture, in one
    transaction)."""

    kind: ClassVar[BatchKind] = BatchKind.CAPTURE
    snapshot_id: str

    def stored(self) -> str:
        return self.snapshot_id


@dataclass(frozen=True)
class Reverified:
    """A re-verification item (one snapshot group): how many of its citations were checked
    and passed, and how many were no longer recorded when it ran."""

    kind: ClassVar[BatchKind] = BatchKind.REVERIFY
    checked: int
    passed: int
    missing: int = 0

    def stored(self) -> str:
        gone = f", {self.missing} no longer recorded" if self.missing else ""
        return f"{self.checked} checked, {self.passed} passed{gone}"


@dataclass(frozen=True)
class Reextracted:
    """A re-extraction item (one snapshot): the extractions it made or found already made."""

    kind: ClassVar[BatchKind] = BatchKind.REEXTRACT
    extraction_ids: tuple[int, ...]

    def stored(self) -> str:
        return json.dumps(list(self.extraction_ids))


ItemResult = Captured | Reverified | Reextracted
REVERIFIED: Final = re.compile(r"(\d+) checked, (\d+) passed(?:, (\d+) no longer recorded)?")


class UnreadableResult(DatabaseError):
    """A done item's stored result is not what its batch's kind writes: the records were
    changed by something other than snap."""


def read_item_result(kind: BatchKind, stored: str) -> ItemResult:
    """The typed result of a done item of a batch of ``kind``, from its ``result`` column."""
    if kind is BatchKind.CAPTURE:
        return Captured(stored)
    if kind is BatchKind.REVERIFY:
        counts = REVERIFIED.fullmatch(stored)
        if counts is None:
            raise UnreadableResult(f"a re-verification item's result reads {stored[:100]!r}")
        checked, passed, missing = counts.groups()
        return Reverified(int(checked), int(passed), int(missing or 0))
    try:
        ids = json.loads(stored)
    except ValueError:
        ids = None
    if not isinstance(ids, list) or not all(type(i) is int for i in ids):
        raise UnreadableResult(f"a re-extraction item's result reads {stored[:100]!r}")
    return Reextracted(tuple(ids))
