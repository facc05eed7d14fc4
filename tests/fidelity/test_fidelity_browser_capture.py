"""snap's browser capture against what Chromium shows, page by fidelity page.

Each hand-written page (``fidelity_pages``) is captured with ``snap``'s browser capture from a
loopback server (every request of the page answered by snap's guarded fetcher), and its stored
rendered text (the ``rendered`` extraction) is checked with snap's verifier: every visible line
of the page, as a Chromium loading the page directly shows it (``document.body.innerText``,
furniture included: the rendered text leaves nothing out), is found; every sentence the page
hides is not; and the paragraph a script writes, beyond the HTTP extractor, is found.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from records.capture import capture_source
from records.models import Extraction
from records.workspace import Workspace
from snap.config import Settings
from snapshotter.browser.chromium import find_executable
from snapshotter.browser.session import BrowserSession
from tests.browser.conftest import home_env
from tests.fidelity.browser_text import BrowserText
from tests.fidelity.fidelity_pages import FIDELITY_PAGES, FidelityPage
from tests.fidelity.measure import visible_lines
from tests.http_fixtures import LoopbackServer
from verifier import check_quote, prepare


@pytest.fixture(scope="module")
def session() -> Iterator[BrowserSession]:
    found = find_executable(None)
    if found is None:
        pytest.skip(
            "SKIPPED LOUDLY: Debian's chromium is not installed; tests/run.sh installs it "
            "(apt-get install -y chromium) before pytest, or install it yourself"
        )
    shared = BrowserSession(found)
    yield shared
    shared.close()


@pytest.fixture
def workspace(tmp_path: Path, session: BrowserSession) -> Iterator[Workspace]:
    """A snap home on SQLite allowed to fetch from loopback, using the module's browser."""
    opened = Workspace.open(Settings.from_env(home_env(tmp_path / "home")))
    opened._browser = session
    yield opened
    opened._browser = None  # the session outlives the workspace
    opened.close()


def rendered_text(workspace: Workspace, url: str) -> str:
    """The rendered extraction of a browser capture of ``url``, as stored."""
    record = capture_source(workspace, url, method="browser")
    assert record.method == "browser"
    assert record.rendered is not None, "a browser capture of HTML has a rendered text"
    with workspace.db.reading() as reading:
        sources = [e.source for e in reading.query(Extraction).order_by(Extraction.id)]
    assert sources == ["raw", "rendered"]
    return workspace.store.get("text", record.rendered.text_hash).decode()


@pytest.mark.parametrize("page", FIDELITY_PAGES, ids=lambda page: page.name)
def test_the_browser_capture_finds_every_visible_line_and_no_hidden_one(
    page: FidelityPage,
    browser: BrowserText,
    pages_server: LoopbackServer,
    workspace: Workspace,
) -> None:
    url = pages_server.url(f"/{page.name}.html")
    shown, _ = browser.inner_text(url)
    lines = visible_lines(shown)
    assert len(lines) >= 5, "the page should show a reader enough lines to check"
    text = rendered_text(workspace, url)
    source = prepare(text)
    missing = [line for line in lines if not source.check(line).found]
    assert missing == []
    for sentence in page.hidden:
        assert sentence.strip() not in shown, "the page itself must hide it"
        assert sentence.strip() not in text
        assert not check_quote(sentence, text).found
    for sentence in page.script_only:
        assert sentence in shown
        assert check_quote(sentence, text).found, "the browser capture ran the page's script"
