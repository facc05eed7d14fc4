"""The HTTP stack is loaded by ``snap serve`` only: every other command starts without it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_startup_imports import loaded, present

HTTP_STACK = ("fastapi", "starlette", "pydantic", "uvicorn", "prometheus_client", "anyio")


def test_help_and_serve_help_load_no_http_stack(tmp_path: Path) -> None:
    for args in (("--help",), ("serve", "--help")):
        done, modules = loaded(tmp_path, *args)
        assert done.returncode == 0, done.stderr
        assert present(modules, HTTP_STACK) == []


def test_verify_loads_no_http_stack(tmp_path: Path) -> None:
    source = tmp_path / "note.txt"
    source.write_text("The origin serves only 1 request in 10.")
    done, _ = loaded(tmp_path, "fetch", "--json", str(source))
    citation = tmp_path / "citation.json"
    snapshot_id = json.loads(done.stdout)["snapshotId"]
    citation.write_text(json.dumps({"snapshotId": snapshot_id, "quote": "1 request in 10"}))
    done, modules = loaded(tmp_path, "verify", str(citation))
    assert done.returncode == 0, done.stderr
    assert present(modules, HTTP_STACK) == []


def test_print_openapi_loads_it_and_opens_nothing(tmp_path: Path) -> None:
    """The control: the checks above can fail, since serving does load the stack."""
    done, modules = loaded(tmp_path, "serve", "--print-openapi")
    assert done.returncode == 0, done.stderr
    assert "fastapi" in modules
    assert "/v1/verify" in json.loads(done.stdout)["paths"]
    assert not (tmp_path / "home").exists()
