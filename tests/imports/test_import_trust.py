"""What an imported archive may and may not say: it never rewrites snap's own captures (unless
``--as-latest``), and records that cannot be what a server sent are refused, not recorded.

Each test here failed before the fix it names (issue 20)."""

from __future__ import annotations

import ipaddress
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from records.imports.fields import CLOCK_SLACK, capture_date, ip_address
from records.imports.payload import PayloadRefused
from tests.http_fixtures import LoopbackServer
from tests.imports.test_import_hostile import one_error_line, snap_import
from tests.imports.warcs import PAGE, QUOTE, CrawlerWarc, sha256_id
from tests.records.conftest import Backend

FILLER = b"".join(
    b"<p>Paragraph %d says how a cache keeps copies of pages near their readers.</p>" % n
    for n in range(12)
)
NOW_PAGE = (
    b"<html><head><title>CDN caching</title></head><body><main><h1>Caching at the edge</h1>"
    b"<p>A cache hit ratio of 90 percent means the origin serves only 1 request in 10."
    b" Purging the whole cache after every deploy is the most common mistake.</p>"
    + FILLER
    + b"</main></body></html>"
)
OLD_WORDS = "the edge caches were introduced in the year two thousand and one"
OLD_PAGE = (
    b"<html><head><title>Old</title></head><body><main><h1>History</h1><p>Back then "
    + OLD_WORDS.encode()
    + b" by a small team.</p>"
    + FILLER
    + b"</main></body></html>"
)


def run_json(backend: Backend, *args: str) -> tuple[int, dict[str, Any]]:
    done = backend.snap(*args, "--json")
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


def quote_file(tmp_path: Path, name: str, document: dict[str, str]) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def old_archive(tmp_path: Path, url: str, date: str = "2001-09-09T01:46:40Z") -> Path:
    warc = CrawlerWarc(tmp_path / f"old-{date[:4]}.warc.gz")
    warc.response(url, OLD_PAGE, date=date)
    return warc.write().path


def test_an_old_archive_imported_later_does_not_rewrite_snaps_own_capture(
    backend: Backend,
    http_server: LoopbackServer,
    tmp_path: Path,
) -> None:
    http_server.route("/cdn", body=NOW_PAGE)
    url = http_server.url("/cdn")
    assert backend.snap("fetch", url).returncode == 0
    own = quote_file(tmp_path, "own", {"citationId": "c-own", "url": url, "quote": QUOTE})
    assert run_json(backend, "verify", str(own))[0] == 0

    archive = old_archive(tmp_path, url)
    code, imported = run_json(backend, "import", str(archive))
    assert code == 0, imported
    assert imported["summary"]["imported"] == 1

    code, report = run_json(backend, "reverify")
    assert code == 0, report
    assert [(r["citationId"], r["status"]) for r in report["results"]] == [("c-own", "quote_found")]
    assert report["results"][0]["snapshotId"] == sha256_id(NOW_PAGE)
    old = quote_file(tmp_path, "old", {"url": url, "quote": OLD_WORDS})
    code, verified = run_json(backend, "verify", str(old))
    assert code == 1, verified
    assert verified["results"][0]["status"] == "not_found"
    assert verified["results"][0]["snapshotId"] == sha256_id(NOW_PAGE)

    # Asked for: the archive's capture becomes the latest (the same records, not twice).
    code, again = run_json(backend, "import", "--as-latest", str(archive))
    assert code == 0, again
    assert again["summary"]["exists"] == 1
    code, verified = run_json(backend, "verify", str(old))
    assert code == 0, verified
    assert verified["results"][0]["snapshotId"] == sha256_id(OLD_PAGE)
    code, report = run_json(backend, "reverify")
    assert code == 1
    statuses = {r["citationId"]: r["status"] for r in report["results"]}
    assert statuses["c-own"] == "source_changed"


