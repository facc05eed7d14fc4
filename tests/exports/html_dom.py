"""The evidence page as a browser would parse it, for the tests: tags, attributes, and the
text inside the elements the tests look at."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

# Every element the page may contain: no script, image, frame, form, object or stylesheet link.
ALLOWED_TAGS = {
    "html", "head", "meta", "title", "style", "body", "header", "main", "footer", "nav", "h1",
    "h2", "h3", "p", "ol", "ul", "li", "a", "article", "section", "blockquote", "mark", "ins",
    "del", "bdi", "code", "time", "strong", "span", "dl", "dt", "dd", "br",
}  # fmt: skip


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
        if tag in ("mark", "ins", "del", "title", "style", "h1"):
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


def parsed(page: str) -> Parsed:
    parser = Parsed()
    parser.feed(page)
    parser.close()
    return parser
