"""snap for pipelines: open a workspace, capture sources, verify a model's answer, render it.

A thin layer over the same use cases as ``snap fetch`` and ``snap verify`` (``records.capture``,
``records.verify``, the input reader in ``records.inputs``)::

    from snap.api import Workspace

    with Workspace.open() as workspace:              # SNAP_HOME, SNAP_STORE_URL, … as the CLI
        workspace.capture("https://example.org/page")
        verified = workspace.verify_answer("response.json")   # a provider's saved response
        print(verified.rate, verified.render())

``render()`` gives the answer back with quotation marks only around quotes found in the stored
source (the stored span is shown); a quote that was not found loses its marks and is followed
by the closest passage of the source, so a reader never sees an unchecked quotation.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from records.outcome import CitationResult
from records.workspace import Workspace as RecordsWorkspace
from snap.config import Settings
from snapshotter.capture import SnapshotRecord
from verifier.status import Status

CLOSEST = "Closest passage in the source"


def capture_json(record: SnapshotRecord) -> dict[str, Any]:
    """A capture as ``snap fetch --json`` prints it (the one serialiser, ``records.wire``)."""
    from records.wire import stored_capture_json

    return stored_capture_json(record)


def result_json(result: CitationResult) -> dict[str, Any]:
    """One result as ``snap verify --json`` prints it (the one serialiser, ``records.wire``)."""
    from records.wire import citation_result_json

    return citation_result_json(result)


@dataclass(frozen=True)
class VerifiedAnswer:
    """The checked quotes of one answer, in the answer's order."""

    results: tuple[CitationResult, ...]
    asked: tuple[str | None, ...] = ()  # each quote as the answer gave it, in the same order

    @property
    def rate(self) -> float:
        """The share of quotes found word for word (1.0 for an answer that quotes nothing)."""
        if not self.results:
            return 1.0
        return sum(result.passed for result in self.results) / len(self.results)

    @property
    def passed(self) -> bool:
        return all(result.passed for result in self.results)

    def to_json(self) -> list[dict[str, Any]]:
        """Each result as ``snap verify --json`` prints it."""
        return [result_json(result) for result in self.results]

    def render(self) -> str:
        """The answer as Markdown: each claim, then each quote it cites.

        A found quote is shown as stored, in quotation marks, linked to its span
        (``snap://snapshots/ID/text#char=START,END``, RFC 5147's fragment for plain text); a
        quote not found is shown without quotation marks, marked, and followed by the
        closest passage of the source when there is one."""
        lines: list[str] = []
        claim: str | None = None
        asked = self.asked or (None,) * len(self.results)
        for result, quote in zip(self.results, asked, strict=True):
            if result.claim_text and result.claim_text != claim:
                claim = result.claim_text
                lines += ["", claim] if lines else [claim]
            lines.append(render_quote(result, quote))
        return "\n".join(lines) + "\n"


def unproven_because(status: Status) -> str:
    """Why a quote is shown unproven, in words a reader of the answer acts on: "not found"
    only when the text was read and the quote is not in it; a copy that fails its digest or
    seal is evidence that cannot be trusted, which is a different thing to tell a reader."""
    if status is Status.NOT_FOUND:
        return "not found in the source (not_found)"
    meaning = status.meaning.rstrip(".")
    return f"not proven: {meaning[0].lower()}{meaning[1:]} ({status.value})"


def render_quote(result: CitationResult, asked: str | None) -> str:
    outcome = result.outcome
    if result.passed and result.quote is not None and outcome.start is not None:
        link = f"snap://snapshots/{outcome.snapshot_id}/text#char={outcome.start},{outcome.end}"
        return f"> “{result.quote.exact}” ([source]({link}))"
    line = f"> {asked or ''} — {unproven_because(outcome.status)}"
    if outcome.closest is not None:
        line += f"\n>\n> {CLOSEST} (score {outcome.closest.score:.2f}): {outcome.closest.text}"
    return line


class Workspace:
    """One opened snap workspace (database and store), as the CLI opens it from settings."""

    def __init__(self, opened: RecordsWorkspace) -> None:
        self._opened = opened

    @classmethod
    def open(cls, home: str | Path | None = None, **overrides: Any) -> Workspace:
        """From the environment as ``snap`` reads it; ``home`` replaces ``SNAP_HOME`` and
        ``overrides`` any setting (``store_url``, ``database_url``, ``allow_private``, …)."""
        settings = Settings.from_env()
        if home is not None:
            settings = Settings.from_env({**os.environ, "SNAP_HOME": str(home)})
        if overrides:
            settings = settings.with_overrides(**overrides)
        return cls(RecordsWorkspace.open(settings))

    def capture(self, url: str) -> SnapshotRecord:
        """Capture a web page write-once (only absolute http(s) URLs, the configured guard)."""
        from records.capture import capture_source

        return capture_source(self._opened, url, web_only=True)

    def text(self, snapshot_id: str) -> str:
        """A snapshot's stored text, re-hashed on the way out (as ``snap show``)."""
        from records.show import show

        return show(self._opened, snapshot_id, what="text").text or ""

    def verify_answer(
        self,
        response: str | Path | bytes | dict[str, Any] | list[Any],
        *,
        documents: Mapping[str, str] | list[str] | None = None,
    ) -> VerifiedAnswer:
        """Verify every quote of an answer: a provider's response or a snap answer document,
        given as a file path, its bytes, or the parsed JSON. ``documents``, as
        ``snap verify --documents``: the URL or snapshot id of each document the model was
        given, by index (a list, in order) or title."""
        from records.inputs import load_verify_input, verify_input_from_bytes
        from records.inputs.documents import NO_DOCUMENTS, parse_document_map
        from records.verify import verify_citations

        mapped = NO_DOCUMENTS if documents is None else parse_document_map(documents)
        if isinstance(response, str | Path):
            given = load_verify_input(Path(response), mapped)
        elif isinstance(response, bytes):
            given = verify_input_from_bytes(response, "the response", mapped)
        else:
            data = json.dumps(response, ensure_ascii=False).encode("utf-8")
            given = verify_input_from_bytes(data, "the response", mapped)
        report = verify_citations(self._opened, given)
        asked = tuple(r.quote.exact if r.quote else None for r in given.requests)
        return VerifiedAnswer(tuple(report.results), asked)

    def close(self) -> None:
        self._opened.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
