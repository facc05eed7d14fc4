"""Plain text: BOM, then declared charset, then strict UTF-8; never silently replaced."""

from __future__ import annotations

import codecs
from collections.abc import Callable
from pathlib import Path

import pytest

from snap.errors import ExtractionError
from snapshotter.extract import FLAG_NO_TEXT_EXTRACTOR, Extraction, extract
from snapshotter.fetch import FetchOptions, fetching
from tests.http_fixtures import LoopbackServer

TEXT = (
    "Zoë Müller's café served 1,250 crêpes in März 2024 — a record for the façade-lined"
    " street.\r\nThe owner said prices would rise by 5 % next year; the council disagreed.\n"
) * 3


def _served(
    server: LoopbackServer, options: FetchOptions, body: bytes, content_type: str | None
) -> Extraction:
    server.route("/doc.txt", body=body, content_type=content_type)
    with fetching(server.url("/doc.txt"), options) as fetched:
        return extract(fetched.path, fetched.declared_content_type)


@pytest.mark.parametrize(
    ("body", "declared", "codec"),
    [
        (codecs.BOM_UTF8 + TEXT.encode("utf-8"), "text/plain", "utf-8-sig"),
        (codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le"), "text/plain", "utf-16"),
        (codecs.BOM_UTF16_BE + TEXT.encode("utf-16-be"), "text/plain; charset=utf-8", "utf-16"),
        (TEXT.replace("—", "-").encode("latin-1"), "text/plain; charset=ISO-8859-1", "iso8859-1"),
        (TEXT.encode("windows-1252"), "text/plain; charset=windows-1252", "cp1252"),
        (TEXT.encode("utf-8"), "text/plain", "utf-8"),
        (TEXT.encode("utf-8"), None, "utf-8"),
        (TEXT.encode("utf-8"), "text/plain; charset=us-ascii", "utf-8"),  # wrong label
    ],
    ids=[
        "utf8-bom",
        "utf16le-bom",
        "utf16be-bom",
        "latin1",
        "cp1252",
        "utf8",
        "undeclared",
        "misdeclared-ascii",
    ],
)
def test_encodings_decode_exactly(
    http_server: LoopbackServer,
    options: Callable[..., FetchOptions],
    body: bytes,
    declared: str | None,
    codec: str,
) -> None:
    result = _served(http_server, options(), body, declared)
    expected = TEXT.replace("—", "-") if codec == "iso8859-1" else TEXT
    assert result.text == expected  # BOM removed, \r\n kept, nothing replaced
    assert result.content_type == "text/plain"
    detected = "+detected" if declared and "us-ascii" in declared else ""
    assert result.extractor == f"text@1+charset={codec}{detected}"
    assert result.flags == ()


@pytest.mark.parametrize("declared", ["text/plain", None, "text/plain; charset=utf-8"])
def test_undecodable_text_is_an_error(
    http_server: LoopbackServer, options: Callable[..., FetchOptions], declared: str | None
) -> None:
    with pytest.raises(ExtractionError, match="not valid UTF-8") as caught:
        _served(http_server, options(), TEXT.encode("windows-1252"), declared)
    assert "\n" not in str(caught.value)


def test_a_local_file_in_another_encoding_says_where_and_what_to_do(tmp_path: Path) -> None:
    """A local file declares no charset and cannot: the line says at which byte UTF-8 fails
    and how such a file can be captured."""
    path = tmp_path / "doc.txt"
    path.write_bytes("Grüße aus Köln".encode("latin-1"))
    with pytest.raises(ExtractionError) as caught:
        extract(path, "text/plain")
    assert str(caught.value) == (
        "the text is not valid UTF-8 (at byte 2) and declares no charset; a file in another"
        " encoding can be converted first (iconv -f ENCODING -t UTF-8), or served with its charset"
    )


def test_bytes_that_fail_the_declared_charset_and_utf8_are_an_error(tmp_path: Path) -> None:
    path = tmp_path / "doc.txt"
    path.write_bytes("Grüße aus Köln".encode("latin-1"))
    expected = r"neither valid ascii \(as declared\) nor valid UTF-8"
    with pytest.raises(ExtractionError, match=expected):
        extract(path, "text/plain; charset=ascii")


def test_broken_bom_text_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "doc.txt"
    path.write_bytes(codecs.BOM_UTF8 + b"caf\xe9 " * 100)
    with pytest.raises(ExtractionError, match="byte-order mark"):
        extract(path, None)


def test_textual_types_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    path.write_text("year,items\n2021,18400\n2024,10672\n", encoding="utf-8")
    result = extract(path, "text/csv; charset=utf-8")
    assert result.content_type == "text/csv"
    assert result.text == "year,items\n2021,18400\n2024,10672\n"
    assert result.flags == ()  # short, but a real document: only HTML can be a login wall


@pytest.mark.parametrize(
    ("body", "declared", "content_type"),
    [
        (b"\x89PNG\r\n\x1a\n" + bytes(range(256)), "image/png", "image/png"),
        (b"\x89PNG\r\n\x1a\n" + bytes(range(256)), "text/html", "image/png"),
        (b"PK\x03\x04" + bytes(200), None, "application/zip"),
        (bytes(range(256)) * 4, "application/octet-stream", "application/octet-stream"),
        (TEXT.encode("windows-1252"), "application/octet-stream", "application/octet-stream"),
    ],
    ids=["png", "png-as-html", "zip", "binary", "undecodable-octet-stream"],
)
def test_other_types_have_no_text_extractor(
    tmp_path: Path, body: bytes, declared: str | None, content_type: str
) -> None:
    path = tmp_path / "blob"
    path.write_bytes(body)
    result = extract(path, declared)
    assert result.text is None
    assert result.extractor == "none"
    assert result.flags == (FLAG_NO_TEXT_EXTRACTOR,)
    assert result.content_type == content_type
    assert result.reason == f"no text extractor for {content_type}; only the raw bytes are kept"


def test_empty_text_file_is_empty_not_a_login_wall(tmp_path: Path) -> None:
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    result = extract(path, "text/plain")
    assert result.text == ""
    assert result.flags == ()


def test_empty_html_page_is_too_short(tmp_path: Path) -> None:
    path = tmp_path / "shell.html"
    path.write_bytes(b"<!DOCTYPE html><html><body><div id=app></div></body></html>")
    result = extract(path, "text/html")
    assert result.flags == ("too_short",)
    assert result.reason is not None
    assert "0 characters" in result.reason
