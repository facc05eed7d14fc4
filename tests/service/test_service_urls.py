"""What URLs the service accepts: never a path of the server, never cloud metadata (even when
started with --allow-private), never a NUL; problems say their type. Names are resolved in
this process (the resolver is replaced) and nothing outside loopback is contacted."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from snap.service.app import ServiceConfig
from tests.inputs.conftest import FIXTURES, fixture_text
from tests.service import netguard
from tests.service.conftest import client_for, embedded_settings

METADATA = "169.254.169.254"
LOCAL_LOOKING = ["http:x.txt", "http:/x/secret.txt", "https:/secret.html"]


@pytest.fixture
def server_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The server's working folder holds files whose names a "URL" could spell."""
    folder = tmp_path / "cwd"
    (folder / "http:" / "x").mkdir(parents=True)
    (folder / "https:").mkdir()
    for name in ("http:x.txt", "http:/x/secret.txt", "https:/secret.html", "http:/report.txt"):
        (folder / name).write_text("server secret: the origin serves only 1 request in 10")
    monkeypatch.chdir(folder)
    return folder


@pytest.fixture
def metadata_name(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``metadata.test`` resolves to the metadata address; the lookups made are listed."""
    looked_up: list[str] = []

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        looked_up.append(host)
        if host == "metadata.test":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (METADATA, port or 80))]
        return netguard.guarded_getaddrinfo(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return looked_up


@pytest.fixture
def no_connect(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    attempts: list[object] = []

    def refuse(address: object, *args: object, **kwargs: object) -> socket.socket:
        attempts.append(address)
        raise ConnectionRefusedError(f"a connection to {address} was attempted")

    monkeypatch.setattr(socket, "create_connection", refuse)
    return attempts


@pytest.mark.parametrize("url", LOCAL_LOOKING)
def test_captures_never_read_a_file_of_the_server(
    private_client: TestClient, server_folder: Path, url: str
) -> None:
    response = private_client.post("/v1/captures", json={"url": url})
    assert response.status_code == 400, response.text
    assert "not an absolute URL with a host" in response.json()["detail"]
    assert response.json()["exitCode"] == 2


@pytest.mark.parametrize("url", LOCAL_LOOKING)
def test_verify_fetch_never_reads_a_file_of_the_server(
    private_client: TestClient, server_folder: Path, url: str
) -> None:
    citation = {"url": url, "quote": "the origin serves only 1 request in 10"}
    response = private_client.post("/v1/verify?fetch=true", json=citation)
    assert response.status_code == 200, response.text
    result = response.json()["results"][0]
    assert result["status"] == "unknown_snapshot"
    assert "not an absolute URL with a host" in result["reason"]


def test_metadata_is_refused_by_a_service_started_with_allow_private(
    private_client: TestClient, metadata_name: list[str], no_connect: list[object]
) -> None:
    response = private_client.post("/v1/captures", json={"url": "http://metadata.test/latest/"})
    document = response.json()
    assert response.status_code == 403, response.text
    assert document["errorType"] == "AddressRefused"
    assert "cloud metadata" in document["detail"]
    assert no_connect == []
    for url in ("http://[::ffff:169.254.169.254]/", "http://[::ffff:a9fe:a9fe]/"):
        response = private_client.post("/v1/captures", json={"url": url})
        assert response.status_code == 403, response.text


def test_metadata_is_refused_under_an_allow_list_covering_it(
    tmp_path: Path, metadata_name: list[str], no_connect: list[object]
) -> None:
    import ipaddress

    everything = (ipaddress.ip_network("0.0.0.0/0"), ipaddress.ip_network("::/0"))
    settings = embedded_settings(tmp_path / "home", allow_networks=everything)
    with client_for(ServiceConfig(settings)) as client:
        response = client.post("/v1/captures", json={"url": "http://metadata.test/"})
    assert response.status_code == 403, response.text
    assert no_connect == []


def _provider_inputs() -> list[str]:
    return sorted(p.name for p in FIXTURES.iterdir() if p.suffix in (".json", ".sse"))


@pytest.mark.parametrize("name", _provider_inputs())
@pytest.mark.parametrize("base", ["http://metadata.test", "http:"])
def test_verify_fetch_with_every_adapter_refuses_metadata_and_paths(
    private_client: TestClient,
    metadata_name: list[str],
    no_connect: list[object],
    server_folder: Path,
    name: str,
    base: str,
) -> None:
    """Whatever the input format, a URL from model output that names the metadata service or
    spells a path of the server is never fetched nor read (the server allows private ranges)."""
    text = fixture_text(name, base)
    response = private_client.post("/v1/verify?fetch=true", content=text.encode())
    assert no_connect == []
    if response.status_code == 400:  # an input the format itself refuses
        return
    assert response.status_code == 200, response.text
    for result in response.json()["results"]:
        assert result["status"] != "quote_found", result
    snapshots = private_client.get("/v1/audit", params={"url": f"{base}/report.txt"})
    captured = snapshots.json().get("snapshots", []) if snapshots.status_code == 200 else []
    assert captured == []


# --- NUL and other control characters ---------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/v1/snapshots/ab%00cd", None),
        ("GET", "/v1/snapshots/ab%00cd/text", None),
        ("GET", "/v1/citations/c-1%00", None),
        ("GET", "/v1/jobs/b%00", None),
        ("GET", "/v1/audit?url=http://127.0.0.1:9/%00", None),
        ("POST", "/v1/captures", {"url": "http://127.0.0.1:9/a\u0000b"}),
        ("POST", "/v1/reverify", {"run": "r\u0000"}),
        ("POST", "/v1/reverify", {"url": "http://127.0.0.1:9/\u0000"}),
        ("POST", "/v1/verify", {"url": "http://127.0.0.1:9/\u0000", "quote": "a quote"}),
        ("POST", "/v1/verify", {"citationId": "c\u0000", "url": "http://x.test/", "quote": "q"}),
        ("POST", "/v1/verify", {"url": "http://x.test/", "quote": "nul \u0000 here"}),
    ],
)
def test_a_nul_anywhere_is_400_not_503(
    client: TestClient, method: str, path: str, body: Any
) -> None:
    content = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    response = client.request(method, path, content=content, headers=headers)
    assert response.status_code == 400, response.text
    document = response.json()
    assert document["exitCode"] == 2
    assert document["type"] == "/problems/unusable-input"
    assert "U+0000" in document["detail"] or "NUL character" in document["detail"]


def test_a_nul_in_the_documents_map_is_400(client: TestClient) -> None:
    documents = json.dumps({"0": "http://x.test/\u0000"})
    response = client.post("/v1/verify", params={"documents": documents}, content=b"[]")
    assert response.status_code == 400, response.text


@pytest.mark.parametrize(
    "field", ["allow_private", "allow_networks", "allowNetworks", "allow-network"]
)
def test_guard_settings_in_a_request_are_refused_with_a_type(
    client: TestClient, field: str
) -> None:
    response = client.post("/v1/captures", json={"url": "http://127.0.0.1:9/", field: True})
    document = response.json()
    assert response.status_code == 400
    assert document["type"] == "/problems/unusable-input"
    assert document["errorType"] == "InputError"
    assert "is server configuration" in document["detail"]
    response = client.post("/v1/verify", params={field: "0.0.0.0/0"}, content=b"[]")
    assert response.status_code == 400
    assert "is server configuration" in response.json()["detail"]


def test_a_nul_never_reaches_postgresql(postgres_url: str, tmp_path: Path) -> None:
    """On PostgreSQL (which stores no NUL) the same requests were 503 "database unavailable"."""
    settings = embedded_settings(tmp_path / "home", database_url=postgres_url)
    with client_for(ServiceConfig(settings)) as client:
        for path in (
            "/v1/citations/c-1%00",
            "/v1/snapshots/ab%00cd",
            "/v1/jobs/b%00",
            "/v1/audit?url=http://x.test/%00",
        ):
            response = client.get(path)
            assert response.status_code == 400, (path, response.text)
        for body in ({"run": "r\u0000"}, {"url": "http://x.test/\u0000"}):
            response = client.post("/v1/reverify", json=body)
            assert response.status_code == 400, response.text
        response = client.post("/v1/captures", json={"url": "http://x.test/\u0000"})
        assert response.status_code == 400, response.text
