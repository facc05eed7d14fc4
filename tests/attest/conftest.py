"""A loopback time-stamping authority and a workspace that signs and stamps."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from records.attest.signing import KeyType, write_new_key
from records.workspace import Workspace
from snap.config import Settings
from tests.attest.tsa import LocalTsa, local_tsa


@pytest.fixture(scope="module")
def tsa() -> Iterator[LocalTsa]:
    with local_tsa() as running:
        yield running


def attesting_env(home: Path, tsa: LocalTsa | None) -> dict[str, str]:
    env = {"SNAP_HOME": str(home)}
    if tsa is not None:
        env |= {"SNAP_TSA_URL": tsa.url, "SNAP_TSA_CHAIN": str(tsa.chain_path)}
    return env


@pytest.fixture
def signed_workspace(tmp_path: Path, tsa: LocalTsa) -> Iterator[Workspace]:
    home = tmp_path / "home"
    write_new_key(home / "signing-key.pem", KeyType.ECDSA_P256)
    workspace = Workspace.open(Settings.from_env(attesting_env(home, tsa)))
    try:
        yield workspace
    finally:
        workspace.close()
