"""Text that the page's own `<style>` rules or a generator's stylesheet hide is left out."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml.html import document_fromstring

from snapshotter.extract.html import html_text
from snapshotter.extract.html_styles import StyleRules, parse_rules
from verifier import check_quote

FILLER = (
    "The lighthouse keepers' log for the winter quarter records every lamp change, every"
    " storm and every ship that asked for a pilot, in the order they happened."
)
PLANTED = "nine herons crossed the estuary at noon"


def _text(body: str, css: str) -> str:
    page = f"""<!doctype html><html><head><meta charset="utf-8"><title>Log</title>
<style>{css}</style></head><body><main><h1>Keepers' log</h1><p>{FILLER}</p>
{body}<p>{FILLER}</p></main></body></html>"""
    return html_text(page.encode("utf-8"), "text/html; charset=utf-8")


@pytest.mark.parametrize(
    ("body", "css"),
    [
        (f'<p class="promo">{PLANTED}</p>', ".promo { display: none }"),
        (f'<p id="banner">{PLANTED}</p>', "#banner{display:none}"),
        (f'<p class="a b">{PLANTED}</p>', "p.b.a { visibility: hidden; }"),
        (f'<div class="box"><p>{PLANTED}</p></div>', "div.box > p { display: none }"),
        (f'<section class="faq"><div><p>{PLANTED}</p></div></section>', ".faq p {display:none}"),
        (f"<p data-draft>{PLANTED}</p>", "[data-draft] { display: none }"),
        (f'<p data-state="closed">{PLANTED}</p>', '[data-state="closed"] { display: none }'),
        (f'<p lang="en-GB">{PLANTED}</p>', "[lang|=en] { display: none }"),
        (f'<p class="x">{PLANTED}</p>', "h1, .x { color: red; display: none; }"),
        (f'<p class="x">{PLANTED}</p>', ".x { display: block } .x { display: none }"),
        (f'<p class="x" style="display: block">{PLANTED}</p>', ".x { display: none !important }"),
        (f'<p class="x">{PLANTED}</p>', "/* .x {display:block} */ .x { DISPLAY: NONE }"),
        (
            f'<p class="x">{PLANTED}</p>',
            "@import url(a.css); @media print { p {color: red} } .x{display:none}",
        ),
        (f'<p class="x">{PLANTED}</p>', ".x { content: '}'; display: none }"),
        (f'<p class="x">{PLANTED}</p>', "p { display: block } .x { display: none }"),
        (f'<p class="x">{PLANTED}</p>', "* .x { visibility: collapse }"),
    ],
)
def test_text_a_style_rule_hides_is_left_out(body: str, css: str) -> None:
    text = _text(body, css)
    assert "herons" not in text
    assert text.count(FILLER) == 2


@pytest.mark.parametrize(
    ("body", "css"),
    [
        (f'<p class="x">{PLANTED}</p>', ".x:hover { display: none }"),
        (f'<p class="x">{PLANTED}</p>', "@media print { .x { display: none } }"),
        (f'<p class="x">{PLANTED}</p>', "@media (max-width: 600px) { .x { display: none } }"),
        (f'<p class="x">{PLANTED}</p>', ".x { display: none } .x { display: block }"),
        (f'<p class="x">{PLANTED}</p>', "p.x { display: block } .x { display: none }"),
        (f'<p class="x" style="display: block">{PLANTED}</p>', ".x { display: none }"),
        (f'<p class="x">{PLANTED}</p>', "h1 + .x { display: none }"),
        (f'<p class="x">{PLANTED}</p>', ".y { display: none } .x { display: flex }"),
        (f'<p class="xy">{PLANTED}</p>', ".x { display: none }"),
        (f'<p class="x">{PLANTED}</p>', ".x::before { display: none }"),
        (f'<p class="x">{PLANTED}</p>', "div .x { display: none }"),
    ],
)
def test_text_no_evaluated_rule_hides_stays(body: str, css: str) -> None:
    assert PLANTED in _text(body, css)


def test_a_style_element_for_print_is_not_read() -> None:
    page = f"""<html><head><style media="print">.x {{ display: none }}</style></head>
<body><main><p>{FILLER}</p><p class="x">{PLANTED}</p></main></body></html>"""
    assert PLANTED in html_text(page.encode(), "text/html; charset=utf-8")


def test_sphinx_permalinks_are_left_out_so_a_heading_can_be_quoted() -> None:
    """Sphinx's stylesheet (linked, never fetched) hides ``a.headerlink`` until hover."""
    text = _text(
        '<h2>Installing<a class="headerlink" href="#installing" title="Link">¶</a></h2>'
        '<dl><dt id="f"><span class="sig-name">open</span>(<em>path</em>)'
        '<a class="headerlink" href="#f" title="Link to this definition">¶</a></dt>'
        "<dd><p>Open it.</p></dd></dl>",
        "",
    )
    assert "¶" not in text
    assert check_quote("Installing", text).found
    assert check_quote("open(path)", text).found


def test_a_pilcrow_that_is_not_a_permalink_stays() -> None:
    text = _text('<p>See ¶ 12 and <a class="headerlink" href="other.html">¶</a> there.</p>', "")
    assert "See ¶ 12 and ¶ there." in text


def test_mdbook_hidden_code_lines_are_left_out() -> None:
    text = _text(
        '<pre><code class="language-rust"><span class="boring">fn main() {\n</span>'
        'let x = 5;\n<span class="boring">}\n</span></code></pre>'
        '<p>A <span class="boring">boring</span> word outside code stays.</p>',
        "",
    )
    assert "fn main" not in text
    assert "let x = 5;" in text
    assert "A boring word outside code stays." in text


def test_many_rules_are_matched_through_the_index() -> None:
    css = "\n".join(f".c{number} {{ display: none }}" for number in range(3000))
    root = document_fromstring(
        f"<html><head><style>{css}</style></head><body><p class='c2999'>x</p></body></html>"
    )
    styles = StyleRules(root)
    paragraph = root.find(".//p")
    assert paragraph is not None
    assert styles.hides(paragraph)
    assert not styles.hides(root.find(".//body"))


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("{}[]()@;:,.#>+~*='\"\\/ \nabcpx!-")), max_size=80))
def test_any_stylesheet_text_is_read_without_raising(css: str) -> None:
    parse_rules(css)
    root = document_fromstring(
        f"<html><head><style>{css}</style></head><body><p class='a'>x</p></body></html>"
    )
    for element in root.iter():
        if isinstance(element.tag, str):
            StyleRules(root).hides(element)


def test_descendant_selectors_on_a_deep_page_are_matched_in_time() -> None:
    """A hostile page: many descendant combinators over deep nesting would take exponential
    time with naive backtracking; each (compound, ancestor) pair is tried once."""
    css = "span " + " ".join(["div"] * 12) + " p { display: none }"  # no span: never matches
    page = f"<style>{css}</style>" + "<div>" * 200 + f"<p>{PLANTED}</p>" + "</div>" * 200
    root = document_fromstring(page)
    started = time.monotonic()
    styles = StyleRules(root)
    assert not any(styles.hides(element) for element in root.iter("div", "p"))
    assert time.monotonic() - started < 5
    hidden = document_fromstring(page.replace("span ", ""))
    paragraph = hidden.find(".//p")
    assert paragraph is not None
    assert StyleRules(hidden).hides(paragraph)
