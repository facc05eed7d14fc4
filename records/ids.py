"""Ids people can type: a snapshot or citation named by any unique prefix of 8+ hex digits.

Output shows ``sha256:4d9666c46b4d…``; that, the bare hex, or the full id all name the
snapshot. A prefix that fits several records lists them instead of picking one. A snapshot id
that is none of these (too few digits, not hex) cannot name anything: unusable input, as an
ambiguous prefix is; a well-formed one that names no snapshot is "nothing recorded".
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from records.errors import RecordNotFound
from records.models import Citation, Snapshot
from snapshotter.errors import InputError

MIN_HEX = 8
SHOWN = 10  # candidates listed for an ambiguous prefix
_HEX_PREFIX = re.compile(r"^(?:sha256:)?([0-9a-fA-F]+)$")


def resolve_snapshot_id(session: Session, given: str) -> str:
    """The full snapshot id that ``given`` (full, ``sha256:`` + prefix, or bare prefix) names."""
    text = given.strip().rstrip("…").rstrip(".")
    match = _HEX_PREFIX.match(text)
    if match is None or len(match.group(1)) < MIN_HEX:
        raise InputError(
            f"{given!r} is not a snapshot id: give its id, or at least {MIN_HEX} of its hex digits"
        )
    prefix = "sha256:" + match.group(1).lower()
    return _unique(session, Snapshot.id, prefix, given, "snapshot")


def resolve_citation_id(session: Session, given: str) -> str:
    """The citation id itself, else the one citation whose id starts with ``given`` (at least
    8 hex digits after an optional ``c-``)."""
    if session.get(Citation, given) is not None:
        return given
    text = given.strip().rstrip("…")
    digits = text.removeprefix("c-")
    if len(digits) < MIN_HEX or not re.fullmatch(r"[0-9a-fA-F]+", digits):
        raise RecordNotFound(f"no citation with id {given!r} is recorded")
    return _unique(session, Citation.id, text, given, "citation")


def _unique(session: Session, column: Any, prefix: str, given: str, noun: str) -> str:
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    query = select(column).where(column.like(escaped + "%", escape="\\")).order_by(column)
    found = list(session.scalars(query.limit(SHOWN + 1)))
    if not found:
        raise RecordNotFound(f"no {noun} with an id starting {prefix!r} is recorded")
    if len(found) > 1:
        listed = ", ".join(found[:SHOWN]) + (", …" if len(found) > SHOWN else "")
        raise InputError(f"{given!r} names more than one {noun}: {listed}; give more digits")
    return str(found[0])