def test_among_imports_the_latest_is_the_latest_capture_time(
    backend: Backend, tmp_path: Path
) -> None:
    """A URL snap never captured: an archive of 2001 imported after one of 2024 does not
    become its latest snapshot."""
    url = "http://example.test/cdn"
    newer = CrawlerWarc(tmp_path / "newer.warc.gz")
    newer.response(url, PAGE, date="2024-05-01T12:00:00Z")
    assert run_json(backend, "import", str(newer.write().path))[0] == 0
    assert run_json(backend, "import", str(old_archive(tmp_path, url)))[0] == 0
    document = {"url": url, "quote": QUOTE}
    code, verified = run_json(backend, "verify", str(quote_file(tmp_path, "q", document)))
    assert code == 0, verified
    assert verified["results"][0]["snapshotId"] == sha256_id(PAGE)


def embedded_report(tmp_path: Path, path: Path) -> tuple[int, dict[str, Any]]:
    done = snap_import(tmp_path, path)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


def refused_reasons(report: dict[str, Any]) -> dict[str, str]:
    return {r["uri"]: r["reason"] for r in report["records"] if r["outcome"] == "refused"}


def test_a_capture_time_in_the_future_is_refused(tmp_path: Path) -> None:
    later = (datetime.now(UTC) + timedelta(days=400)).strftime("%Y-%m-%dT%H:%M:%SZ")
    warc = CrawlerWarc(tmp_path / "future.warc.gz")
    warc.response("http://example.test/future", PAGE, date=later)
    warc.response("http://example.test/now", PAGE)
    code, report = embedded_report(tmp_path, warc.write().path)
    assert code == 1, report
    reasons = refused_reasons(report)
    assert list(reasons) == ["http://example.test/future"]
    assert "is in the future" in reasons["http://example.test/future"]
    assert report["summary"]["imported"] == 1


def test_an_ip_address_field_that_is_not_an_address_is_not_recorded(tmp_path: Path) -> None:
    warc = CrawlerWarc(tmp_path / "ip.warc.gz")
    warc.response("http://example.test/cdn", PAGE)
    path = warc.write().path
    data = path.read_bytes()
    text = tmp_path / "ip.warc"
    import gzip

    plain = gzip.decompress(data).replace(b"192.0.2.7", b"<b>evil</b>")
    text.write_bytes(plain)
    code, report = embedded_report(tmp_path, text)
    assert code == 0, report
    done = snap_import_audit(tmp_path, "http://example.test/cdn")
    provenance = done["captures"][0]["provenance"]
    assert "ip" not in provenance
    assert "evil" not in json.dumps(provenance)


