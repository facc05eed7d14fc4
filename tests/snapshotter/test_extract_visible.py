"""HTML extraction keeps what a reader sees and nothing a reader does not see."""

from __future__ import annotations

from html import escape as html_escape

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lxml.html import document_fromstring, fragment_fromstring
from trafilatura.utils import load_html

from snapshotter.extract.html import _trafilatura_text, html_text
from snapshotter.extract.html_render import render
from snapshotter.extract.html_visible import remove_hidden, script_text, write_scripts_as_text
from tests.snapshotter.page_coverage import measure, page_names

FILLER = (
    "The harbour authority published its annual report on Monday, covering the twelve months"
    " to March, and the figures below are taken from its second chapter on water quality."
)
PLANTED = "seven ravens guarded the western gate"


def _page(body: str, head: str = "<script>var analytics = 1;</script>") -> bytes:
    html = f"""<!doctype html><html><head><meta charset="utf-8"><title>Report</title>{head}</head>
<body><nav><a href="/">Home</a></nav><main><article><h1>Annual report</h1><p>{FILLER}</p>
{body}
<p>{FILLER}</p></article></main><footer>Contact us</footer></body></html>"""
    return html.encode("utf-8")


def _text(body: str, head: str = "<script>var analytics = 1;</script>") -> str:
    return html_text(_page(body, head), "text/html; charset=utf-8")


@pytest.mark.parametrize(
    "hidden",
    [
        f"<p hidden>{PLANTED}</p>",
        f'<p hidden="until-found">{PLANTED}</p>',
        f'<div style="display:none"><p>{PLANTED}</p></div>',
        f'<p style="color: red; DISPLAY : None !important">{PLANTED}</p>',
        f'<span style="visibility:hidden">{PLANTED}</span>',
        f'<span style="visibility: collapse">{PLANTED}</span>',
        f"<template><p>{PLANTED}</p></template>",
        f"<noscript><p>{PLANTED}</p></noscript>",
        f'<span aria-hidden="true">{PLANTED}</span>',
        f'<span aria-hidden="TRUE">{PLANTED}</span>',
        f"<dialog><p>{PLANTED}</p></dialog>",
        f'<span class="note sr-only">{PLANTED}</span>',
        f'<span class="visually-hidden">{PLANTED}</span>',
        f"<p>before <!-- {PLANTED} --> after</p>",
        f"<script>document.write('{PLANTED}')</script>",
        f"<style>/* {PLANTED} */</style>",
    ],
)
def test_a_quote_planted_in_hidden_text_is_not_in_the_text(hidden: str) -> None:
    text = _text(f"<p>Water quality improved. {hidden} It kept improving.</p>")
    assert "ravens" not in text
    # The text around the hidden element is still there, in order.
    assert "Water quality improved." in text
    assert "It kept improving." in text
    assert FILLER in text


def test_text_that_is_shown_stays() -> None:
    text = _text(
        f'<p style="display: block; visibility: visible" aria-hidden="false">{PLANTED}</p>'
        f'<dialog open><p>the dialog is open</p></dialog><p class="hidden-gem">a gem</p>'
    )
    assert PLANTED in text
    assert "the dialog is open" in text
    assert "a gem" in text


def test_noscript_is_shown_on_a_page_without_scripts() -> None:
    text = _text(f"<noscript><p>{PLANTED}</p></noscript>", head="")
    assert PLANTED in text


def test_table_cells_are_separated_by_tabs_and_rows_by_line_breaks() -> None:
    text = _text(
        "<table><caption>Operators</caption>"
        "<tr><th>Operator</th><th>Example</th></tr>"
        "<tr><td><code>||</code></td><td><code>expr || expr</code></td></tr>"
        "<tr><td><code>|=</code></td><td><p>var |= expr</p><p>(assigns)</p></td></tr>"
        "<tr><td>&amp;&amp;</td><td></td><td>last</td></tr></table>"
    )
    assert "Operators\nOperator\tExample\n||\texpr || expr\n|=\tvar |= expr\n(assigns)\n" in text
    assert "&&\t\tlast" in text
    assert text.count("|") == 6  # only the bars that are on the page


def test_code_listings_captions_definitions_and_headings_are_kept() -> None:
    text = _text(
        "<h2>Opening a file</h2>"
        '<figure class="listing"><span class="file-name">Filename: src/main.rs</span>'
        '<pre><code class="language-rust">use std::fs::File;\n\nfn main() {\n'
        '    let f = File::open("hello.txt")?;\n}\n</code></pre>'
        "<figcaption>Listing 9-3: Opening a file</figcaption></figure>"
        '<pre><code class="language-rust">let x = 5;</code></pre>'
        '<p><span class="caption">Listing 9-4: Matching on <code>Result</code></span></p>'
        "<dl><dt>Ok</dt><dd>success</dd><dt>Err</dt><dd>failure</dd></dl>"
        "<h3>Line<br>break</h3>"
    )
    assert "Opening a file\nFilename: src/main.rs\nuse std::fs::File;\n\nfn main() {\n" in text
    assert '    let f = File::open("hello.txt")?;\n}\nListing 9-3: Opening a file\n' in text
    assert "let x = 5;\nListing 9-4: Matching on Result\n" in text
    assert "Ok\nsuccess\nErr\nfailure\n" in text
    assert "Line\nbreak" in text


