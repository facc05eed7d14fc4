"""Which stored source a provider's document reference means.

A model cites documents by index, title, file id or search-result source; snap only checks
against snapshots it has stored. A ``--documents`` mapping file says, for each such key, the
URL (captured, or to capture with ``--fetch``) or the snapshot id:
``{"0": "https://example.org/report", "Annual report": "sha256:…", "file-abc": "https://…"}``
(a JSON list maps document indices in order).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from records.inputs.fields import Field
from records.inputs.reader import load_json_input
from snapshotter.errors import InputError

SNAPSHOT_PREFIX = "sha256:"


@dataclass(frozen=True)
class Source:
    """A cited source as snap can check it, or why it cannot be."""

    url: str | None = None
    snapshot_id: str | None = None
    problem: str | None = None  # set when neither is known


@dataclass(frozen=True)
class DocumentMap:
    entries: Mapping[str, Source] = field(default_factory=dict)

    def lookup(self, *keys: object) -> Source | None:
        """The first mapped key of ``keys`` (indices as strings, titles, file ids)."""
        for key in keys:
            if key is not None and str(key) in self.entries:
                return self.entries[str(key)]
        return None


NO_DOCUMENTS = DocumentMap()


def source_of(value: Field) -> Source:
    if isinstance(value.value, dict):
        url = value.child("url").optional_str()
        snapshot_id = value.child("snapshotId").optional_str()
        if url is None and snapshot_id is None:
            raise value.fail("expected a 'url' or a 'snapshotId'")
        return Source(url, snapshot_id)
    text = value.text()
    return Source(snapshot_id=text) if text.startswith(SNAPSHOT_PREFIX) else Source(url=text)


def parse_document_map(document: object) -> DocumentMap:
    root = Field(document)
    if isinstance(document, list):
        return DocumentMap({str(n): source_of(item) for n, item in enumerate(root.items())})
    return DocumentMap({key: source_of(root.child(key)) for key in root.obj()})


def load_document_map(path: Path | None) -> DocumentMap:
    """The ``--documents`` file, read by the one input reader."""
    if path is None:
        return NO_DOCUMENTS
    try:
        return parse_document_map(load_json_input(path))
    except InputError as error:
        message = error.message
        prefix = f"{path}: "
        raise InputError(f"--documents {prefix}{message.removeprefix(prefix)}") from None
