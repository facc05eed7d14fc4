"""The browser capture's text is what a reader of the page sees, and nothing a reader does not.

Each page (served on loopback, written for these tests) uses one way of hiding text from a
reader, or one way of showing text that innerText alone misses; the stored rendered text
leaves out or holds its marker sentence, and the browser document says which rule left it out
(``textReading``). Text the rules do not decide (a colour only near the background's, a
background image) stays in, as the manual says; so does text under a full-viewport banner,
counted as covered. A static page waits no longer than the quiet period.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from records.capture import capture_source
from records.workspace import Workspace
from snapshotter.browser.reading import QUIET
from snapshotter.browser.session import BrowserSession
from tests.browser.conftest import OpenWorkspace
from tests.browser.test_browser_capture import browser_document, run_snap
from tests.http_fixtures import LoopbackServer

SEEN = "The harbour master rings the bell at noon."
STYLE = "body { background: #fff; color: #222; margin: 8px } main { width: 600px }"


def page(body: str, head: str = "", attributes: str = "") -> bytes:
    """A page with a sentence every reader sees, then ``body``."""
    return (
        f"<!doctype html><html{attributes}><head><meta charset='utf-8'><title>Test</title>"
        f"<style>{STYLE}</style>{head}</head><body><main><p>{SEEN}</p>{body}</main>"
        "</body></html>"
    ).encode()


def capture(
    server: LoopbackServer, open_workspace: OpenWorkspace, path: str, body: bytes
) -> tuple[str, dict[str, Any], Any]:
    """Capture ``body`` served at ``path`` in the browser: its rendered text, its browser
    document and the record."""
    text, document, record, _ = capture_in(server, open_workspace(), path, body)
    return text, document, record


def capture_in(
    server: LoopbackServer, workspace: Workspace, path: str, body: bytes
) -> tuple[str, dict[str, Any], Any, Workspace]:
    server.route(path, body=body)
    record = capture_source(workspace, server.url(path), method="browser")
    assert record.method == "browser"
    assert record.rendered is not None
    text = workspace.store.get("text", record.rendered.text_hash).decode()
    return text, browser_document(workspace, record), record, workspace


# Each way of hiding text from a reader: the markup, its marker sentence, and the rule that
# leaves it out.
HIDDEN = {
    "off to the left": (
        '<p style="position:absolute;left:-9999px">Walrus sentence sits off to the left.</p>',
        "Walrus sentence",
        "off-page",
    ),
    "above the page": (
        '<p style="position:absolute;top:-400px">Narwhal sentence sits above the page.</p>',
        "Narwhal sentence",
        "off-page",
    ),
    "text-indent image replacement": (
        '<h2 style="text-indent:-9999px">Puffin sentence is indented away.</h2>',
        "Puffin sentence",
        "off-page",
    ),
    "fixed below the viewport": (
        '<p style="position:fixed;top:3000px">Gannet sentence is fixed out of sight.</p>',
        "Gannet sentence",
        "off-page",
    ),
    "font-size 0": (
        '<p style="font-size:0">Otter sentence has no size at all.</p>',
        "Otter sentence",
        "font-size",
    ),
    "white on white": (
        '<p style="color:#fff">Heron sentence is white on white.</p>',
        "Heron sentence",
        "colour",
    ),
    "panel colour on the panel": (
        '<div style="background:#123456;color:#123456">Lobster sentence matches its panel.</div>',
        "Lobster sentence",
        "colour",
    ),
    "transparent colour": (
        '<p style="color:transparent">Mackerel sentence is transparent ink.</p>',
        "Mackerel sentence",
        "colour",
    ),
    "opacity 0": (
        '<p style="opacity:0">Pelican sentence has opacity zero.</p>',
        "Pelican sentence",
        "opacity",
    ),
    "opacity 0 on an ancestor": (
        '<div style="opacity:0"><p>Cormorant sentence inherits nothing visible.</p></div>',
        "Cormorant sentence",
        "opacity",
    ),
    "height 0 and overflow hidden": (
        '<p style="height:0;overflow:hidden;margin:0">Seal sentence has zero height.</p>',
        "Seal sentence",
        "clipped",
    ),
    "below a clipping box": (
        '<div style="height:40px;overflow:hidden"><p style="margin-top:90px">'
        "Kelp sentence is below the box's edge.</p></div>",
        "Kelp sentence",
        "clipped",
    ),
    "screen-reader only": (
        '<span style="position:absolute;width:1px;height:1px;margin:-1px;overflow:hidden;'
        'clip:rect(0,0,0,0);white-space:nowrap">Oyster sentence is for screen readers.</span>',
        "Oyster sentence",
        "clipped",
    ),
    "scaled to nothing": (
        '<p style="transform:scale(0)">Shrimp sentence is scaled to nothing.</p>',
        "Shrimp sentence",
        "size",
    ),
}


@pytest.mark.parametrize("way", list(HIDDEN))
def test_text_a_reader_cannot_see_is_left_out_under_its_rule(
    way: str, http_server: LoopbackServer, open_workspace: OpenWorkspace
) -> None:
    markup, marker, rule = HIDDEN[way]
    text, document, record, workspace = capture_in(
        http_server, open_workspace(), "/hidden", page(markup)
    )
    assert SEEN in text
    assert marker not in text
    left_out = document["textReading"]["leftOut"]
    assert list(left_out) == [rule]
    assert left_out[rule]["characters"] >= len(marker)
    assert any(marker in excerpt for excerpt in left_out[rule]["excerpts"])
    assert record.provenance["browser"]["text"]["leftOut"] == {rule: left_out[rule]["characters"]}
    dom = workspace.store.get("dom", document["dom"]["hash"]).decode()
    assert marker in dom  # the page was only read, not changed: the DOM still holds the text
    assert "snap-generated" not in dom


# Text the rules keep: seen, or not decidable in the page (the manual lists these limits).
KEPT = {
    "white on a dark panel": (
        '<div style="background:#000;color:#fff">Anchovy sentence shows.</div>'
    ),
    "a colour close to the background": (
        '<p style="color:#fefefe">Anchovy sentence is nearly white on white.</p>'
    ),
    "white with a shadow": (
        '<p style="color:#fff;text-shadow:0 0 2px #000">Anchovy sentence has a shadow.</p>'
    ),
    "a background image behind": (
        '<div style="background-image:linear-gradient(#fff,#fff);color:#fff">'
        "Anchovy sentence is on an image.</div>"
    ),
    "scrolled inside its box": (
        '<div style="height:40px;overflow:auto"><p style="margin-top:90px">'
        "Anchovy sentence is in a scrolling box.</p></div>"
    ),
    "absolute child of a static clipping box": (
        '<div style="height:0;overflow:hidden"><span style="position:absolute;top:60px">'
        "Anchovy sentence escapes the box.</span></div>"
    ),
    "transparent text showing a gradient clipped to it": (
        '<p style="background:linear-gradient(#c00,#00c);-webkit-background-clip:text;'
        'background-clip:text;color:transparent">Anchovy sentence is gradient ink.</p>'
    ),
    "an inline element with overflow hidden": (
        '<p><span style="overflow:hidden;height:0">Anchovy sentence is inline.</span></p>'
    ),
    "partly clipped": (
        '<div style="height:20px;overflow:hidden;line-height:18px">Anchovy sentence begins on'
        " the first line and goes on well past the edge of the box, over several lines of it,"
        " where no reader sees the rest of it at all.</div>"
    ),
}


@pytest.mark.parametrize("way", list(KEPT))
def test_text_the_rules_do_not_decide_stays_in(
    way: str, http_server: LoopbackServer, open_workspace: OpenWorkspace
) -> None:
    text, document, _ = capture(http_server, open_workspace, "/kept", page(KEPT[way]))
    assert SEEN in text
    assert "Anchovy sentence" in text
    assert document["textReading"]["leftOut"] == {}


def test_a_background_image_leaves_the_colour_undecided_and_says_so(
    http_server: LoopbackServer, open_workspace: OpenWorkspace
) -> None:
    _, document, record = capture(
        http_server, open_workspace, "/image", page(KEPT["a background image behind"])
    )
    undecided = document["textReading"]["colourUndecided"]["characters"]
    assert undecided >= len("Anchovy sentence is on an image.")
    assert record.provenance["browser"]["text"]["colourUndecided"] == undecided


def test_in_a_right_to_left_page_the_left_is_where_a_reader_scrolls(
    http_server: LoopbackServer, open_workspace: OpenWorkspace
) -> None:
    markup = (
        '<p style="position:absolute;left:-2000px">Sardine sentence is to the left.</p>'
        '<p style="position:absolute;right:-9999px">Tuna sentence is off to the right.</p>'
    )
    body = page(markup, attributes=' dir="rtl"')
    text, document, _ = capture(http_server, open_workspace, "/rtl", body)
    assert "Sardine sentence" in text
    assert "Tuna sentence" not in text
    assert list(document["textReading"]["leftOut"]) == ["off-page"]


def test_a_page_that_cannot_scroll_sideways_hides_what_is_past_its_edge(
    http_server: LoopbackServer, open_workspace: OpenWorkspace
) -> None:
    markup = '<p style="position:absolute;left:5000px">Turbot sentence is past the edge.</p>'
    body = page(markup, head="<style>html { overflow-x: hidden }</style>")
    text, _, _ = capture(http_server, open_workspace, "/locked", body)
    assert "Turbot sentence" not in text
    scrollable = page(markup)
    text, _, _ = capture(http_server, open_workspace, "/scrollable", scrollable)
    assert "Turbot sentence" in text  # a reader scrolls there


def test_text_under_a_full_viewport_banner_is_kept_and_counted_as_covered(
    http_server: LoopbackServer, open_workspace: OpenWorkspace
) -> None:
    banner = (
        '<div id="cookie-wall" style="position:fixed;inset:0;background:#333;color:#fff;'
        'z-index:9"><p>Plaice sentence asks for cookies.</p></div>'
    )
    text, document, record = capture(http_server, open_workspace, "/banner", page(banner))
    assert SEEN in text
    assert "Plaice sentence" in text
    covered = document["textReading"]["covered"]
    assert covered["by"] == "div#cookie-wall"
    assert covered["characters"] == len(SEEN)  # the banner's own text is not under it
    assert record.provenance["browser"]["text"]["covered"] == len(SEEN)
    _, plain, _ = capture(http_server, open_workspace, "/plain", page(""))
    assert plain["textReading"]["covered"] == {"by": None, "characters": 0}


# --- text a reader sees that innerText alone misses ---------------------------------------


def test_css_generated_text_before_and_after_is_read(
    http_server: LoopbackServer, open_workspace: OpenWorkspace
) -> None:
    head = (
        "<style>.note::before { content: 'Clam sentence comes before. ' }"
        ".note::after { content: ' (' attr(data-source) ')' }"
        ".faded::before { content: 'Whelk sentence is generated but faded.'; opacity: 0 }"
        ".icon::before { content: '\\e900'; font-family: icons }</style>"
    )
    body = (
        '<p class="note" data-source="Mussel attribute text">The note itself.</p>'
        '<p class="faded">Faded host.</p><p class="icon">Icon host.</p>'
    )
    text, document, _ = capture(http_server, open_workspace, "/generated", page(body, head))
    assert "Clam sentence comes before. The note itself. (Mussel attribute text)" in text
    assert "Whelk sentence" not in text
    assert "\ue900" not in text  # an icon font's private-use glyph is no text
    generated = document["textReading"]["generated"]
    assert generated["elements"] == 2
    assert generated["characters"] == len("Clam sentence comes before.") + len(
        "(Mussel attribute text)"
    )


def test_a_same_origin_frame_is_read_and_another_origin_is_recorded_as_not_read(
    http_server: LoopbackServer, open_workspace: OpenWorkspace
) -> None:
    http_server.route("/inner", body=b"<p>Halibut sentence is inside the frame.</p>")
    with LoopbackServer() as other:  # another port: another origin
        other.route("/foreign", body=b"<p>Skate sentence is in a foreign frame.</p>")
        body = (
            '<iframe src="/inner" width="500" height="80"></iframe>'
            f'<iframe src="{other.url("/foreign")}" width="500" height="80"></iframe>'
            '<iframe src="/inner" style="display:none"></iframe>'
        )
        text, document, record = capture(http_server, open_workspace, "/frames", page(body))
    assert "Halibut sentence is inside the frame." in text
    assert "Skate sentence" not in text
    frames = document["textReading"]["frames"]
    assert frames["read"] == 1
    assert frames["notRead"] == [{"url": other.url("/foreign"), "reason": "cross-origin"}]
    assert record.provenance["browser"]["text"]["framesNotRead"] == 1
    assert text.index(SEEN) < text.index("Halibut sentence")


def test_content_loaded_on_scrolling_is_read_after_a_scroll_pass(
    http_server: LoopbackServer, open_workspace: OpenWorkspace
) -> None:
    body = """<div style="height:6000px"></div><p id="lazy"></p>
