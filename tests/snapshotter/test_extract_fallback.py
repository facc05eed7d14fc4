"""Notes and asides of the content are kept; the landmark-less fallback keeps every heading
and every sentence with nested ``<code>`` in order."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lxml.html import document_fromstring

from snapshotter.extract import html as html_module
from snapshotter.extract.html import html_text
from snapshotter.extract.html_fallback import restore_headings
from verifier import check_quote

PARAGRAPHS = [
    "A setting changed for a session lasts until the session ends or until it is changed"
    " again, and a rolled-back transaction takes its changes with it.",
    "Settings that a function declares are saved on entry and restored on exit, whatever the"
    " function did to them in between, so a caller never sees them change.",
    "Defaults stored for a database apply first, and those stored for a role override them,"
    " so the most specific default is the one in force.",
]
NESTED = (
    "The command <code class='literal'>SET <em class='replaceable'><code>name</code></em> TO"
    " <em class='replaceable'><code>value</code></em></code> changes it, and"
    " <code class='literal'>SHOW <em><code>name</code></em></code> prints the value in force."
)


def _docbook_page() -> bytes:
    """DocBook's shape: no landmark, headings in title wrappers, navigation in tables."""
    return f"""<html><head><title>Settings</title></head><body>
<div class="navheader"><table><tr><td><a href="p.html">Prev</a></td><td><a href="n.html">Next</a>
</td></tr></table></div>
<h1 class="title">Chapter 4. Settings</h1>
<div class="sect1"><div class="titlepage"><div><h2 class="title">4.1. Session Settings</h2>
</div></div><p>{PARAGRAPHS[0]}</p><p>{NESTED}</p>
<div class="sect2"><div class="titlepage"><h3 class="title">4.1.1. Functions</h3></div>
<p>{PARAGRAPHS[1]}</p></div>
<div class="sect2"><div class="titlepage"><h3 class="title">4.1.2. Defaults</h3></div>
<p>{PARAGRAPHS[2]}</p></div></div>
<div class="navfooter"><table><tr><td><a href="p.html">Prev</a></td></tr></table></div>
</body></html>""".encode()


SENTENCE = "The command SET name TO value changes it, and SHOW name prints the value in force."
HEADINGS = ["Chapter 4. Settings", "4.1. Session Settings", "4.1.1. Functions", "4.1.2. Defaults"]


def test_the_fallback_keeps_every_heading_and_the_nested_code_sentence() -> None:
    text = html_text(_docbook_page(), "text/html; charset=utf-8")
    lines = text.split("\n")
    for heading in HEADINGS:
        assert heading in lines
    assert SENTENCE in lines
    order = [text.index(part) for part in [HEADINGS[0], HEADINGS[1], PARAGRAPHS[0], SENTENCE]]
    assert order == sorted(order)
    assert check_quote("4.1.1. Functions", text).found


def test_trafilatura_own_text_gets_the_headings_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """When the container is refused (too large), trafilatura's own text is used: its
    nested code is whole and its headings are put back where they stand in the page."""
    monkeypatch.setattr(html_module, "MAX_FALLBACK_GROWTH", 0.0)
    text = html_text(_docbook_page(), "text/html; charset=utf-8")
    assert SENTENCE in text
    positions = [text.find(heading) for heading in HEADINGS[1:]]
    assert -1 not in positions, text
    assert positions == sorted(positions)
    assert text.index(HEADINGS[2]) < text.index(PARAGRAPHS[1]) < text.index(HEADINGS[3])


def test_restore_headings_puts_back_only_headings_between_or_right_before_lines() -> None:
    root = document_fromstring(
        "<html><body><h1>Site name</h1><p>menu</p><h2>Title</h2><p>one two</p><h3>Part</h3>"
        "<p>three</p><h3>Comments</h3><p>none yet</p></body></html>"
    )
    assert restore_headings(root, "one two\nthree") == "Title\none two\nPart\nthree"
    assert restore_headings(root, "Title\none two\nPart\nthree") == "Title\none two\nPart\nthree"
    assert restore_headings(root, "not on the page") == "not on the page"


FILLER = (
    "The river board measured the flow at the weir every morning of the year and printed the"
    " figures in its bulletin, with a note on each day the gauge was out of order."
)


def _article(inner: str) -> bytes:
    return f"""<html><body><nav><a href="/">Home</a></nav><aside class="sidebar-ads"><p>Buy
waders now at half price in every shop.</p></aside><main><h1>Flow report</h1><p>{FILLER}</p>
{inner}<p>{FILLER}</p></main></body></html>""".encode()


@pytest.mark.parametrize(
    ("inner", "kept"),
    [
        (
            '<aside class="footnote brackets" id="f1" role="doc-footnote"><span class="label">'
            '<a role="doc-backlink" href="#r1">1</a></span><p>The gauge froze twice.</p></aside>',
            "The gauge froze twice.",
        ),
        ('<aside class="sidebar"><p>Why mornings? The weir is calm then.</p></aside>', "calm then"),
        ('<div role="complementary"><p>Flow is given in cubic metres.</p></div>', "cubic metres"),
        ('<aside><p class="note">Figures for May are provisional.</p></aside>', "provisional"),
    ],
)
def test_notes_and_asides_inside_the_content_are_kept(inner: str, kept: str) -> None:
    text = html_text(_article(inner), "text/html; charset=utf-8")
    assert kept in text
    assert "waders" not in text  # the aside outside the content is still left out


def test_a_footnote_aside_of_a_page_without_landmark_is_kept() -> None:
    page = f"""<html><body><div class="menu"><a href="/">Home</a></div><div class="content">
<h1>Flow report</h1><p>{FILLER}</p><p>{PARAGRAPHS[0]}</p><p>{FILLER}</p>
<aside role="doc-footnote" id="f1"><p>The gauge was made by Weirwright of Leeds.</p></aside>
</div></body></html>""".encode()
    text = html_text(page, "text/html; charset=utf-8")
    assert "The gauge was made by Weirwright of Leeds." in text
    assert "Flow report" in text


def test_an_aside_of_links_inside_the_content_is_navigation() -> None:
    inner = (
        '<aside class="related"><h4>Related</h4>'
        '<a href="/a">Weir repairs finished early</a></aside>'
    )
    assert "Weir repairs" not in html_text(_article(inner), "text/html; charset=utf-8")


BLOCKS = st.lists(
    st.tuples(
        st.sampled_from(["h2", "h3", "p"]),
        st.sampled_from(["alpha", "beta", "gamma", "delta one", "x"]),
    ),
    min_size=1,
    max_size=12,
)


@given(blocks=BLOCKS, keep=st.lists(st.booleans(), min_size=12, max_size=12))
def test_restoring_headings_loses_no_line_and_adds_only_headings(
    blocks: list[tuple[str, str]], keep: list[bool]
) -> None:
    """Whatever trafilatura kept of a page, every line it gave is still there, in order, and
    every line added is one of the page's headings."""
    body = "".join(f"<{tag}>{text} {index}</{tag}>" for index, (tag, text) in enumerate(blocks))
    root = document_fromstring(f"<html><body>{body}</body></html>")
    given_lines = [
        f"{text} {index}" for index, (tag, text) in enumerate(blocks) if tag == "p" and keep[index]
    ]
    text = "\n".join(given_lines)
    restored = restore_headings(root, text).split("\n")
    remaining = iter(restored)
    assert all(line in remaining for line in given_lines)  # a subsequence, in order
    headings = {f"{text} {index}" for index, (tag, text) in enumerate(blocks) if tag != "p"}
    assert set(restored) - set(text.split("\n")) <= headings
