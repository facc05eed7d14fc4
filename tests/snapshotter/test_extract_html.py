"""HTML extraction: the article survives, the page furniture does not, and the id is exact."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import trafilatura

from snapshotter.extract import FLAG_TOO_SHORT, extract, html_extractor_id
from snapshotter.fetch import FetchOptions, fetching
from tests.http_fixtures import LoopbackServer

ARTICLE = [
    "A three-year study of the city harbour found that plastic waste collected from the water"
    " fell by 42 percent between 2021 and 2024, the port authority said on Monday.",
    "The researchers counted 18,400 items in the first year and 10,672 items in the last year,"
    " sampling the same twelve sites every month with the same nets and the same volunteers.",
    "The authority plans to extend the sampling to the river mouth next spring and will publish"
    " the raw counts online.",
]

PAGE = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Harbour study finds 42% drop in plastic waste</title>
<script>window.dataLayer = window.dataLayer || []; function gtag(){{}}</script>
<style>.cookie-consent {{ position: fixed; }}</style>
</head>
<body>
<div id="cookie-banner" class="cookie-consent">
  <p>We use cookies to improve your experience. By continuing you accept our cookie policy.</p>
  <button>Accept all cookies</button>
</div>
<header>
  <nav class="main-nav"><ul>
    <li><a href="/">Home</a></li><li><a href="/news">News</a></li>
    <li><a href="/sport">Sport</a></li><li><a href="/weather">Weather forecast</a></li>
  </ul></nav>
</header>
<main>
<article>
  <h1>Harbour study finds 42% drop in plastic waste</h1>
  <p>{ARTICLE[0]}</p>
  <p>{ARTICLE[1]}</p>
  <p>"We did not expect the decline to be this steep," said Dr. Amal Rahman, who led the
  survey. She attributed most of the fall to the deposit scheme introduced in 2022.</p>
  <table><tr><th>Year</th><th>Items</th></tr>
  <tr><td>2021</td><td>18400</td></tr><tr><td>2024</td><td>10672</td></tr></table>
  <p>{ARTICLE[2]}</p>
</article>
</main>
<aside class="related"><h3>Related stories</h3><ul>
  <li><a href="/x">Ferry timetable changes</a></li><li><a href="/y">New cycle lane opens</a></li>
</ul></aside>
<footer><p>© 2025 Harbour Gazette. All rights reserved.</p>
<a href="/privacy">Privacy</a> <a href="/terms">Terms of use</a></footer>
</body>
</html>
"""

JS_SHELL = """<!doctype html><html><head><title>App</title>
<script src="/static/bundle.3f9a.js"></script></head>
<body><div id="root"></div><noscript>You need to enable JavaScript to run this app.</noscript>
</body></html>"""

LOGIN_WALL = """<!doctype html><html><head><title>Sign in</title></head><body>
<form action="/login" method="post"><h2>Please sign in to continue reading</h2>
<input name="user"><input name="password" type="password"><button>Sign in</button></form>
</body></html>"""


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
    assert "| 2024 | 10672 |" in text  # tables are included
    for furniture in ("cookies", "Accept all", "Weather forecast", "Related stories",
                      "Ferry timetable", "All rights reserved", "Terms of use", "dataLayer"):
        assert furniture not in text
    assert flags == ()
    assert content_type == "text/html"


@pytest.mark.parametrize("declared", ["text/plain", "application/octet-stream", None])
def test_html_is_sniffed_whatever_the_header_says(
    http_server: LoopbackServer, options: Callable[..., FetchOptions], declared: str | None
) -> None:
    text, _, content_type = _served_extraction(http_server, options(), PAGE.encode(), declared)
    assert content_type == "text/html"
    assert text is not None and ARTICLE[0] in text


@pytest.mark.parametrize("page", [JS_SHELL, LOGIN_WALL], ids=["js-shell", "login-wall"])
def test_pages_without_real_text_are_flagged_too_short(
    http_server: LoopbackServer, options: Callable[..., FetchOptions], page: str
) -> None:
    text, flags, _ = _served_extraction(http_server, options(), page.encode(), "text/html")
    assert flags == (FLAG_TOO_SHORT,)
    assert text is not None and len(text) < 200


def test_http_charset_outranks_a_wrong_meta_charset(tmp_path: Path) -> None:
    body = PAGE.replace("Dr. Amal Rahman", "Dr. Zoë Müller").encode("windows-1252")
    path = tmp_path / "page.html"
    path.write_bytes(body)
    result = extract(path, "text/html; charset=windows-1252")  # the <meta> still says utf-8
    assert result.text is not None and "Dr. Zoë Müller" in result.text


def test_meta_charset_is_used_without_a_declared_one(tmp_path: Path) -> None:
    page = PAGE.replace('<meta charset="utf-8">', '<meta charset="windows-1252">')
    path = tmp_path / "page.html"
    path.write_bytes(page.replace("Dr. Amal Rahman", "Dr. Zoë Müller").encode("windows-1252"))
    result = extract(path, None)
    assert result.text is not None and "Dr. Zoë Müller" in result.text


def test_extractor_id_names_version_and_settings(tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    path.write_text(PAGE, encoding="utf-8")
    result = extract(path, "text/html")
    assert result.extractor == html_extractor_id()
    assert result.extractor.startswith(f"trafilatura@{trafilatura.__version__}+fmt=txt,tables=1,")
    assert "comments=0" in result.extractor
    assert "dedup=0" in result.extractor


def test_same_page_twice_gives_the_same_text(tmp_path: Path) -> None:
    """trafilatura can deduplicate across calls; snap turns that off, so nothing carries over."""
    path = tmp_path / "page.html"
    path.write_text(PAGE, encoding="utf-8")
    first = extract(path, "text/html")
    second = extract(path, "text/html")
    assert first.text == second.text
    assert first.text is not None and ARTICLE[2] in first.text
