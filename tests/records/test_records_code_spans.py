"""Code spans end to end (issue 23): a page whose code is in ``<code>``/``<pre>``/``<kbd>`` is
captured over loopback, its code spans are stored as a ``code`` blob named by the extraction
and the capture's manifest, and ``snap verify`` compares that code as code, on both backends.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from records.workspace import Workspace
from snapshotter.extract.code_spans import decode
from tests.http_fixtures import LoopbackServer
from tests.records.conftest import Backend

PAGE = b"""<!doctype html><html><head><meta charset="utf-8"><title>split_at</title></head>
<body><nav>Home</nav><main><h1>slice::split_at</h1>
<p>Divides one slice into two at an index. The signature returns
<code>(&amp;[T], &amp;[T])</code>, the two halves; read them with <code>matrix[2][3]</code>
or <code>arr[1]</code>. It fails with the type <code>E</code>, and the helper returns
<code>-&gt; int | None</code> on failure. Press <kbd>Ctrl</kbd>+<kbd>C</kbd> to stop.</p>
<pre><code>fn main() {
    let (left, right) = v.split_at(2);
    assert_eq!(left, [1, 2]);
}</code></pre>
<p>The function panics if the index is larger than the length of the slice, which keeps
every later access within bounds, as the rest of this chapter explains at some length.</p>
</main></body></html>"""

FOUND = [
    "The signature returns (&[T], &[T]), the two halves",
    "read them with matrix[2][3] or arr[1]",
    "It fails with the type E",
    "the helper returns -> int | None on failure",
    "let (left, right) = v.split_at(2);",
    "assert_eq!(left, [1,2]);",
]
NOT_FOUND = [  # each found without code spans: the left-open cases of docs/matching.md
    "The signature returns (&[T] &[T]), the two halves",
    "read them with matrix or arr",
    "It fails with the type e",
    "the helper returns -> int",
    "let (left, right) = v.split_at(2)",
]


def _verify(backend: Backend, tmp_path: Path, url: str, quotes: list[str]) -> list[str]:
    path = tmp_path / "citations.json"
    path.write_text(json.dumps([{"url": url, "quote": q} for q in quotes]), encoding="utf-8")
    done = backend.snap("verify", str(path), "--json")
    assert "Traceback" not in done.stderr, done.stderr
    return [result["status"] for result in json.loads(done.stdout)["results"]]


def _capture(backend: Backend, server: LoopbackServer) -> tuple[str, dict[str, Any]]:
    server.route("/split_at", body=PAGE, content_type="text/html; charset=utf-8")
    url = server.url("/split_at")
    done = backend.snap("fetch", url, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    return url, json.loads(done.stdout)


def test_code_is_recorded_and_compared_as_code(
    backend: Backend, workspace: Workspace, http_server: LoopbackServer, tmp_path: Path
) -> None:
    url, record = _capture(backend, http_server)
    code_hash = record["code"]
    assert code_hash is not None
    assert record["provenance"]["codeBlob"]["hash"] == code_hash
    with backend.sql() as connection:
        row = connection.execute(
            sa.text("SELECT code_hash, text_hash FROM extractions WHERE snapshot_id = :s"),
            {"s": record["snapshotId"]},
        ).one()
    assert row.code_hash == code_hash
    data = workspace.store.get("code", code_hash)
    text = workspace.store.get("text", row.text_hash).decode("utf-8")
    spans = decode(data, text_length=len(text), digest=code_hash)
    coded = [text[start:end] for start, end in spans.ranges]
    assert "(&[T], &[T])" in coded
    assert "Ctrl" in coded
    assert any(piece.startswith("fn main() {") for piece in coded)
    assert _verify(backend, tmp_path, url, FOUND) == ["quote_found"] * len(FOUND)
    assert _verify(backend, tmp_path, url, NOT_FOUND) == ["not_found"] * len(NOT_FOUND)


def test_the_manifest_names_the_code_blob_and_a_damaged_one_is_an_integrity_failure(
    backend: Backend, workspace: Workspace, http_server: LoopbackServer, tmp_path: Path
) -> None:
    url, record = _capture(backend, http_server)
    code_hash = record["code"]
    manifest_hash = record["provenance"]["manifest"]["hash"]
    manifest = json.loads(workspace.store.get("manifest", manifest_hash))
    size = record["provenance"]["codeBlob"]["size"]
    assert {"kind": "code", "sha256": code_hash, "size": size} in manifest["blobs"]
    backend.corrupt("code", code_hash)
    assert _verify(backend, tmp_path, url, FOUND[:1]) == ["integrity_failure"]
    done = backend.snap("fsck", "--json")
    assert done.returncode != 0
    assert code_hash in done.stdout