<script>
new IntersectionObserver(function (entries) {
  if (entries[0].isIntersecting) {
    document.getElementById("lazy").textContent = "Flounder sentence loaded on scrolling.";
  }
}).observe(document.getElementById("lazy"));
</script>"""
    text, document, _ = capture(http_server, open_workspace, "/lazy", page(body))
    assert "Flounder sentence loaded on scrolling." in text
    scrolled = document["textReading"]["scroll"]
    assert scrolled["reachedEnd"] is True
    assert scrolled["steps"] >= 6000 // 800
    assert [wait["after"] for wait in document["textReading"]["waits"]] == ["load", "scroll"]


def test_text_revealed_on_scrolling_is_read_where_the_scrolling_stopped(
    http_server: LoopbackServer, open_workspace: OpenWorkspace
) -> None:
    """Scroll-reveal sections (transparent until scrolled to, transparent again once a reader
    scrolls back above them) are read at the end of the scroll pass, not back at the top."""
    head = "<style>.reveal { opacity: 0; transition: opacity .3s } .in { opacity: 1 }</style>"
    sections = "".join(
        f'<div style="height:900px"></div><p class="reveal">Tench sentence number {n}.</p>'
        for n in range(1, 4)
    )
    script = """<script>
document.querySelectorAll(".reveal").forEach(function (element) {
  new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) {
      if (entry.isIntersecting) entry.target.classList.add("in");
      else if (entry.boundingClientRect.top > 0) entry.target.classList.remove("in");
    });
  }).observe(element);
});
</script>"""
    body = page(sections + script, head)
    text, document, _ = capture(http_server, open_workspace, "/reveal", body)
    for n in range(1, 4):
        assert f"Tench sentence number {n}." in text
    assert document["textReading"]["leftOut"] == {}


def test_a_page_that_does_not_watch_scrolling_is_not_scrolled(
    http_server: LoopbackServer, open_workspace: OpenWorkspace
) -> None:
    body = '<div style="height:6000px"></div><p>Sole sentence at the end.</p>'
    text, document, _ = capture(http_server, open_workspace, "/tall", page(body))
    assert "Sole sentence at the end." in text
    assert document["textReading"]["scroll"] is None


def test_sections_content_visibility_auto_skips_are_read(
    http_server: LoopbackServer, open_workspace: OpenWorkspace
) -> None:
    body = (
        '<div style="height:5000px"></div><section style="content-visibility:auto;'
        'contain-intrinsic-size:auto 400px"><p>Bream sentence is far below.</p></section>'
    )
    text, document, _ = capture(http_server, open_workspace, "/auto", page(body))
    assert "Bream sentence is far below." in text
    assert document["textReading"]["leftOut"] == {}


def test_text_a_script_writes_later_is_waited_for_within_the_budget(
    http_server: LoopbackServer, open_workspace: OpenWorkspace
) -> None:
    http_server.route(
        "/fragment", body=b"Cod sentence came by XHR.", content_type="text/plain", delay=0.4
    )
    body = """<p id="timer"></p><p id="xhr"></p><p id="late"></p>
