"""What the use cases need to know of snap's configuration: plain values, in this layer.

The shell builds them from its settings (``snap.config.Settings.workspace_options``); records
never reads the shell's settings, so it can be driven by any caller that fills these in.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from snapshotter.options import FetchOptions


@dataclass(frozen=True)
class WorkspaceOptions:
    """The database, the store (and its S3 retention) and how captures fetch."""

    home: Path
    store_url: str
    database_url: str
    fetch: FetchOptions
    lock_mode: str = "GOVERNANCE"
    lock_days: int = 365
    # requests open to one host at once (SNAP_HOST_CONCURRENCY): the workers share it over all
    # of them; a batch capture keeps no more of its fetches in flight
    host_concurrency: int = 2
    # how captures are made (snapshotter.browser): http, browser or auto; which Chromium
    capture: str = "http"
    browser: str | None = None
    browser_max_resources: int = 500
    browser_max_total_bytes: int = 200 * 1024 * 1024
    # attestation (records.attest): the signing key (None: the home's), its certificate chain,
    # the RFC 3161 authority and its chain, and whether it stamps each manifest or each batch
    signing_key: Path | None = None
    signing_cert: Path | None = None
    tsa_url: str | None = None
    tsa_chain: Path | None = None
    tsa_per: str = "capture"
    # prepared sources kept across processes (records.prepared): the folder (None: not kept)
    # and the most bytes it holds
    prepared_cache: Path | None = None
    prepared_cache_bytes: int = 1024 * 2**20

    @property
    def timeout(self) -> float:
        """The per-read timeout of a fetch (the TSA's requests use it too)."""
        return self.fetch.timeout

    @property
    def max_bytes(self) -> int:
        """The size cap of a body, fetched or imported."""
        return self.fetch.max_bytes


class BuildsWorkspaceOptions(Protocol):
    """A configuration that can say what a workspace needs (``snap.config.Settings``)."""

    def workspace_options(self) -> WorkspaceOptions: ...
