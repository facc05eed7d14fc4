"""Bearer tokens for ``snap serve``, and where the server may listen without them.

Tokens come from ``SNAP_API_TOKENS`` (comma-separated; the CLI reads the variable and passes the
list in).  A presented token is compared with *every* configured token with
``hmac.compare_digest``, never stopping at the first match, so the time taken says nothing
about which token, or which prefix of one, was right.  With no token configured the service
answers without authentication, and so it may only listen on a loopback address: anything that
can reach it then already runs on this machine.
"""

from __future__ import annotations

import hmac
import ipaddress

from snap.errors import ConfigError

LOOPBACK_NAMES = ("localhost",)
MIN_TOKEN_LENGTH = 16  # a shorter secret can be guessed by a client with patience


def parse_tokens(raw: str | None) -> tuple[bytes, ...]:
    """``SNAP_API_TOKENS`` as the list of tokens; empty entries (``a,,b``, a trailing comma)
    are ignored, a too-short token is refused (one line, exit 2)."""
    tokens = tuple(part.strip() for part in (raw or "").split(",") if part.strip())
    for number, token in enumerate(tokens, start=1):
        if len(token) < MIN_TOKEN_LENGTH:
            raise ConfigError(
                f"SNAP_API_TOKENS: token {number} has {len(token)} characters;"
                f" use at least {MIN_TOKEN_LENGTH} (e.g. from: openssl rand -hex 32)"
            )
        if not token.isascii() or not token.isprintable() or " " in token:
            raise ConfigError(
                f"SNAP_API_TOKENS: token {number} must be printable ASCII without spaces"
            )
    return tuple(token.encode("ascii") for token in tokens)


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` (as given to ``--host``) is a loopback address; names are not looked up
    (no DNS), so only ``localhost`` and loopback literals count."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, tokens: tuple[bytes, ...]) -> None:
    """Refuse to listen beyond this machine without authentication."""
    if not tokens and not is_loopback_host(host):
        raise ConfigError(
            f"refusing to listen on {host} without authentication: set SNAP_API_TOKENS"
            " (comma-separated bearer tokens), or listen on 127.0.0.1"
        )


def token_matches(presented: str | None, tokens: tuple[bytes, ...]) -> bool:
    """Constant time over all configured tokens: every one is compared, whatever matched."""
    if not tokens:
        return True
    if presented is None:
        return False
    given = presented.encode("utf-8", "surrogateescape")
    matched = False
    for token in tokens:
        matched |= hmac.compare_digest(given, token)
    return matched


def bearer_of(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header (scheme case-insensitive)."""
    if not authorization:
        return None
    scheme, _, credentials = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not credentials.strip():
        return None
    return credentials.strip()
