"""Settings read from the environment, validated once, passed down explicitly.

Library code never reads ``os.environ`` itself: it takes a ``Settings`` (or plain arguments),
so tests and embedding applications can configure snap without touching the process.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from snap.errors import ConfigError

DEFAULT_MAX_BYTES = 50 * 1024 * 1024
LOCK_MODES = ("GOVERNANCE", "COMPLIANCE")


def default_home(environ: Mapping[str, str]) -> Path:
    """The per-user data folder: ``$XDG_DATA_HOME/snap`` or ``~/.local/share/snap``."""
    data_home = environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home) / "snap"


def _int_setting(environ: Mapping[str, str], name: str, default: int, minimum: int) -> int:
    raw = environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a whole number, got {raw!r}") from None
    if value < minimum:
        raise ConfigError(f"{name} must be at least {minimum}, got {value}")
    return value


def _float_setting(environ: Mapping[str, str], name: str, default: float) -> float:
    raw = environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number of seconds, got {raw!r}") from None
    if value <= 0:
        raise ConfigError(f"{name} must be positive, got {raw!r}")
    return value


def _flag(environ: Mapping[str, str], name: str) -> bool:
    value = environ.get(name, "").strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    raise ConfigError(f"{name} must be 1 or 0 (or true/false), got {value!r}")


@dataclass(frozen=True)
class Settings:
    """Everything configurable about snap; see the README's configuration table."""

    home: Path
    store_url: str
    database_url: str
    max_bytes: int = DEFAULT_MAX_BYTES
    allow_private: bool = False
    timeout: float = 30.0
    max_redirects: int = 10
    lock_mode: str = "GOVERNANCE"
    lock_days: int = 365

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        home = Path(env.get("SNAP_HOME") or default_home(env)).expanduser()
        lock_mode = env.get("SNAP_S3_LOCK_MODE", "GOVERNANCE").strip().upper()
        if lock_mode not in LOCK_MODES:
            raise ConfigError(
                f"SNAP_S3_LOCK_MODE must be GOVERNANCE or COMPLIANCE, got {lock_mode!r}"
            )
        return cls(
            home=home,
            store_url=env.get("SNAP_STORE") or str(home / "store"),
            database_url=env.get("SNAP_DATABASE_URL") or f"sqlite:///{home / 'snap.db'}",
            max_bytes=_int_setting(env, "SNAP_MAX_BYTES", DEFAULT_MAX_BYTES, 1),
            allow_private=_flag(env, "SNAP_ALLOW_PRIVATE"),
            timeout=_float_setting(env, "SNAP_TIMEOUT", 30.0),
            max_redirects=_int_setting(env, "SNAP_MAX_REDIRECTS", 10, 0),
            lock_mode=lock_mode,
            lock_days=_int_setting(env, "SNAP_S3_LOCK_DAYS", 365, 1),
        )

    def with_overrides(self, **changes: object) -> Settings:
        """A copy with command-line options applied on top of the environment."""
        return replace(self, **changes)  # type: ignore[arg-type]
