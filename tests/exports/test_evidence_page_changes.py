"""The evidence page of a citation whose source changed, and of page text with bidi controls.

Each test here failed before the fix it names (issue 20)."""

from __future__ import annotations

import re
from pathlib import Path

from pypdf import PdfReader

from tests.exports.conftest import ARTICLE, FOUND, Home, recorded_article
from tests.exports.html_dom import parsed
from tests.exports.test_evidence_page_browser import (  # noqa: F401  (fixture)
    ARTIFACTS,
    chromium,
    from_the_page,
    run_chromium,
)
from tests.http_fixtures import LoopbackServer
from verifier.status import Status

NEWER = ARTICLE.replace(FOUND, "the origin serves only 1 request in 20")
RLO = "\u202e"
HOSTILE = ARTICLE.replace("A cache hit ratio of 90 percent", f"A cache {RLO}hit ratio of 90")


def test_a_source_changed_citation_says_which_copy_has_the_quote_and_shows_both(
    home: Home, http_server: LoopbackServer
) -> None:
    url = recorded_article(home, http_server)
    [cited] = home.verify({"citationId": "c-cdn", "url": url, "quote": FOUND})
    assert cited["status"] == "quote_found"
    cited_at = home.snap_json("audit", "c-cdn")[1]["captures"][0]["fetchedAt"]
    http_server.route("/cdn", body=NEWER.encode())
    home.fetch(url)
    newer = home.snap_json("audit", "--url", url)[1]["captures"][-1]
    code, report = home.snap_json("reverify")
    assert code == 1
    assert [r["status"] for r in report["results"]] == ["source_changed"]

    page = home.page("c-cdn")
    dom = parsed(page)
    assert "0 of 1 quote found in the stored copy" not in page
    assert "found in the copy cited but not in a newer copy (the source changed)" in page
    words = " ".join(re.sub(r"<[^>]+>", "", page).split())
    assert (
        f"The quote is in the copy cited, captured {cited_at} ({cited['snapshotId']}), but not"
        f" in the copy captured {newer['fetchedAt']} ({newer['snapshotId']})."
    ) in words
    # Its meaning is said once, in those words, not repeated from the status and the reason
    # (the timeline below still lists each check with its reason).
    verdict = page[page.index('class="verdict') : page.index("<section>", page.index("<article"))]
    assert Status.SOURCE_CHANGED.meaning not in verdict
    assert "but not in the latest capture" not in verdict
    # Both passages: the quote marked in the copy cited, the newer copy's words beside it.
    assert dom.inside["mark"] == [FOUND]
    # the newer copy's word struck through, the quote's word beside it (the alignment)
    assert dom.inside["del"] == ["[-20]"]
    assert dom.inside["ins"] == ["[+10]"]
    assert f"In the copy cited, captured {cited_at}" in words
    assert f"In the copy captured {newer['fetchedAt']} (the latest)" in words


def test_a_right_to_left_override_in_the_page_text_cannot_move_the_marked_quote(
    home: Home, http_server: LoopbackServer
) -> None:
    """U+202E before the quote, unterminated: without isolation it reorders everything after
    it on the line, the marked quote included. Each stretch of page text sits in its own
    ``<bdi>``, which the override cannot leave; the mark is outside both."""
    url = recorded_article(home, http_server, HOSTILE)
    [result] = home.verify({"citationId": "c-rlo", "url": url, "quote": FOUND})
    assert result["status"] == "quote_found"
    page = home.page("c-rlo")
    [excerpt] = re.findall(r'<p class="excerpt">(.*?)</p>', page, flags=re.DOTALL)
    parts = re.fullmatch(r"(.*)<mark>(.*)</mark>(.*)", excerpt, flags=re.DOTALL)
    assert parts is not None, excerpt
    before, marked, after = parts.groups()
    assert marked == FOUND
    assert RLO in before
    assert re.fullmatch(r"(…)?<bdi>[^<]*</bdi>", before, flags=re.DOTALL), before
    assert re.fullmatch(r"<bdi>[^<]*</bdi>(…)?", after, flags=re.DOTALL), after
    assert ".excerpt bdi { unicode-bidi: isolate; }" in page


def test_in_chromium_the_marked_quote_stays_where_it_is_in_the_text(
    chromium: str,  # noqa: F811
    home: Home,
    http_server: LoopbackServer,
    tmp_path: Path,
) -> None:
    """Printed by Chromium and read back in visual order (pypdf's layout mode): the marked
    quote is followed on its line by the words that follow it in the text. Before the fix
    the override carried the mark to the far side of the reversed words around it
    (``… .the origin serves only 1 request in 10 snaem 09 fo oitar tih``)."""
    url = recorded_article(home, http_server, HOSTILE)
    home.verify({"citationId": "c-rlo", "url": url, "quote": FOUND})
    http_server.close()
    page = tmp_path / "rlo.html"
    page.write_text(home.page("c-rlo"), encoding="utf-8")
    pdf = ARTIFACTS / "evidence-page-right-to-left-override.pdf"
    pdf.parent.mkdir(parents=True, exist_ok=True)
    pdf.unlink(missing_ok=True)
    run = run_chromium(
        chromium,
        tmp_path / "profile",
        page,
        f"--print-to-pdf={pdf}",
        "--no-pdf-header-footer",
    )
    assert [r["url"] for r in run.requests if from_the_page(r)] == []
    text = PdfReader(pdf).pages[0].extract_text(extraction_mode="layout")
    [line] = [line for line in text.splitlines() if "A cache" in line]
    assert f"{FOUND}. Raising it to 99 percent" in line, line
