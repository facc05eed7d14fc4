"""The JSON a user's scripts read from ``snap audit``, ``snap jobs``, ``snap show``, ``snap fsck``
and ``snap reextract`` (``--json``), pinned: every key, in order, every value's type, and the
values that name a state (statuses, blob states, batch kinds, outcomes).

The use cases return typed objects and one serialiser per wire shape turns them into JSON
(records/wire.py); these shapes were taken from the commands' output before that change, so a
renamed key, a time printed another way or a state spelled differently fails here instead of in
someone's pipeline. Volatile values (ids, digests, times, paths) are reduced to their type.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.http_fixtures import LoopbackServer
from tests.records.conftest import Backend
from tests.records.wire_shapes_pinned import PINNED

QUOTE = "The harbour wall was finished in the spring of 1891"
PAGE = (
    "<html><head><title>Harbour</title></head><body><article><h1>The harbour</h1>"
    f"<p>{QUOTE}, after two storms.</p><p>Ships still moor there each summer, as they did"
    " before the wall was built, when the bay was open to the weather.</p>"
    "</article></body></html>"
).encode()
# Keys whose value is a word of the vocabulary (or a fixed word): kept as they are.
WORDS = {
    "status",
    "state",
    "kind",
    "outcome",
    "what",
    "method",
    "errorKind",
    "unit",
    "op",
    "attestation",  # an imported record's: whether its archive's attestation holds for it
}
TIMES = {
    "time": re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$"),  # to the second
    "time.us": re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$"),  # to the microsecond
}


def type_of(value: Any, key: str) -> str:
    """A value as the schema names it: its JSON type, a time by its form, a word itself."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, str):
        if key in WORDS:
            return repr(value)
        return next((name for name, form in TIMES.items() if form.match(value)), "str")
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return type(value).__name__


def flat(value: Any, path: str, out: dict[str, set[str]], key: str = "") -> dict[str, set[str]]:
    """Every path in the document (``a.b[].c``, list items merged), in order, with the types
    found there."""
    out.setdefault(path, set()).add(type_of(value, key))
    if isinstance(value, dict):
        for name, item in value.items():
            flat(item, f"{path}.{name}", out, name)
    elif isinstance(value, list):
        for item in value:
            flat(item, f"{path}[]", out, key)
    return out


def shapes_found(documents: dict[str, Any]) -> dict[str, set[str]]:
    """Every path of every named document, in order, with the types found there."""
    found: dict[str, set[str]] = {}
    for name, document in documents.items():
        flat(document, name, found)
    return found


def types_not_pinned(found: dict[str, set[str]], pinned: dict[str, str]) -> dict[str, list[str]]:
    """The paths where a type turned up that ``pinned`` (``"string|null"`` per path) lacks."""
    return {
        path: sorted(types - set(pinned[path].split("|")))
        for path, types in found.items()
        if not types <= set(pinned[path].split("|"))
    }


def run_json(backend: Backend, *args: str, code: int = 0) -> Any:
    done = backend.snap(*args, "--json")
    assert done.returncode == code, done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def documents(backend: Backend, http_server: LoopbackServer, tmp_path: Path) -> dict[str, Any]:
    """One capture, two citations (one found, one not), a re-verification batch, a capture
    batch with a failure and a re-extraction batch, then every read-only command's JSON."""
    http_server.route("/harbour", body=PAGE)
    url = http_server.url("/harbour")
    fetched = run_json(backend, "fetch", url)
    snapshot = fetched["snapshotId"]
    citations = tmp_path / "citations.json"
    citations.write_text(
        json.dumps(
            [
                {"citationId": "found", "url": url, "quote": QUOTE},
                {"citationId": "gone", "url": url, "quote": "The harbour wall fell in 1891"},
            ]
        )
    )
    run_json(backend, "verify", str(citations), code=1)
    reverified = run_json(backend, "reverify", "--enqueue", code=1)
    urls = tmp_path / "urls.txt"
    urls.write_text(f"{url}\n{http_server.url('/nowhere')}\n")
    return {
        "fetch --enqueue": run_json(backend, "fetch", "--enqueue", str(urls), code=1),
        "reverify --enqueue": reverified,
        "reextract": run_json(backend, "reextract"),
        "reextract --enqueue": run_json(backend, "reextract", "--enqueue"),
        "jobs BATCH": run_json(backend, "jobs", reverified["batchId"], code=1),
        "jobs": run_json(backend, "jobs"),
        "audit CITATION": run_json(backend, "audit", "found"),
        "audit --url": run_json(backend, "audit", "--url", url),
        "audit --snapshot": run_json(backend, "audit", "--snapshot", snapshot),
        "show": run_json(backend, "show", snapshot),
        "show --headers": run_json(backend, "show", "--headers", snapshot),
        "show --raw": run_json(backend, "show", "--raw", snapshot),
        "show --raw --output": run_json(
            backend, "show", "--raw", "--output", str(tmp_path / "raw.html"), snapshot
        ),
        "fsck": run_json(backend, "fsck"),
    }


def test_every_wire_shape_is_as_pinned(documents: dict[str, Any]) -> None:
    found = shapes_found(documents)
    assert list(found) == list(PINNED)  # every key, in order, and no other
    assert types_not_pinned(found, PINNED) == {}
