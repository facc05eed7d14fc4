"""Provider responses end to end through the CLI, the cited pages served on loopback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from records.offset_units import slice_in
from tests.http_fixtures import LoopbackServer
from tests.inputs.conftest import FIXTURES, fixture_text
from tests.pdf_fixtures import build_pdf
from tests.records.conftest import Backend


@pytest.fixture
def pages(http_server: LoopbackServer) -> str:
    for name in ("report.txt", "guide.txt", "report.txt?utm_source=openai"):
        body = (FIXTURES / name.partition("?")[0]).read_bytes()
        http_server.route(f"/{name}", body=body, content_type="text/plain; charset=utf-8")
    return http_server.url("").rstrip("/")


def write(tmp_path: Path, name: str, base: str, edit: Any = None) -> Path:
    document = json.loads(fixture_text(name, base))
    if edit is not None:
        edit(document)
    path = tmp_path / name
    path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    return path


def verify_json(backend: Backend, path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    done = backend.snap("verify", "--fetch", "--json", *args, str(path))
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def test_claude_response_is_captured_and_verified(
    backend: Backend, tmp_path: Path, pages: str
) -> None:
    code, report = verify_json(backend, write(tmp_path, "claude.json", pages))
    assert code == 0
    assert [r["status"] for r in report["results"]] == ["quote_found", "quote_found"]
    first = report["results"][0]
    assert first["claim"] == "the median cache hit ratio reached 87.5 percent in 2024"
    assert first["claimSpan"]["codepoint"] == {"start": 25, "end": 80}
    assert first["quote"]["exact"].startswith("In 2024 the median")
    source = (FIXTURES / "report.txt").read_text(encoding="utf-8")
    for unit, span in first["offsets"].items():
        assert slice_in(source, unit, span) == first["quote"]["exact"]
    assert first["provider"] == "Anthropic Messages"
    assert report["summary"]["answers"] == [
        {
            "answerId": "msg_01HCDu5LRGeP2o7s2xGmxyx8",
            "total": 2,
            "quoteFound": 2,
            "shareVerified": 1.0,
            "byStatus": {"quote_found": 2},
        }
    ]


def test_a_changed_number_in_cited_text_fails(backend: Backend, tmp_path: Path, pages: str) -> None:
    def change(document: dict[str, Any]) -> None:
        citation = document["response"]["content"][1]["citations"][0]
        citation["cited_text"] = citation["cited_text"].replace("87.5", "97.5")

    code, report = verify_json(backend, write(tmp_path, "claude.json", pages, change))
    assert code == 1
    assert [r["status"] for r in report["results"]] == ["not_found", "quote_found"]
    closest = report["results"][0]["closest"]
    assert "87.5" in closest["text"]
    assert set(closest["offsets"]) == {"codepoint", "utf16", "utf8"}


def test_a_wrong_document_index_shows_found_elsewhere(
    backend: Backend, tmp_path: Path, pages: str
) -> None:
    def swap(document: dict[str, Any]) -> None:
        document["response"]["content"][1]["citations"][0]["document_index"] = 1

    code, report = verify_json(backend, write(tmp_path, "claude.json", pages, swap))
    assert code == 1
    wrong = report["results"][0]
    assert wrong["status"] == "not_found"
    [elsewhere] = wrong["foundElsewhere"]
    assert elsewhere["url"] == f"{pages}/report.txt"
    assert elsewhere["documentIndex"] == 0
    human = backend.snap("verify", str(tmp_path / "claude.json"))
    assert "The quote is in another source of this answer" in human.stdout


def test_openai_url_citations_are_no_quote_with_the_closest_passage(
    backend: Backend, tmp_path: Path, pages: str
) -> None:
    code, report = verify_json(backend, write(tmp_path, "openai_responses.json", pages))
    assert code == 1
    assert {r["status"] for r in report["results"]} == {"no_quote"}
    first = report["results"][0]
    assert first["snapshotId"] is not None  # captured: that much is proven
    assert first["closest"] is not None
    assert "quotes nothing" in first["reason"]
    assert report["summary"]["byStatus"] == {"no_quote": 3}
    human = backend.snap("verify", str(tmp_path / "openai_responses.json"))
    assert human.returncode == 1
    assert "no quote to check" in human.stdout
    assert "✓" not in human.stdout


def test_perplexity_snippets_exact_one_passes_the_other_is_not_verbatim(
    backend: Backend, tmp_path: Path, pages: str
) -> None:
    code, report = verify_json(backend, write(tmp_path, "perplexity.json", pages))
    assert code == 1
    statuses = [r["status"] for r in report["results"]]
    assert statuses == ["quote_found", "snippet_not_verbatim"]
    loose = report["results"][1]
    assert "not evidence of a fabricated quote" in loose["reason"]
    assert "300 seconds" in loose["closest"]["text"]


def test_gemini_web_chunk_follows_the_grounding_redirect(
    backend: Backend, tmp_path: Path, pages: str, http_server: LoopbackServer
) -> None:
    http_server.redirect("/grounding-api-redirect/AUZIYQGx7r", f"{pages}/report.txt")
    code, report = verify_json(backend, write(tmp_path, "gemini.json", pages))
    assert code == 1
    web, retrieved = report["results"]
    assert web["status"] == "no_quote"
    assert web["claimSpan"]["utf8"] == {"start": 48, "end": 100}
    assert retrieved["status"] == "quote_found"
    audit = backend.snap("audit", "--json", "--url", f"{pages}/grounding-api-redirect/AUZIYQGx7r")
    assert f"{pages}/report.txt" in audit.stdout  # the final URL is recorded


def test_streaming_transcript_with_a_documents_map(
    backend: Backend, tmp_path: Path, pages: str
) -> None:
    transcript = tmp_path / "stream.sse"
    transcript.write_text((FIXTURES / "claude_stream.sse").read_text(encoding="utf-8"))
    mapping = tmp_path / "documents.json"
    mapping.write_text(json.dumps({"Edge caching report": f"{pages}/report.txt"}))
    code, report = verify_json(backend, transcript, "--documents", str(mapping))
    assert code == 0
    assert report["results"][0]["claim"] == "tiered caching cut origin load tenfold"


def test_no_quote_citations_survive_reverify(backend: Backend, tmp_path: Path, pages: str) -> None:
    verify_json(backend, write(tmp_path, "openai_chat.json", pages))
    done = backend.snap("reverify", "--json")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert [r["status"] for r in report["results"]] == ["no_quote"]


def test_a_pdf_cited_by_page_is_checked_on_that_page(backend: Backend, tmp_path: Path) -> None:
    pdf = tmp_path / "annual.pdf"
    pdf.write_bytes(
        build_pdf(
            [
                ["Annual report 2024.", "This report covers the whole year."],
                [
                    "Revenue grew by 12 percent compared with the previous year.",
                    "Subscriptions drove most of the growth.",
                ],
                ["Outlook: costs are expected to stay flat."],
            ]
        )
    )
    fetched = backend.snap("fetch", "--json", str(pdf))
    assert fetched.returncode == 0, fetched.stderr
    snapshot_id = json.loads(fetched.stdout)["snapshotId"]
    mapping = tmp_path / "documents.json"
    mapping.write_text(json.dumps({"Annual report (PDF)": snapshot_id}))
    response = write(tmp_path, "claude_pdf_pages.json", "")
    code, report = verify_json(backend, response, "--documents", str(mapping))
    assert code == 0
    assert [r["status"] for r in report["results"]] == ["quote_found", "quote_found"]
    assert report["results"][0]["page"] == "2"

    def wrong_page(document: list[Any]) -> None:
        document[1]["content"][0]["citations"][0].update(start_page_number=3, end_page_number=4)

    code, report = verify_json(
        backend,
        write(tmp_path, "claude_pdf_pages.json", "", wrong_page),
        "--documents",
        str(mapping),
    )
    assert code == 1
    assert report["results"][0]["status"] == "position_mismatch"
    assert "page 2" in report["results"][0]["reason"]
