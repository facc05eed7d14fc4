"""Sniffing decides by the bytes; a fuzzed blob never escapes with an unexpected exception."""

from __future__ import annotations

import codecs
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from snap.errors import ExtractionError
from snapshotter.extract import FLAGS, extract
from snapshotter.extract.sniff import declared_charset, media_type, sniff


@pytest.mark.parametrize(
    ("head", "kind"),
    [
        (b"%PDF-1.7\n", "pdf"),
        (b"\n\n  %PDF-1.4", "pdf"),
        (b"  \n<!DOCTYPE html><html>", "html"),
        (b"<!-- generated -->\n<html lang=en>", "html"),
        (b'<?xml version="1.0"?>\n<!DOCTYPE html PUBLIC "x"><html>', "html"),
        (codecs.BOM_UTF8 + b"<HTML><BODY>", "html"),
        (codecs.BOM_UTF16_LE + "<html><body>".encode("utf-16-le"), "html"),
        (b"<p>Just a paragraph</p>", "html"),
        (b"Plain words, <b> is not at the start.", "text"),
        (b"<xml-ish>not html</xml-ish>", "text"),
        (b"\x00\x01\x02binary", "binary"),
        (b"\x89PNG\r\n\x1a\n....", "binary"),
    ],
)
def test_sniff(head: bytes, kind: str) -> None:
    assert sniff(head, None).kind == kind


def test_declared_html_type_is_a_hint_for_ambiguous_markup() -> None:
    assert sniff(b"<section><h2>x</h2></section>", "text/html").kind == "html"
    assert sniff(b"<section><h2>x</h2></section>", "text/plain").kind == "text"


def test_declared_type_parsing() -> None:
    assert media_type("Text/HTML; charset=UTF-8") == "text/html"
    assert media_type("nonsense") is None
    assert declared_charset('text/html; charset="ISO-8859-1"') == "iso8859-1"
    assert declared_charset("text/html; charset=no-such-charset") is None
    assert declared_charset(None) is None


_PREFIXES = st.sampled_from(
    [
        b"",
        b"%PDF-1.4\n",
        b"<!doctype html><html><body>",
        codecs.BOM_UTF8,
        codecs.BOM_UTF16_LE,
        b"\x1f\x8b",
        b"<p>",
    ]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    prefix=_PREFIXES,
    body=st.binary(max_size=600),
    declared=st.sampled_from(
        [
            None,
            "text/html",
            "text/plain; charset=utf-8",
            "application/pdf",
            "application/octet-stream",
        ]
    ),
)
def test_any_bytes_give_an_extraction_or_an_extraction_error(
    prefix: bytes, body: bytes, declared: str | None
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "blob"
        path.write_bytes(prefix + body)
        try:
            result = extract(path, declared)
        except ExtractionError as error:
            message = str(error)
            result = None
    if result is None:
        assert "\n" not in message
        return
    assert set(result.flags) <= set(FLAGS)
    assert (result.text is None) == bool(
        {"no_extractable_text", "no_text_extractor"} & set(result.flags)
    )
    for page in result.pages:
        assert result.text is not None
        assert 0 <= page.start <= page.end <= len(result.text)
