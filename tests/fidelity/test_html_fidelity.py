"""snap's HTTP extractor against what Chromium shows (``document.body.innerText``).

For each hand-written page (``fidelity_pages``), Chromium loads it from a loopback server
(every other request aborted, no name resolved) and its visible lines, less the page's
navigation and footers, are checked as quotes against snap's stored text of the same bytes.
At least ``MIN_SHARE`` of them must be found, and as many must be whole lines of snap's
text (a table cell's lines not joined); no sentence the page hides may be in snap's text.
The page whose script writes a paragraph is held to a different rule, said in its test: the
HTTP extractor cannot run scripts, which is why the browser capture exists.
The figures are printed at the end of the run.
"""

from __future__ import annotations

import pytest

from snapshotter.extract import extract
from tests.fidelity.browser_text import BrowserText
from tests.fidelity.fidelity_pages import FIDELITY_PAGES, MIN_SHARE, FidelityPage
from tests.fidelity.measure import REPORT, counted_lines, fidelity
from tests.http_fixtures import LoopbackServer
from verifier import check_quote

STATIC_PAGES = [page for page in FIDELITY_PAGES if not page.script_only]
SCRIPTED_PAGES = [page for page in FIDELITY_PAGES if page.script_only]


def snap_text(page: FidelityPage) -> str:
    return extract(page.path, "text/html; charset=utf-8").text or ""


def _browser_text(
    page: FidelityPage, browser: BrowserText, server: LoopbackServer
) -> tuple[str, str]:
    return browser.inner_text(server.url(f"/{page.name}.html"), page.furniture)


@pytest.mark.parametrize("page", STATIC_PAGES, ids=lambda page: page.name)
def test_snap_keeps_what_chromium_shows(
    page: FidelityPage, browser: BrowserText, pages_server: LoopbackServer
) -> None:
    body, furniture = _browser_text(page, browser, pages_server)
    lines = counted_lines(body, furniture)
    assert len(lines) >= 10, "the page should show a reader enough lines to measure"
    figure = fidelity(page.name, lines, snap_text(page))
    REPORT.append((figure, page.shape))
    assert figure.share >= MIN_SHARE, figure.missing
    assert figure.whole_share >= MIN_SHARE, figure.broken


@pytest.mark.parametrize("page", [p for p in FIDELITY_PAGES if p.hidden], ids=lambda p: p.name)
def test_what_the_page_hides_is_hidden_in_chromium_and_absent_from_snap(
    page: FidelityPage, browser: BrowserText, pages_server: LoopbackServer
) -> None:
    body, _ = _browser_text(page, browser, pages_server)
    text = snap_text(page)
    for sentence in page.hidden:
        assert sentence.strip() not in body, "the page itself must hide it"
        assert sentence.strip() not in text
        assert not check_quote(sentence, text).found


@pytest.mark.parametrize("page", [p for p in FIDELITY_PAGES if p.hidden], ids=lambda p: p.name)
def test_hidden_sentences_are_absent_from_snap_without_a_browser(page: FidelityPage) -> None:
    text = snap_text(page)
    assert all(sentence.strip() not in text for sentence in page.hidden)


@pytest.mark.parametrize("page", SCRIPTED_PAGES, ids=lambda page: page.name)
def test_a_paragraph_written_by_script_is_beyond_the_http_extractor(
    page: FidelityPage, browser: BrowserText, pages_server: LoopbackServer
) -> None:
    """Excluded from the MIN_SHARE rule, because the HTTP extractor never runs the page's
    script: what it yields is asserted as it is.  Chromium shows the script's sentence and
    snap's HTTP text does not have it (a quote of it is "not found"; the browser capture is
    the answer); every other line Chromium shows is found."""
    body, furniture = _browser_text(page, browser, pages_server)
    text = snap_text(page)
    for sentence in page.script_only:
        assert sentence in body
        assert not check_quote(sentence, text).found
    everything = fidelity(page.name, counted_lines(body, furniture), text)
    REPORT.append((everything, f"{page.shape} (excluded from the {MIN_SHARE:.0%} rule)"))
    assert set(everything.missing) == set(page.script_only)
    static = fidelity(page.name, counted_lines(body, furniture, page.script_only), text)
    assert static.share == 1.0, static.missing