<script>
setTimeout(function () {
  document.getElementById("timer").textContent = "Haddock sentence after one and a half seconds.";
}, 1500);
setTimeout(function () {
  var request = new XMLHttpRequest();
  request.open("GET", "/fragment");
  request.onload = function () {
    document.getElementById("xhr").textContent = request.responseText;
  };
  request.send();
}, 700);
setTimeout(function () {
  document.getElementById("late").textContent = "Pollock sentence after six seconds.";
}, 6000);
</script>"""
    text, document, _ = capture(http_server, open_workspace, "/later", page(body))
    assert "Haddock sentence after one and a half seconds." in text
    assert "Cod sentence came by XHR." in text
    assert "Pollock sentence" not in text  # due after the 2 s budget: not waited for
    (wait,) = document["textReading"]["waits"]
    assert wait["timersDueLater"] == 1
    assert wait["quiet"] is True
    assert 1.5 <= wait["seconds"] <= 2.0 + 0.3


def test_lone_surrogates_a_script_writes_are_stored_as_replacement_characters(
    http_server: LoopbackServer, open_workspace: OpenWorkspace
) -> None:
    body = """<p id="odd"></p><p id="gone" style="opacity:0"></p><script>
document.getElementById("odd").textContent = "Roach sentence ends " + String.fromCharCode(0xD800);
document.getElementById("gone").textContent = "Dace " + String.fromCharCode(0xDC00);
</script>"""
    text, document, _ = capture(http_server, open_workspace, "/surrogate", page(body))
    assert "Roach sentence ends \ufffd" in text
    assert document["textReading"]["leftOut"]["opacity"]["excerpts"] == ["Dace \ufffd"]


def test_a_page_a_script_sends_elsewhere_while_it_settles_is_read_where_it_lands(
    http_server: LoopbackServer, open_workspace: OpenWorkspace
) -> None:
    http_server.route("/landed", body=page("<p>Ling sentence is where the script went.</p>"))
    body = '<script>setTimeout(function () { location.href = "/landed"; }, 300);</script>'
    text, document, _ = capture(http_server, open_workspace, "/leaving", page(body))
    assert "Ling sentence is where the script went." in text
    assert document["textReading"]["waits"][0]["quiet"] is True


def test_text_in_a_shadow_tree_is_counted_as_not_read(
    http_server: LoopbackServer, open_workspace: OpenWorkspace
) -> None:
    body = """<div id="host"></div><script>
