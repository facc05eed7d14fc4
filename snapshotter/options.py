"""The snapshotter's options: plain values, built by whoever configures snap (the shell builds
them from its settings: ``snap.config.Settings.fetch_options``). Kept apart from
``snapshotter.fetch`` so that holding options does not load http and ssl."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from snapshotter.version import __version__

# For the type checker only: the special-address tables are built when imported, and only
# the guard (fetching) needs them.
if TYPE_CHECKING:
    from snapshotter.guard import AllowList
    from snapshotter.special_addresses import IPNetwork

DEFAULT_USER_AGENT = f"snap/{__version__} (+citation snapshot)"
TOTAL_TIMEOUT_FACTOR = 10  # without a deadline, a capture may take this many read timeouts


@dataclass(frozen=True)
class FetchOptions:
    """How one fetch behaves.

    ``timeout`` bounds connecting and each read; ``total_timeout`` (default
    ``TOTAL_TIMEOUT_FACTOR * timeout``) is the one deadline of the whole capture (name
    resolution, connect, TLS, headers, body, every redirect), enforced by closing the
    connection when it passes, so a server that trickles one byte at a time cannot hold snap.
    ``ca_file`` replaces the system trust store (for tests and private CAs).
    ``allow_networks`` are the networks the operator lets captures reach although the guard
    refuses them (``--allow-network``); ``allow_private`` adds loopback and RFC 1918.
    """

    max_bytes: int
    timeout: float
    max_redirects: int
    allow_private: bool = False
    allow_networks: tuple[IPNetwork, ...] = ()
    user_agent: str = DEFAULT_USER_AGENT
    ca_file: Path | None = None
    total_timeout: float | None = None

    @property
    def allowed(self) -> AllowList:
        """The networks the guard lets through: the list, plus the alias when asked."""
        from snapshotter.guard import AllowList  # the guard loads socket: only fetches need it

        listed = AllowList(self.allow_networks)
        return listed.with_private() if self.allow_private else listed

    @property
    def deadline_seconds(self) -> float:
        return self.total_timeout or self.timeout * TOTAL_TIMEOUT_FACTOR