def snap_import_audit(tmp_path: Path, url: str) -> dict[str, Any]:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("SNAP_")}
    env["SNAP_HOME"] = str(tmp_path / "home")
    done = subprocess.run(
        [sys.executable, "-m", "snap", "audit", "--url", url, "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def test_a_target_uri_without_a_host_is_refused(tmp_path: Path) -> None:
    warc = CrawlerWarc(tmp_path / "nohost.warc.gz")
    warc.response("http:///no-host", PAGE)
    warc.response("http://example.test/cdn", PAGE)
    code, report = embedded_report(tmp_path, warc.write().path)
    assert code == 1, report
    assert refused_reasons(report) == {
        "http:///no-host": "the target URI 'http:///no-host' has no host"
    }
    assert report["summary"]["imported"] == 1


def test_a_head_over_the_limit_is_refused_even_when_warcio_drops_its_lines(
    tmp_path: Path,
) -> None:
    """Lines without a colon are dropped by warcio's parse: the head must be measured as it
    was in the archive, not as parsed, or 300 KB of head would be imported cut."""
    warc = CrawlerWarc(tmp_path / "longhead.warc.gz")
    warc.response("http://example.test/cdn", PAGE, extra=[("X-A", "b\r\n" + "z" * 300_000)])
    code, report = embedded_report(tmp_path, warc.write().path)
    assert code == 1, report
    (reason,) = refused_reasons(report).values()
    assert "the HTTP head is" in reason
    assert "more than 262144" in reason


def raw_record(uri: str, http: bytes, *, digest: str | None = None) -> bytes:
    fields = [
        b"WARC/1.1",
        b"WARC-Type: response",
        b"WARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-000000000001>",
        b"WARC-Date: 2024-01-01T00:00:00Z",
        b"WARC-Target-URI: " + uri.encode(),
        b"Content-Type: application/http; msgtype=response",
        b"Content-Length: " + str(len(http)).encode(),
    ]
    if digest:
        fields.append(b"WARC-Payload-Digest: " + digest.encode())
    return b"\r\n".join(fields) + b"\r\n\r\n" + http + b"\r\n\r\n"


def test_a_truncated_body_is_refused_not_stored_as_the_empty_string(tmp_path: Path) -> None:
    """Content-Length 335 and no body was imported as sha256:e3b0… (the empty string)."""
    cut = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 335\r\n\r\n"
    empty = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"
    no_content = b"HTTP/1.1 204 No Content\r\n\r\n"
    path = tmp_path / "truncated.warc"
    path.write_bytes(
        raw_record("http://example.test/cut", cut)
        + raw_record("http://example.test/empty", empty).replace(b"0001>", b"0002>")
        + raw_record("http://example.test/none", no_content).replace(b"0001>", b"0003>")
    )
    code, report = embedded_report(tmp_path, path)
    assert code == 1, report
    reasons = refused_reasons(report)
    assert "shorter than its Content-Length of 335" in reasons["http://example.test/cut"]
    assert "the body is empty" in reasons["http://example.test/empty"]
    assert report["summary"]["imported"] == 1  # a 204 has no body by definition
    assert sha256_id(b"") not in {
        r["snapshotId"] for r in report["records"] if r["uri"] != "http://example.test/none"
    }


def test_warc_magic_followed_by_garbage_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "garbage.warc"
    path.write_bytes(b"WARC/1.1\r\n" + bytes(range(256)) * 12)
    line = one_error_line(snap_import(tmp_path, path), 2)
    assert "garbage.warc is damaged" in line
    assert "not a WARC record" in line


def test_the_migration_marks_captures_imported_before_it_as_not_latest(tmp_path: Path) -> None:
    """Captures imported before revision imports_0007 (provenance ``source`` = ``warc``) must
    not stay able to hide snap's own captures."""
    import sqlalchemy as sa
    from alembic import command

    from records.db import alembic_config

    engine = sa.create_engine(f"sqlite:///{tmp_path / 'old.db'}")
    with engine.begin() as connection:
        command.upgrade(alembic_config(connection), "0004")
    with engine.begin() as connection:
        for url, provenance in (("http://a/imported", {"source": "warc"}), ("http://a/own", {})):
            connection.execute(
                sa.text(
                    "INSERT INTO captures (url, fetched_at, outcome, error, provenance)"
                    " VALUES (:url, '2024-01-01 00:00:00', 'failed', 'x', :provenance)"
                ),
                {"url": url, "provenance": json.dumps(provenance)},
            )
    with engine.begin() as connection:
        command.upgrade(alembic_config(connection), "head")
        rows = connection.execute(sa.text("SELECT url, as_latest FROM captures ORDER BY url"))
        assert [(url, bool(flag)) for url, flag in rows] == [
            ("http://a/imported", False),
            ("http://a/own", True),
        ]
    engine.dispose()


@given(st.one_of(st.text(max_size=60), st.ip_addresses().map(str)))
def test_an_ip_field_is_recorded_only_as_an_address(value: str) -> None:
    recorded = ip_address(value)
    assert recorded is None or str(ipaddress.ip_address(recorded)) == recorded


NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@given(st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2100, 1, 1)))
def test_a_capture_time_is_accepted_exactly_when_it_is_not_in_the_future(moment: datetime) -> None:
    moment = moment.replace(tzinfo=UTC, microsecond=0)
    text = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    if moment <= NOW + CLOCK_SLACK:
        assert capture_date(text, now=NOW) == text
    else:
        with pytest.raises(PayloadRefused, match="in the future"):
            capture_date(text, now=NOW)