document.getElementById("host").attachShadow({mode: "open"}).innerHTML =
  "<p>Carp sentence lives in a shadow tree.</p>";
</script>"""
    text, document, record = capture(http_server, open_workspace, "/shadow", page(body))
    assert "Carp sentence" not in text
    shadow = document["textReading"]["shadowNotRead"]["characters"]
    assert shadow == len("Carp sentence lives in a shadow tree.")
    assert record.provenance["browser"]["text"]["shadowNotRead"] == shadow


# --- what it costs, and what a reader of the evidence is told --------------------------------


async def _bare_render(session: BrowserSession, url: str) -> None:
    """What the browser does for a page with no wait at all: load, innerText, DOM,
    screenshot (the same work as the capture, less snap's fetcher, stores and waits)."""
    browser = session._browser
    assert browser is not None
    context = await browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        tab = await context.new_page()
        await tab.goto(url, wait_until="load")
        await tab.evaluate("() => document.body.innerText")
        await tab.content()
        await tab.screenshot(full_page=True, type="png")
    finally:
        await context.close()


def test_a_static_page_waits_no_longer_than_the_quiet_period(
    http_server: LoopbackServer, open_workspace: OpenWorkspace, session: BrowserSession
) -> None:
    body = page("".join(f"<p>Static paragraph {i} of plain text.</p>" for i in range(30)))
    http_server.route("/static", body=body)
    url = http_server.url("/static")
    workspace = open_workspace()
    capture_source(workspace, url, method="browser")  # the browser is started and warm
    loop = session._loop
    assert loop is not None

    def bare() -> None:
        asyncio.run_coroutine_threadsafe(_bare_render(session, url), loop).result(timeout=60)

    captures, bares = [], []
    for _ in range(3):
        started = time.monotonic()
        record = capture_source(workspace, url, method="browser")
        captures.append(time.monotonic() - started)
        started = time.monotonic()
        bare()
        bares.append(time.monotonic() - started)
    document = browser_document(workspace, record)
    (wait,) = document["textReading"]["waits"]
    assert wait["after"] == "load"
    assert wait["quiet"] is True
    assert wait["seconds"] <= QUIET + 0.3
    assert document["textReading"]["scroll"] is None
    # snap's own fetch, extraction and stores cost a few tenths of a second beside the wait
    assert min(captures) - min(bares) <= QUIET + 0.6, (captures, bares)


@pytest.fixture
def hidden_capture(http_server: LoopbackServer, open_workspace: OpenWorkspace) -> tuple[str, Path]:
    """A page with a sentence off to the left, captured in the browser: its URL and home."""
    markup = HIDDEN["off to the left"][0]
    *_, workspace = capture_in(http_server, open_workspace(), "/cited", page(markup))
    return http_server.url("/cited"), Path(workspace.settings.home)


def verify(home: Path, tmp_path: Path, url: str, quote: str, citation_id: str) -> dict[str, Any]:
    citation = tmp_path / f"{citation_id}.json"
    citation.write_text(json.dumps({"citationId": citation_id, "url": url, "quote": quote}))
    result = run_snap(home, "verify", "--json", str(citation))
    return dict(json.loads(result.output)["results"][0])


def test_a_quote_of_hidden_text_is_not_found_in_a_browser_capture(
    hidden_capture: tuple[str, Path], tmp_path: Path
) -> None:
    url, home = hidden_capture
    hidden = verify(home, tmp_path, url, "Walrus sentence sits off to the left", "c-hidden")
    assert hidden["status"] != "quote_found"
    seen = verify(home, tmp_path, url, "rings the bell at noon", "c-seen")
    assert seen["status"] == "quote_found"


def test_the_evidence_page_says_what_the_text_left_out(
    hidden_capture: tuple[str, Path], tmp_path: Path
) -> None:
    url, home = hidden_capture
    verify(home, tmp_path, url, "rings the bell at noon", "c-seen")
    evidence = tmp_path / "evidence.html"
    exported = run_snap(
        home, "export", "--format", "html", "-o", str(evidence), "--citation", "c-seen"
    )
    assert exported.exit_code == 0, exported.output
    said = evidence.read_text()
    assert "<dt>Rendered text</dt>" in said
    left_out = len("Walrus sentence sits off to the left.")
    assert f"left out, as no reader sees them: {left_out} characters off the page" in said


def test_snap_fetch_says_what_the_text_left_out(
    http_server: LoopbackServer, tmp_path: Path, chromium: str
) -> None:
    http_server.route("/fetched", body=page(HIDDEN["opacity 0"][0]))
    fetched = run_snap(tmp_path, "fetch", "--browser", http_server.url("/fetched"))
    assert fetched.exit_code == 0, fetched.output
    left_out = len("Pelican sentence has opacity zero.")
    said = f"  text      left out, as no reader sees them: {left_out} characters of opacity 0"
    assert said in fetched.output
