"""The evidence page, rendered from real records: content, escaping of hostile text, policy."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import uuid
from pathlib import Path
from urllib.parse import quote

import pytest

from records.db import Database
from snap.errors import InputError, RecordNotFound
from snapshotter.weburl import web_url
from tests.db_support import empty_tables
from tests.exports.conftest import CHANGED, FOUND, Home, recorded_article
from tests.exports.html_dom import ALLOWED_TAGS, parsed
from tests.http_fixtures import LoopbackServer
from tests.records.conftest import postgres_url, s3_bucket, s3_env  # noqa: F401  (fixtures)
from tests.s3_support import s3_endpoint  # noqa: F401  (fixture)
from verifier.status import Status


def test_a_found_quote_is_marked_with_its_status_provenance_and_a_live_link(
    home: Home, http_server: LoopbackServer
) -> None:
    url = recorded_article(home, http_server)
    [result] = home.verify({"citationId": "c-found", "url": url, "quote": FOUND})
    assert result["status"] == "quote_found"
    page = home.page("c-found")
    dom = parsed(page)
    assert dom.inside["mark"] == [FOUND]
    assert Status.QUOTE_FOUND.headline in page
    assert Status.QUOTE_FOUND.meaning in page
    assert result["snapshotId"] in page
    assert "127.0.0.1" in page  # the server address recorded at capture
    assert "intact" in page
    # The only link off the page: the live page, scrolled to the quote by a text fragment.
    assert dom.links() == [f"{url}#:~:text=the%20origin%20serves%20only%201%20request%20in%2010"]
    # Beside it, the files of the capture's seal and log proofs, saved from the page
    saved = dom.saved()
    assert {"capture-1.manifest.json", "capture-1.proof.json", "check_inclusion.py"} <= set(saved)
    [lines] = dom.data_blocks()
    [capture] = [line for line in lines if "captureId" in line]
    assert saved["capture-1.manifest.json"] == capture["manifest"]["document"].encode()


def test_a_quote_not_found_shows_the_closest_passage_with_the_differing_word_marked(
    home: Home, http_server: LoopbackServer
) -> None:
    url = recorded_article(home, http_server)
    [result] = home.verify({"citationId": "c-changed", "url": url, "quote": CHANGED})
    assert result["status"] == "not_found"
    page = home.page("c-changed")
    dom = parsed(page)
    # only the changed word, by the alignment: the source's struck through, the quote's under
    # it, each with a sign and brackets as text, not only a line or colour
    assert dom.inside["ins"] == ["[+1000]"]
    assert '<del title="in the source, not in the quote">[-100]</del>' in page
    assert "mark" not in dom.inside
    assert Status.NOT_FOUND.headline in page
    assert not dom.links()  # no link for a failed quote


def test_an_answer_gets_one_page_with_every_citation_and_its_timeline(
    home: Home, http_server: LoopbackServer
) -> None:
    url = recorded_article(home, http_server)
    answer = {
        "answerId": "a-42",
        "claims": [
            {"text": "A 90% ratio leaves a tenth.", "url": url, "quote": FOUND},
            {"text": "99% leaves a thousandth.", "url": url, "quote": CHANGED},
        ],
    }
    results = home.verify(answer)
    home.verify(answer, name="again.json")  # a second check: two entries in each timeline
    page = home.page(*(r["citationId"] for r in results))
    dom = parsed(page)
    assert dom.inside["h1"] == ["Evidence for the 2 citations of answer a-42"]
    assert "1 of 2 quotes found" in " ".join(page.split())
    assert [h for h in dom.hrefs() if h.startswith("#")] == ["#citation-1", "#citation-2"]
    assert page.count('<ol class="timeline">') == 2
    assert len(re.findall(r"<li><time[^>]*>[^<]*</time> <span aria-hidden", page)) == 4
    assert "A 90% ratio leaves a tenth." in page


CLAIM = "<iframe src=javascript:alert(2)></iframe>"
HOSTILE_TEXT = '<script>alert("text")</script> & <img src=x onerror=alert(1)> "quoted" \u202eevil'


def test_hostile_page_text_urls_and_claims_cannot_add_markup(
    home: Home, http_server: LoopbackServer
) -> None:
    body = (
        "<!DOCTYPE html><html><body><main><h1>Notes</h1>"
        "<p>Before the payload comes a calm sentence of ordinary words.</p>"
        "<p>&lt;script&gt;alert(&quot;text&quot;)&lt;/script&gt; &amp; "
        "&lt;img src=x onerror=alert(1)&gt; &quot;quoted&quot; \u202eevil</p>"
        "<p>After the payload comes another calm sentence of ordinary words.</p>"
        "</main></body></html>"
    )
    path = '/x"onmouseover="alert(1)"<b>'
    http_server.route(quote(path, safe="/()="), body=body.encode())  # as it goes on the wire
    url = http_server.url(path)
    home.fetch(url)
    [by_id] = home.verify({"citationId": 'c-<b>"hostile"</b>', "url": url, "quote": HOSTILE_TEXT})
    answer = {"answerId": "a-1", "claims": [{"text": CLAIM, "url": url, "quote": HOSTILE_TEXT}]}
    [by_claim] = home.verify(answer, name="answer.json")
    assert by_id["status"] == by_claim["status"] == "quote_found"
    page = home.page(by_id["citationId"], by_claim["citationId"])
    dom = parsed(page)
    assert {tag for tag, _ in dom.tags} <= ALLOWED_TAGS
    assert not [name for _, attrs in dom.tags for name in attrs if name.startswith("on")]
    assert dom.inside["mark"] == [HOSTILE_TEXT, HOSTILE_TEXT]  # shown as text, exactly
    blocks = dom.data_blocks()  # the hostile URL in the manifests ends no data block
    manifests = [line["manifest"] for lines in blocks for line in lines if line.get("manifest")]
    assert manifests
    assert all("<b>" in json.loads(m["document"])["requestedUrl"] for m in manifests)
    links = dom.links()
    assert len(links) == 2
    live = web_url(url).href  # as a browser reads the link: '"', '<' and '>' escaped
    assert all(link.startswith(live + "#:~:text=") for link in links)  # quotes stay inside
    assert "&lt;iframe src=javascript:alert(2)&gt;&lt;/iframe&gt;" in page
    assert "<bdi>c-&lt;b&gt;&quot;hostile&quot;&lt;/b&gt;</bdi>" in page


def test_a_url_that_is_not_a_web_page_never_becomes_a_link(home: Home, tmp_path: Path) -> None:
    source = tmp_path / "note.html"
    source.write_text(f"<html><body><main><p>{FOUND}, said the note.</p></main></body></html>")
    home.fetch(str(source))
    [result] = home.verify({"citationId": "c-file", "url": source.as_uri(), "quote": FOUND})
    assert result["status"] == "quote_found"
    [unknown] = home.verify(
        {"citationId": "c-js", "url": "javascript:alert(1)", "quote": FOUND}, name="js.json"
    )
    assert unknown["status"] == "unknown_snapshot"
    page = home.page("c-file", "c-js")
    assert not parsed(page).links()
    assert "javascript:alert(1)" in page  # said, as text
    assert "no snapshot of this source is recorded" in page


def test_the_content_security_policy_allows_only_the_inline_style(
    home: Home, http_server: LoopbackServer
) -> None:
    url = recorded_article(home, http_server)
    home.verify({"citationId": "c-found", "url": url, "quote": FOUND})
    dom = parsed(home.page("c-found"))
    [policy] = [
        attrs["content"]
        for tag, attrs in dom.tags
        if tag == "meta" and attrs.get("http-equiv") == "Content-Security-Policy"
    ]
    [style] = dom.inside["style"]
    digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
    assert policy is not None
    assert policy.startswith("default-src 'none'; ")
    assert f"style-src 'sha256-{digest}'" in policy
    assert ("html", {"lang": "en"}) in dom.tags
    assert "@media print" in style


def test_a_damaged_text_blob_is_reported_on_the_page_not_raised(
    home: Home, http_server: LoopbackServer
) -> None:
    url = recorded_article(home, http_server)
    [result] = home.verify({"citationId": "c-found", "url": url, "quote": FOUND})
    text_hash = home.fetch(url)["hashes"]["text"]
    hexdigest = text_hash.removeprefix("sha256:")
    blob = Path(home.env["SNAP_HOME"]) / "store" / "text" / "sha256" / hexdigest[:2] / hexdigest
    blob.chmod(0o644)
    blob.write_bytes(blob.read_bytes().replace(b"origin", b"ORIGIN"))
    page = home.page(result["citationId"])
    assert "the stored snapshot cannot be read back intact" in page
    assert "DAMAGED" in page
    assert "<mark>" not in page


def test_unknown_ids_and_an_empty_selection_are_errors(
    home: Home, http_server: LoopbackServer
) -> None:
    recorded_article(home, http_server)
    with pytest.raises(RecordNotFound):
        home.page("c-never-recorded")
    with pytest.raises(InputError):
        home.page()


@pytest.fixture
def production_home(
    home: Home,
    postgres_url: str,  # noqa: F811
    s3_bucket: str,  # noqa: F811
    s3_env: dict[str, str],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> Home:
    """The production pair: PostgreSQL (emptied) and an Object-Locked S3 bucket on loopback."""
    for key, value in s3_env.items():
        monkeypatch.setenv(key, value)  # the in-process workspace's boto3 reads them too
    database = Database(postgres_url)
    empty_tables(database.engine)
    database.dispose()
    store = f"s3://{s3_bucket}/{uuid.uuid4().hex}"
    home.env |= s3_env | {"SNAP_DATABASE_URL": postgres_url, "SNAP_STORE": store}
    return home


@pytest.mark.s3
@pytest.mark.postgres
def test_on_s3_and_postgresql_the_page_names_version_ids_and_retention(
    production_home: Home, http_server: LoopbackServer
) -> None:
    home = production_home
    url = recorded_article(home, http_server)
    [result] = home.verify({"citationId": "c-found", "url": url, "quote": FOUND})
    assert result["status"] == "quote_found"
    code, audited = home.snap_json("audit", "c-found")
    assert code == 0
    snapshot = audited["snapshot"]
    page = home.page("c-found")
    assert snapshot["versionIds"]["raw"]
    assert f"raw <code>{snapshot['versionIds']['raw']}</code>" in page
    assert f"{snapshot['retention']['mode']} until" in page
    assert snapshot["store"].startswith("s3://")
    assert snapshot["store"] in page
    assert parsed(page).inside["mark"] == [FOUND]
