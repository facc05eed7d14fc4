"""HTML extraction: the article survives, the page furniture does not, and the id is exact."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import trafilatura

from snapshotter.extract import FLAG_TOO_SHORT, extract
from snapshotter.extract.html import html_extractor_id
from snapshotter.fetch import FetchOptions, fetching
from tests.http_fixtures import LoopbackServer
from tests.snapshotter.samples import ARTICLE, JS_SHELL, LOGIN_WALL, PAGE


def _served_extraction(
    server: LoopbackServer, options: FetchOptions, body: bytes, content_type: str | None
) -> tuple[str | None, tuple[str, ...], str]:
    server.route("/doc", body=body, content_type=content_type)
    with fetching(server.url("/doc"), options) as fetched:
        result = extract(fetched.path, fetched.declared_content_type)
    return result.text, result.flags, result.content_type


def test_article_text_is_kept_and_page_furniture_dropped(
    http_server: LoopbackServer, options: Callable[..., FetchOptions]
) -> None:
    text, flags, content_type = _served_extraction(
        http_server, options(), PAGE.encode(), "text/html; charset=utf-8"
    )
    assert text is not None
    for paragraph in ARTICLE:
        assert paragraph in text
    assert "2024\t10672" in text  # tables are included, cells separated by a tab
    assert "|" not in text  # no separator that is not on the page
    for furniture in (
        "cookies",
        "Accept all",
        "Weather forecast",
        "Related stories",
        "Ferry timetable",
        "All rights reserved",
        "Terms of use",
        "dataLayer",
    ):
        assert furniture not in text
    assert flags == ()
    assert content_type == "text/html"


@pytest.mark.parametrize("declared", ["text/plain", "application/octet-stream", None])
def test_html_is_sniffed_whatever_the_header_says(
    http_server: LoopbackServer, options: Callable[..., FetchOptions], declared: str | None
) -> None:
    text, _, content_type = _served_extraction(http_server, options(), PAGE.encode(), declared)
    assert content_type == "text/html"
    assert text is not None
    assert ARTICLE[0] in text


@pytest.mark.parametrize("page", [JS_SHELL, LOGIN_WALL], ids=["js-shell", "login-wall"])
def test_pages_without_real_text_are_flagged_too_short(
    http_server: LoopbackServer, options: Callable[..., FetchOptions], page: str
) -> None:
    text, flags, _ = _served_extraction(http_server, options(), page.encode(), "text/html")
    assert flags == (FLAG_TOO_SHORT,)
    assert text is not None
    assert len(text) < 200


def test_http_charset_outranks_a_wrong_meta_charset(tmp_path: Path) -> None:
    body = PAGE.replace("Dr. Amal Rahman", "Dr. Zoë Müller").encode("windows-1252")
    path = tmp_path / "page.html"
    path.write_bytes(body)
    result = extract(path, "text/html; charset=windows-1252")  # the <meta> still says utf-8
    assert result.text is not None
    assert "Dr. Zoë Müller" in result.text


def test_meta_charset_is_used_without_a_declared_one(tmp_path: Path) -> None:
    page = PAGE.replace('<meta charset="utf-8">', '<meta charset="windows-1252">')
    path = tmp_path / "page.html"
    path.write_bytes(page.replace("Dr. Amal Rahman", "Dr. Zoë Müller").encode("windows-1252"))
    result = extract(path, None)
    assert result.text is not None
    assert "Dr. Zoë Müller" in result.text


def test_extractor_id_names_version_and_settings(tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    path.write_text(PAGE, encoding="utf-8")
    result = extract(path, "text/html")
    assert result.extractor == html_extractor_id()
    assert result.extractor.startswith(
        "snap-html@2+hidden=drop,css=style1,sup=uni1,cells=tab+lines,"
    )
    assert f",trafilatura@{trafilatura.__version__}+fmt=xml,tables=1," in result.extractor
    assert "comments=0" in result.extractor
    assert "dedup=0" in result.extractor


def test_same_page_twice_gives_the_same_text(tmp_path: Path) -> None:
    """trafilatura can deduplicate across calls; snap turns that off, so nothing carries over."""
    path = tmp_path / "page.html"
    path.write_text(PAGE, encoding="utf-8")
    first = extract(path, "text/html")
    second = extract(path, "text/html")
    assert first.text == second.text
    assert first.text is not None
    assert ARTICLE[2] in first.text