@pytest.mark.parametrize(
    ("html", "shown", "never"),
    [
        ("10<sup>6</sup> cells", "10⁶ cells", "106"),
        ("CO<sub>2</sub> rose", "CO₂ rose", "CO2"),
        ("one e<sup>−</sup> each", "one e⁻ each", "e−"),
        ("one e<sup>-</sup> each", "one e⁻ each", "e-"),
        ("m<sup>−2</sup> s<sup>-1</sup>", "m⁻² s⁻¹", "m−2"),
        ("x<sup>n+1</sup> = y", "xⁿ⁺¹ = y", "xn+1"),
        ("<sup>14</sup>C dating", "¹⁴C dating", "14C"),
        ("H<sub>2</sub>O and T<sub>max</sub>", "H₂O and Tₘₐₓ", "H2O"),
        ("the 5<sup>th</sup> day", "the 5^(th) day", "5th"),
        ("T<sub>eff</sub> was", "T_(eff) was", "Teff"),
        ("value<sup>*</sup>", "value^(*)", "value*"),
        ("x<sup>2a</sup>", "x^(2a)", "x2a"),
        (
            'coast.<sup class="reference"><a href="#cite_note-1"><span>[</span>1'
            "<span>]</span></a></sup> It",
            "coast.[1] It",
            "coast.1",
        ),
        ('cited<sup><a href="#fn1" id="fnref1">1</a></sup> here', "cited[1] here", "cited1"),
        (
            "land.<sup>[<i><a href='/wiki/Help'>citation needed</a></i>]</sup>",
            "land.[citation needed]",
            "land.citation",
        ),
        ("table note<sup>[a]</sup> applies", "table note[a] applies", "notea"),
        ('said<a href="#fn2" class="footnote-ref"><sup>2</sup></a> so', "said[2] so", "said²"),
        ('<a href="/wiki/Square_metre">km<sup>2</sup></a> wide', "km² wide", "[2]"),
        ('<a href="#area">km<sup>2</sup></a> wide', "km² wide", "[2]"),
        ("empty<sup> </sup>end", "empty end", "emptyend"),
        ("area <math><msup><mi>r</mi><mn>2</mn></msup></math> here", "area r² here", "r2"),
        (
            "<math><msubsup><mi>x</mi><mi>i</mi><mn>3</mn></msubsup></math> sum",
            "x_(i)³ sum",
            "xi3",
        ),
        ("<math><msub><mi>v</mi><mn>0</mn></msub></math> speed", "v₀ speed", "v0"),
    ],
)
def test_sup_and_sub_are_written_as_a_reader_reads_them(html: str, shown: str, never: str) -> None:
    text = _text(f"<p>{html}</p>")
    assert shown in text
    assert never not in text


SCRIPT_ALPHABET = st.text(alphabet="0123456789+-−=()inaeoxhklmpstqQZ*† ", min_size=1, max_size=8)


@given(body=SCRIPT_ALPHABET, tag=st.sampled_from(["sup", "sub"]))
def test_a_raised_or_lowered_run_never_reads_as_plain_text(body: str, tag: str) -> None:
    """Whatever is inside, the written form differs from the plain characters."""
    element = fragment_fromstring(f"<{tag}>{body}</{tag}>")
    plain = " ".join(body.split())
    written = script_text(element)
    if not plain:
        assert written == " "  # a run of spaces is still a space
        return
    assert written != plain
    marked = written.startswith(("^(", "_(")) and written.endswith(")")
    if marked:
        assert written[2:-1] == plain  # the marked form keeps the characters as they are
    else:
        assert len(written) == len(plain)  # one Unicode form per character
        assert not any(char.isascii() and char.isalnum() for char in written)


@pytest.mark.parametrize("name", page_names())
def test_fixture_pages_keep_what_a_reader_sees(name: str) -> None:
    coverage = measure(name)
    assert coverage.lines >= 15
    assert coverage.share >= 0.99, coverage.missing
    assert coverage.leaked == ()


def test_there_are_at_least_six_fixture_pages() -> None:
    assert len(page_names()) >= 6


def _bare_page(body: str) -> bytes:
    """A page without <main> or <article>: the trafilatura fallback finds the content."""
    paragraphs = "".join(f"<p>{FILLER} Part {n}.</p>" for n in range(4))
    return (
        '<html><head><meta charset="utf-8"><script>var x = 1;</script></head><body>'
        '<div id="menu"><a href="/">Home</a> <a href="/about">About</a></div>'
        f'<div id="text"><h1>Annual report</h1>{paragraphs}{body}<p>{FILLER} End.</p></div>'
        '<div id="footer">Imprint</div></body></html>'
    ).encode()


