"""The OpenAPI document declares the errors the service answers, and only those.

Both ways: every error status an operation declares is one it can answer (the table below,
each status with where it comes from, and a row of docs/http.md's problem table), always as a
problem document; and a deliberately bad request to each operation gets a status its own
entry declares. FastAPI's 422 ``HTTPValidationError`` is never in it: snap answers a bad
parameter or body 400.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from snap.config import Settings
from snap.service.app import ServiceConfig, openapi_document
from snap.service.problems import MEDIA_TYPE
from tests.service.conftest import TOKEN, client_for

DOCS = Path(__file__).resolve().parents[2] / "docs" / "http.md"
PROBLEM = {MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}}
MAX_BODY = 2048

# Any request: 413 (a body over SNAP_MAX_INPUT_BYTES, test_service_guards), 504 (past
# --request-timeout, test_service_bounds), 500 (a bug, test_service_guards).
EVERY = {413, 500, 504}
# Behind the token and the parameter checks: 400 (a bad parameter or body, a NUL,
# allow_private), 401 (no token): test_service_guards, test_service_urls.
GUARDED = EVERY | {400, 401}
# The database or the store cannot be used (DatabaseError, StoreError, BrokerError): 503.
ANSWERS: dict[tuple[str, str], set[int]] = {
    # 413 --max-citations too, 422 NothingToCheck (test_service_guards); a capture that fails
    # under fetch=true is its citation's reason, never an error of the request
    ("post", "/v1/verify"): GUARDED | {422, 503},
    # 403 AddressRefused, 409 ExtractionConflict, 501 BrowserUnavailable (test_browser_service),
    # 502 CaptureError and its kinds
    ("post", "/v1/captures"): GUARDED | {403, 409, 501, 502, 503},
    ("get", "/v1/snapshots/{snapshot_id}"): GUARDED | {404, 503},  # RecordNotFound
    # 409 IntegrityError, 410 BlobNotFound (test_service_public) as the text is read
    ("get", "/v1/snapshots/{snapshot_id}/text"): GUARDED | {404, 409, 410, 503},
    ("get", "/v1/citations/{citation_id}"): GUARDED | {404, 503},
    ("get", "/v1/audit"): GUARDED | {404, 503},
    ("post", "/v1/reverify"): GUARDED | {404, 503},  # nothing matches, an unknown run
    ("post", "/v1/log/checkpoint"): GUARDED | {409, 503},  # AttestationFailure; the TSA
    ("get", "/v1/jobs/{batch}"): GUARDED | {404, 503},
    ("get", "/healthz"): EVERY | {503},  # open: no token, no parameters
    ("get", "/metrics"): GUARDED,  # from memory (or the workers' files): no backend
}


def operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, entries in document["paths"].items():
        for method, operation in entries.items():
            yield method, path, operation


def error_statuses(operation: dict[str, Any]) -> set[int]:
    return {int(status) for status in operation["responses"] if int(status) >= 400}


def documented_statuses() -> set[int]:
    """The statuses of docs/http.md's problem table (its rows start with ``| 4xx |``)."""
    text = DOCS.read_text(encoding="utf-8")
    return {int(status) for status in re.findall(r"^\| ([45]\d\d) \| `", text, re.MULTILINE)}


def test_fastapis_validation_error_is_not_declared() -> None:
    document = openapi_document()
    assert "ValidationError" not in json.dumps(document)
    assert set(document["components"]["schemas"]) == {
        "Problem",
        "CaptureRequest",
        "ReverifyRequest",
    }


def test_every_declared_error_is_one_the_operation_answers_as_a_problem() -> None:
    documented = documented_statuses()
    assert {400, 401, 404, 413, 422, 503, 504} <= documented  # the table was read
    seen = set()
    for method, path, operation in operations(openapi_document()):
        seen.add((method, path))
        declared = error_statuses(operation)
        assert declared == ANSWERS[method, path], (method, path)
        assert declared <= documented, (method, path)
        for status in declared:
            assert operation["responses"][str(status)]["content"] == PROBLEM, (path, status)
    assert seen == set(ANSWERS)


def violating(schema: dict[str, Any]) -> str | None:
    """A query or path value the parameter's schema refuses, if one is spelled simply."""
    for option in schema.get("anyOf", [schema]):
        if option.get("type") == "integer":
            return "-1" if option.get("minimum") == 0 else "one"
        if option.get("type") == "boolean":
            return "maybe"
        if "maxLength" in option:
            return "x" * (option["maxLength"] + 1)
    return None


def bad_requests(path: str, operation: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Requests each wrong in one way, named, as keyword arguments of ``TestClient.request``."""
    parameters = operation.get("parameters", [])
    path_values = {p["name"]: "x" for p in parameters if p["in"] == "path"}
    query = {p["name"]: "x" for p in parameters if p["in"] == "query" and p.get("required")}
    plain: dict[str, Any] = {"url": path.format(**path_values), "params": query}
    if "requestBody" in operation:
        plain["content"] = b"{}"
    yield "a body over the limit", plain | {"content": b"[" + b" " * MAX_BODY + b"]"}
    if operation.get("security"):
        yield "no token", plain | {"headers": {"Authorization": ""}}
        yield "allow_private", plain | {"params": query | {"allow_private": "1"}}
    for parameter in parameters:
        name = parameter["name"]
        if parameter["in"] == "path":
            for value in ("a%00b", violating(parameter["schema"])):
                if value is not None:
                    url = path.format(**(path_values | {name: value}))
                    yield f"{name}={value[:12]}", plain | {"url": url}
            continue
        for value in ("a\x00b", violating(parameter["schema"])):
            if value is not None:
                yield f"{name}={value[:12]}", plain | {"params": query | {name: value}}
        if parameter.get("required"):
            missing = {k: v for k, v in query.items() if k != name}
            yield f"no {name}", plain | {"params": missing}
    if "requestBody" in operation:
        yield "a body that is no JSON", plain | {"content": b"{nope"}
        yield "a body of the wrong shape", plain | {"content": b'[{"quote": 1}]'}


@pytest.fixture
def guarded(settings: Settings) -> Iterator[TestClient]:
    config = ServiceConfig(settings, tokens=(TOKEN.encode(),), max_input_bytes=MAX_BODY)
    with client_for(config) as opened:
        opened.headers["Authorization"] = f"Bearer {TOKEN}"
        yield opened


def test_a_bad_request_to_each_operation_gets_a_problem_it_declares(guarded: TestClient) -> None:
    document = guarded.get("/openapi.json").json()
    answered = set()
    for method, path, operation in operations(document):
        declared = error_statuses(operation)
        for wrong, request in bad_requests(path, operation):
            response = guarded.request(method.upper(), **request)
            where = f"{method.upper()} {path}, {wrong}: {response.status_code}"
            assert response.status_code in declared, where
            assert response.headers["content-type"] == MEDIA_TYPE, where
            assert response.json()["status"] == response.status_code, where
            answered.add(response.status_code)
    assert {400, 401, 413} <= answered  # each kind of refusal was met, on some operation
