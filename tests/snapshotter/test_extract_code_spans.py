"""The HTML extractor records where its text is code (``<code>``, ``<pre>``, ``<kbd>``,
``<samp>``), and the code blob that stores it is canonical and checked when read."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import html

from snapshotter.errors import IntegrityError
from snapshotter.extract import extract
from snapshotter.extract.code_spans import decode, encode
from snapshotter.extract.html import html_text_and_code
from snapshotter.extract.html_render import CLOSE_CODE, OPEN_CODE, render, render_with_code
from snapshotter.store.hashing import source_digest
from verifier import CodeSpans

PAGES = Path(__file__).resolve().parent / "pages"

NESTED = """<html><body><main><h1>API <code>split_at</code></h1>
<p>Returns <code>(&amp;[T], &amp;[T])</code>, the halves. Press <kbd>Ctrl</kbd>+<kbd>C</kbd>;
you see <samp>done</samp>.</p>
<pre><code>fn main() {
    let x = <span class="kw">f</span>(a, b);
}
</code></pre>
<pre>
plain <code>nested</code> listing</pre>
<table><tr><td><code>h</code></td><td>short</td></tr>
<tr><td><code>H</code></td><td>unsigned <samp>short</samp></td></tr></table>
<p>empty <code> </code> code, and <code>a<code>b</code>c</code> nested inline.</p>
<p>Prose at the end of the page, with no code in it at all, long enough to be a page.</p>
</main></body></html>"""


def _coded(text: str, ranges: tuple[tuple[int, int], ...]) -> list[str]:
    return [text[start:end] for start, end in ranges]


def test_code_pre_kbd_samp_are_recorded_and_nested_ones_merged() -> None:
    text, code = html_text_and_code(NESTED.encode(), "text/html; charset=utf-8")
    assert code is not None
    assert _coded(text, code) == [
        "split_at",
        "(&[T], &[T])",
        "Ctrl",
        "C",
        "done",
        "fn main() {\n    let x = f(a, b);\n}",
        "plain nested listing",
        "h",
        "H",
        "short",
        "abc",
    ]
    assert CodeSpans(code) == CodeSpans.merged(code)  # sorted, merged, none empty


def test_the_text_is_what_it_was_without_spans() -> None:
    for page in sorted(PAGES.glob("*.html")):
        root = html.fromstring(page.read_bytes())
        text, _ = render_with_code(root)
        assert text == render(html.fromstring(page.read_bytes())), page.name
        assert OPEN_CODE not in text
        assert CLOSE_CODE not in text


def test_every_fixture_page_keeps_its_text_and_records_its_listings() -> None:
    page = (PAGES / "mdbook_operators.html").read_bytes()
    text, code = html_text_and_code(page, "text/html; charset=utf-8")
    expected = (PAGES / "mdbook_operators.expected.txt").read_text(encoding="utf-8")
    assert code
    for line in expected.splitlines()[:20]:
        assert " ".join(line.split()) in " ".join(text.split())
    assert "ident!(...)" in _coded(text, code)


def test_noncharacters_in_the_page_are_not_taken_for_marks() -> None:
    page = f"<main><p>a{OPEN_CODE}b <code>c</code> d{CLOSE_CODE}e</p></main>"
    text, code = render_with_code(html.fromstring(page))
    assert text == "ab c de"
    assert _coded(text, code) == ["c"]


@settings(max_examples=150, derandomize=True, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["p", "code", "pre", "kbd", "td", "span", "br"]),
            st.text(st.sampled_from("ab \n\t,;"), max_size=6),
        ),
        max_size=8,
    )
)
def test_marks_never_change_the_text(parts: list[tuple[str, str]]) -> None:
    body = "".join(
        f"<{tag}>{content}</{tag}>" if tag != "br" else f"<br>{content}" for tag, content in parts
    )
    root = html.fromstring(f"<main><table><tr><td>x</td></tr></table>{body}</main>")
    text, code = render_with_code(root)
    assert OPEN_CODE not in text
    assert CLOSE_CODE not in text
    for start, end in code:
        assert 0 <= start < end <= len(text)


def test_plain_text_and_pdf_record_no_spans(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("Use `f(a, b)` here.\n" * 20, encoding="utf-8")
    assert extract(path, "text/plain").code is None  # backticks are read by the matcher


def test_the_blob_is_canonical_and_read_back() -> None:
    spans = CodeSpans(((0, 4), (10, 12)))
    data = encode(spans)
    assert data == b'{"code":[[0,4],[10,12]],"version":1}'
    digest, _ = source_digest(data)
    assert decode(data, text_length=12, digest=digest) == spans


@pytest.mark.parametrize(
    "data",
    [
        b'{"code":[[0,4]],"version":2}',
        b'{"code":[[4,0]],"version":1}',
        b'{"code":[[0,40]],"version":1}',
        b'{"code":[[0,"4"]],"version":1}',
        b'{"version":1,"code":[[0,4]]}',
        b"not json",
    ],
)
def test_a_blob_that_is_not_canonical_spans_of_the_text_is_an_integrity_error(
    data: bytes,
) -> None:
    with pytest.raises(IntegrityError) as raised:
        decode(data, text_length=12, digest="sha256:" + "0" * 64)
    assert "\n" not in raised.value.message