@pytest.mark.parametrize(
    "hidden",
    [
        f"<p hidden>{PLANTED}</p>",
        f'<p style="display:none">{PLANTED}</p>',
        f"<noscript><p>{PLANTED}</p></noscript>",
        f'<p aria-hidden="true">{PLANTED}</p>',
        f"<template><p>{PLANTED}</p></template>",
    ],
)
def test_hidden_text_stays_out_on_the_fallback_path_too(hidden: str) -> None:
    text = html_text(_bare_page(hidden), None)
    assert "Annual report" in text
    assert f"{FILLER} End." in text
    assert "ravens" not in text


def test_tables_from_the_trafilatura_fallback_are_tab_separated() -> None:
    table = (
        "<table><tr><th>Operator</th><th>Meaning</th></tr>"
        "<tr><td>||</td><td>logical or</td></tr><tr><td>x<sup>2</sup></td><td>square</td></tr>"
        "</table>"
    )
    root = load_html(_bare_page(table))
    remove_hidden(root)
    write_scripts_as_text(root)
    text = _trafilatura_text(root)  # trafilatura's own result, laid out by snap's renderer
    assert "Operator\tMeaning\n||\tlogical or\nx²\tsquare" in text
    assert text.count("|") == 2


def test_a_page_wrapped_in_one_form_keeps_its_text() -> None:
    """ASP.NET WebForms pages put the whole page inside one <form>; it is not a search box."""
    paragraphs = "".join(f"<p>{FILLER} Part {n}.</p>" for n in range(3))
    page = (
        '<html><body><form id="aspnetForm" method="post"><input type="hidden" name="__VIEWSTATE">'
        '<div id="header">Borough Council</div><form role="search"><input name="q">'
        "<label>Search the site</label></form>"
        f'<div id="content"><h1>Bin collection changes</h1>{paragraphs}</div></form></body></html>'
    ).encode()
    text = html_text(page, None)
    assert "Bin collection changes" in text
    assert f"{FILLER} Part 2." in text
    assert "Search the site" not in text


@pytest.mark.parametrize("void", ["wbr", "source", "track", "embed", "keygen"])
def test_text_after_an_html5_void_element_is_kept(void: str) -> None:
    """libxml2 nests what follows these elements inside them; the text is still shown."""
    text = _text(f"<p>harbour::<{void}><a href='count.html'>count</a>::<{void}>median here</p>")
    assert "harbour::count::median here" in text


VISIBLE_TAGS = [
    "div", "p", "span", "b", "code", "pre", "table", "tr", "td", "th", "ul", "li", "dl", "dt",
    "dd", "h2", "figure", "figcaption", "blockquote", "a", "section", "wbr",
]  # fmt: skip
WORDS = st.text(alphabet="ab1|&<>?:.-\u00a0 \n\t", max_size=6).map(html_escape)
TREES = st.recursive(
    WORDS,
    lambda children: st.tuples(st.sampled_from(VISIBLE_TAGS), st.lists(children, max_size=4)).map(
        lambda pair: f"<{pair[0]}>{''.join(pair[1])}</{pair[0]}>"
    ),
    max_leaves=25,
)


@given(body=TREES)
def test_layout_loses_and_adds_no_visible_character(body: str) -> None:
    """Whatever the nesting (even broken), only white space differs from the page's text."""
    root = document_fromstring(f"<html><body><main>{body}x</main></body></html>")
    expected = "".join(root.find(".//main").text_content().split())
    assert "".join(render(root.find(".//main")).split()) == expected


@pytest.mark.parametrize(
    "body", ["<pre>\n</pre>", "<pre>\n</pre><p>a</p>", "<p>a</p><pre>\n</pre>"]
)
def test_a_listing_of_one_line_break_is_laid_out(body: str) -> None:
    """The line break right after ``<pre>`` is not text; dropping it left an empty part that
    made the layout fail (found by the property test above)."""
    root = document_fromstring(f"<html><body><main>{body}x</main></body></html>")
    assert render(root.find(".//main")).replace("\n", "") in ("x", "ax")


def test_a_cells_lines_stay_lines_inside_the_cell() -> None:
    """A cell of several examples keeps one example per line, as the browser shows it, and
    the next cell starts after a tab: no example's result runs into the next example."""
    text = _text(
        "<table><tr><th>Function</th><th>Examples</th></tr>"
        "<tr><td><code>ceil</code>(x)</td><td><code>ceil(4.2)</code> → <code>5</code><br>"
        "<code>ceil(-4.8)</code> → <code>-4</code></td><td>last</td></tr>"
        "<tr><td><p>trunc(x)</p><p>Towards zero.</p></td><td><pre>trunc(4.8)\n4</pre></td></tr>"
        "</table>"
    )
    assert "ceil(x)\tceil(4.2) → 5\nceil(-4.8) → -4\tlast\n" in text
    assert "trunc(x)\nTowards zero.\ttrunc(4.8)\n4\n" in text
