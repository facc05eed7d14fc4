"""Placeholder: the self-contained HTML evidence page is written on another branch, with this
signature; until it is merged, ``snap export --format html`` says so in one line (exit 2)."""

from __future__ import annotations

from records.workspace import Workspace
from snap.errors import InputError


def render_evidence_page(workspace: Workspace, citation_ids: list[str]) -> str:
    raise InputError("html export is not available yet")
