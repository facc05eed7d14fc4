"""HTML: the main text of a page, via trafilatura with every output-changing setting pinned.

The settings are fixed here (not read from a trafilatura settings file or the library's
mutable global config), and each one that changes the output is named in the extractor id,
so a text hash can always be reproduced by the same extractor id.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from snapshotter.extract.result import Extraction, with_text
from snapshotter.extract.sniff import bom_encoding, declared_charset

if TYPE_CHECKING:
    from configparser import ConfigParser

# Output-changing trafilatura options, in the order they appear in the extractor id.
HTML_SETTINGS: dict[str, bool | str] = {
    "fmt": "txt",
    "tables": True,
    "comments": False,
    "links": False,
    "images": False,
    "formatting": False,
    "precision": False,
    "recall": False,
    "fast": False,
    "dedup": False,
}


def html_extractor_id() -> str:
    import trafilatura

    settings = ",".join(
        f"{name}={int(value) if isinstance(value, bool) else value}"
        for name, value in HTML_SETTINGS.items()
    )
    return f"trafilatura@{trafilatura.__version__}+{settings}"


@cache
def _pinned_config() -> ConfigParser:
    """A private copy of trafilatura's packaged defaults, immune to global changes."""
    from trafilatura.settings import use_config

    return use_config()


def _html_input(data: bytes, declared: str | None) -> bytes | str:
    """Decode by BOM or by the HTTP charset (which outranks a <meta> charset, as in browsers);
    otherwise hand trafilatura the bytes so it can read the document's own declaration."""
    for encoding in (bom_encoding(data), declared_charset(declared)):
        if encoding is None:
            continue
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return data


def extract_html(data: bytes, declared: str | None) -> Extraction:
    import trafilatura

    text = trafilatura.extract(
        _html_input(data, declared),
        output_format=str(HTML_SETTINGS["fmt"]),
        include_tables=bool(HTML_SETTINGS["tables"]),
        include_comments=bool(HTML_SETTINGS["comments"]),
        include_links=bool(HTML_SETTINGS["links"]),
        include_images=bool(HTML_SETTINGS["images"]),
        include_formatting=bool(HTML_SETTINGS["formatting"]),
        favor_precision=bool(HTML_SETTINGS["precision"]),
        favor_recall=bool(HTML_SETTINGS["recall"]),
        fast=bool(HTML_SETTINGS["fast"]),
        deduplicate=bool(HTML_SETTINGS["dedup"]),
        with_metadata=False,
        config=_pinned_config(),
    )
    # trafilatura returns None when it finds no main text: that is an empty page for us.
    return with_text("text/html", text or "", html_extractor_id())
