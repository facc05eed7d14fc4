"""The evidence page as a browser would parse it, for the tests: tags, attributes, and the
text inside the elements the tests look at."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

# Every element the page may contain: no image, frame, form, object or stylesheet link, and a
# script only as a JSON data block (``data_blocks``), which browsers never run.
ALLOWED_TAGS = {
    "html", "head", "meta", "title", "style", "body", "header", "main", "footer", "nav", "h1",
    "h2", "h3", "p", "ol", "ul", "li", "a", "article", "section", "blockquote", "mark", "ins",
    "del", "bdi", "code", "time", "strong", "span", "dl", "dt", "dd", "br", "pre", "figure",
    "figcaption", "script",
}  # fmt: skip
SAVED_PREFIX = "data:application/octet-stream;base64,"


@dataclass
class Parsed(HTMLParser):
    """What a browser would build from the page, as far as these tests care."""

    tags: list[tuple[str, dict[str, str | None]]] = field(default_factory=list)
    inside: dict[str, list[str]] = field(default_factory=dict)
    _open: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__(convert_charrefs=True)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag in ("mark", "ins", "del", "title", "style", "h1", "script"):
            self._open.append(tag)
            self.inside.setdefault(tag, []).append("")

    def handle_endtag(self, tag: str) -> None:
        if self._open and self._open[-1] == tag:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for tag in self._open:
            self.inside[tag][-1] += data

    def hrefs(self) -> list[str]:
        return [str(attrs["href"]) for tag, attrs in self.tags if "href" in attrs]

    def links(self) -> list[str]:
        """Every link off the page: neither an anchor within it nor a file it saves."""
        saves = {str(attrs["href"]) for _, attrs in self.saves()}
        return [h for h in self.hrefs() if not h.startswith("#") and h not in saves]

    def saves(self) -> list[tuple[str, dict[str, str | None]]]:
        """The links that save a file the page carries: ``download`` and a ``data:`` URL."""
        return [
            (tag, attrs)
            for tag, attrs in self.tags
            if tag == "a" and str(attrs.get("href")).startswith(SAVED_PREFIX)
        ]

    def saved(self) -> dict[str, bytes]:
        """The files the page carries, by the name each link saves it under."""
        found = {}
        for _, attrs in self.saves():
            assert attrs.get("download"), attrs  # a save, never a navigation to data:
            found[str(attrs["download"])] = base64.b64decode(
                str(attrs["href"]).removeprefix(SAVED_PREFIX), validate=True
            )
        return found

    def data_blocks(self) -> list[Any]:
        """The JSON in each ``<script>``, asserting each is a data block: of type
        application/json, with no source and no ``<`` in its text."""
        scripts = [attrs for tag, attrs in self.tags if tag == "script"]
        assert all(set(a) == {"type", "id"} and a["type"] == "application/json" for a in scripts)
        texts = self.inside.get("script", [])
        assert len(texts) == len(scripts)
        assert not [text for text in texts if "<" in text]
        return [json.loads(text) for text in texts]


def parsed(page: str) -> Parsed:
    parser = Parsed()
    parser.feed(page)
    parser.close()
    return parser
