"""What a document served over HTTP may say about the server: nothing of where it keeps things.

The CLI's ``--json`` documents name the store's location (``file:///srv/snap/store``, an S3
bucket and prefix), each blob's key, and the local path of a captured file; messages name them
too ("no raw blob … in file:///…"). The operator needs those; a client does not, and they map
the server's disk. Served documents keep their shape, with:

- ``store``: the kind of store only (``file``, ``s3``);
- a blob state's ``key``: left out (the digest names the blob);
- a local file capture's provenance ``path``: the file's name only;
- in every message (``detail``, ``reason``, ``error``): SNAP_HOME, the store locations and the
  database URL replaced by ``<SNAP_HOME>``, ``<store>``, ``<database>``, and a blob key by
  "the raw blob sha256:…".

Evidence itself (quotes, texts, URLs, headers) is never rewritten.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit

from snap.config import Settings

MESSAGE_FIELDS = frozenset({"detail", "reason", "error"})
BLOB_KEY = re.compile(r"\S*?\b(raw|text|headers)/sha256/[0-9a-f]{2}/([0-9a-f]{64})")


class Redactor:
    """The server's own locations, and how each is shown to a client."""

    def __init__(self, settings: Settings) -> None:
        self.replacements: dict[str, str] = {}
        self.add(str(settings.store_url), "<store>")
        self.add(settings.database_url, "<database>")
        self.add(password_hidden(settings.database_url), "<database>")
        self.add(str(settings.home), "<SNAP_HOME>")

    def add(self, location: str, shown: str) -> None:
        with_paths(self.replacements, location, shown)

    def message(self, text: str, extra: Iterable[str] = ()) -> str:
        """``text`` with every location and blob key of the server replaced."""
        replacements = dict(self.replacements)
        for location in extra:
            with_paths(replacements, location, "<store>")
        for location in sorted(replacements, key=len, reverse=True):
            text = text.replace(location, replacements[location])
        return BLOB_KEY.sub(lambda m: f"the {m.group(1)} blob sha256:{m.group(2)}", text)

    def document(self, document: Any) -> Any:
        """A copy of ``document`` fit to serve, made in one walk: its messages are rewritten
        at the end, once every store location the document names is known (a message may
        name a store that only a later part of the document lists)."""
        stores: set[str] = set()
        messages: list[tuple[dict[str, Any], str, str]] = []
        shown = self._public(document, stores, messages)
        for holder, key, text in messages:
            holder[key] = self.message(text, stores)
        return shown

    def _public(
        self, value: Any, stores: set[str], messages: list[tuple[dict[str, Any], str, str]]
    ) -> Any:
        """``value`` copied with its locations hidden; the store locations it names are added
        to ``stores``, and its message fields to ``messages`` (left as they are here)."""
        if isinstance(value, list):
            return [self._public(item, stores, messages) for item in value]
        if not isinstance(value, dict):
            return value
        shown: dict[str, Any] = {}
        for key, item in value.items():
            if isinstance(item, str):
                if key == "key" and "digest" in value:
                    continue
                if key == "store":
                    stores.add(item)
                    item = store_kind(item)
                elif key == "path" and value.get("source") == "file":
                    item = PurePosixPath(item).name
                elif key in MESSAGE_FIELDS:
                    messages.append((shown, key, item))
                shown[key] = item
            elif key == "key" and "digest" in value:
                self._public(item, stores, [])  # left out, but a store it names is hidden too
            else:
                shown[key] = self._public(item, stores, messages)
        return shown


def password_hidden(url: str) -> str:
    """The database URL as snap's messages show it (SQLAlchemy's form, password as ***)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url


def with_paths(replacements: dict[str, str], location: str, shown: str) -> None:
    """``location`` shown as ``shown``, as a path and as a ``file://`` URI alike."""
    if not location:
        return
    replacements.setdefault(location, shown)
    if location.startswith("file://"):
        replacements.setdefault(unquote(urlsplit(location).path), shown)
    elif location.startswith("/"):
        replacements.setdefault(PurePosixPath(location).as_uri(), shown)


def store_kind(location: str) -> str:
    """``s3`` for ``s3://bucket/prefix``, ``file`` for a folder."""
    scheme, separator, _ = location.partition("://")
    return scheme if separator else "file"
