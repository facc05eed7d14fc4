"""Settings read from the environment, validated once, passed down explicitly.

Library code never reads ``os.environ`` itself: it takes a ``Settings`` (or plain arguments),
so tests and embedding applications can configure snap without touching the process.
"""

from __future__ import annotations

import ipaddress
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from records.options import WorkspaceOptions
from snap.errors import ConfigError
from snapshotter.options import DEFAULT_USER_AGENT, FetchOptions

if TYPE_CHECKING:
    from records.workspace import Workspace

DEFAULT_MAX_BYTES = 50 * 1024 * 1024
DEFAULT_TIMEOUT = 30.0
DEADLINE_FACTOR = 10  # without SNAP_DEADLINE a capture may take this many timeouts in all
LOCK_MODES = ("GOVERNANCE", "COMPLIANCE")
NO_LOCK = "NONE"  # SNAP_S3_LOCK_MODE=none: an S3 store without retention, said so in audits
# Sane bounds: a value outside them is a typo or an attack on the process, never a wish.
MAX_SECONDS = 24 * 3600.0
MAX_BYTES_LIMIT = 64 * 1024**3
MAX_REDIRECTS_LIMIT = 100
MAX_USER_AGENT = 512
MAX_LOCK_DAYS = 100 * 366
BROKER_SCHEMES = ("redis", "rediss", "amqp", "pyamqp")
QUEUE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,99}")
MAX_HOST_CONCURRENCY = 1000
MAX_TASK_RETRIES = 100
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
MAX_ALLOWED_NETWORKS = 1000
CAPTURE_METHODS = ("http", "browser", "auto")  # SNAP_CAPTURE; see snapshotter.browser
DEFAULT_BROWSER_MAX_RESOURCES = 500
DEFAULT_BROWSER_MAX_TOTAL_BYTES = 200 * 1024 * 1024
DEFAULT_PREPARED_CACHE_MB = 1024
MAX_PREPARED_CACHE_MB = 1024 * 1024
MAX_BROWSER_RESOURCES = 100_000


def default_home(environ: Mapping[str, str]) -> Path:
    """The per-user data folder: ``$XDG_DATA_HOME/snap`` or ``~/.local/share/snap``."""
    data_home = environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home) / "snap"


def _int_setting(environ: Mapping[str, str], name: str, default: int) -> int:
    raw = environ.get(name, "").strip()
    if raw == "":
        return default
    if not raw.lstrip("+-").isdigit() or len(raw) > 20:  # int() of 10**6 digits is slow
        raise ConfigError(f"{name} must be a whole number, got {raw[:40]!r}")
    return int(raw)


def _float_setting(environ: Mapping[str, str], name: str, default: float | None) -> float | None:
    raw = environ.get(name, "").strip()
    if raw == "":
        return default
    try:
        if len(raw) > 40:
            raise ValueError
        return float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number of seconds, got {raw[:40]!r}") from None


def _timeout(environ: Mapping[str, str]) -> float:
    value = _float_setting(environ, "SNAP_TIMEOUT", DEFAULT_TIMEOUT)
    return DEFAULT_TIMEOUT if value is None else value


def check_range(name: str, value: float, low: float, high: float, *, low_open: bool) -> None:
    """One line for a value that is not finite or outside [low, high] (or (low, high])."""
    too_low = value <= low if low_open else value < low
    if not math.isfinite(value) or too_low or value > high:
        lower = f"more than {_number(low)}" if low_open else f"at least {_number(low)}"
        raise ConfigError(
            f"{name} must be a finite number {lower} and at most {_number(high)}, got {value:g}"
        )


def _number(value: float) -> str:
    """A bound as a person writes it: 1,048,576 rather than 1.04858e+06."""
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,}"


def _lock_mode(environ: Mapping[str, str]) -> str:
    mode = (environ.get("SNAP_S3_LOCK_MODE") or "GOVERNANCE").strip().upper()
    if mode not in (*LOCK_MODES, NO_LOCK):
        raise ConfigError(
            f"SNAP_S3_LOCK_MODE must be GOVERNANCE, COMPLIANCE or none, got {mode[:40]!r}"
        )
    return mode


def _broker_url(environ: Mapping[str, str]) -> str | None:
    """SNAP_BROKER_URL: a Redis or RabbitMQ URL; unset means every batch runs in-process."""
    raw = environ.get("SNAP_BROKER_URL", "").strip()
    if raw == "":
        return None
    scheme = raw.partition("://")[0].lower()
    if "://" not in raw or scheme not in BROKER_SCHEMES:
        raise ConfigError(
            "SNAP_BROKER_URL must be a redis://, rediss:// or amqp:// URL,"
            f" got one starting {raw.split('@')[-1][:40]!r}"
        )
    return raw


def _queue(environ: Mapping[str, str]) -> str:
    name = environ.get("SNAP_QUEUE", "").strip() or "snap"
    if not QUEUE_NAME.fullmatch(name):
        raise ConfigError(
            f"SNAP_QUEUE must be 1-100 letters, digits, '.', '_', ':' or '-', got {name[:40]!r}"
        )
    return name


def _capture(environ: Mapping[str, str]) -> str:
    method = (environ.get("SNAP_CAPTURE") or "http").strip().lower()
    if method not in CAPTURE_METHODS:
        raise ConfigError(f"SNAP_CAPTURE must be http, browser or auto, got {method[:40]!r}")
    return method


def _tsa_per(environ: Mapping[str, str]) -> str:
    value = environ.get("SNAP_TSA_PER", "").strip().lower() or "capture"
    if value not in ("capture", "batch"):
        raise ConfigError(f"SNAP_TSA_PER must be capture or batch, got {value[:40]!r}")
    return value


def _prepared_cache(environ: Mapping[str, str], home: Path) -> Path | None:
    """SNAP_PREPARED_CACHE: a folder, ``off`` for none, unset for the home's ``prepared``."""
    raw = environ.get("SNAP_PREPARED_CACHE", "").strip()
    if raw.lower() in ("off", "0", "false", "no", "none"):
        return None
    return Path(raw).expanduser() if raw else home / "prepared"


def _path_setting(environ: Mapping[str, str], name: str) -> Path | None:
    raw = environ.get(name, "").strip()
    return Path(raw).expanduser() if raw else None


def _flag(environ: Mapping[str, str], name: str) -> bool:
    value = environ.get(name, "").strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    raise ConfigError(f"{name} must be 1 or 0 (or true/false), got {value!r}")


def parse_networks(text: str, name: str) -> tuple[IPNetwork, ...]:
    """``SNAP_ALLOW_NETWORKS`` / ``--allow-network``: networks in CIDR form (``127.0.0.0/8``,
    ``fd00::/8``) or single addresses, separated by commas or spaces. A network with host bits
    set (``127.0.0.1/8``) is refused rather than widened or narrowed silently."""
    networks: list[IPNetwork] = []
    for item in text.replace(",", " ").split():
        try:
            networks.append(ipaddress.ip_network(item, strict=True))
        except ValueError as error:
            raise ConfigError(
                f"{name}: {item[:60]!r} is not a network or address ({error})"
            ) from None
        if len(networks) > MAX_ALLOWED_NETWORKS:
            raise ConfigError(f"{name}: more than {MAX_ALLOWED_NETWORKS} networks")
    return tuple(dict.fromkeys(networks))


def _user_agent(env: Mapping[str, str]) -> str:
    """SNAP_USER_AGENT: what captures call themselves. A header value: printable ASCII, at most
    MAX_USER_AGENT characters, so it can neither break a request nor carry a second header."""
    value = env.get("SNAP_USER_AGENT", "").strip()
    if not value:
        return DEFAULT_USER_AGENT
    if len(value) > MAX_USER_AGENT or not all(" " <= char <= "~" for char in value):
        raise ConfigError(
            f"SNAP_USER_AGENT must be printable ASCII of at most {MAX_USER_AGENT} characters"
        )
    return value


@dataclass(frozen=True)
class Settings:
    """Everything configurable about snap; see the configuration table in docs/storage.md."""

    home: Path
    store_url: str
    database_url: str
    max_bytes: int = DEFAULT_MAX_BYTES
    allow_private: bool = False  # the alias for loopback and RFC 1918 (see snapshotter.guard)
    allow_networks: tuple[IPNetwork, ...] = ()  # SNAP_ALLOW_NETWORKS / --allow-network
    timeout: float = DEFAULT_TIMEOUT
    max_redirects: int = 10
    user_agent: str = DEFAULT_USER_AGENT  # every request a capture makes, the browser's too
    lock_mode: str = "GOVERNANCE"
    lock_days: int = 365
    deadline: float | None = None  # the whole capture; None means DEADLINE_FACTOR * timeout
    # Workers (snap/workers): no broker means every batch runs in-process.
    broker_url: str | None = None
    queue: str = "snap"
    host_concurrency: int = 2  # captures of one host running at once, over all workers
    host_delay: float = 1.0  # seconds between the starts of two captures of one host
    task_retries: int = 5  # tries of a task after a transient failure, with backoff
    # Browser capture (snapshotter.browser): how captures are made, which Chromium, its caps.
    capture: str = "http"  # http | browser | auto (the browser when one is installed)
    browser: str | None = None  # the Chromium executable; None: /usr/bin/chromium or PATH
    browser_max_resources: int = DEFAULT_BROWSER_MAX_RESOURCES
    browser_max_total_bytes: int = DEFAULT_BROWSER_MAX_TOTAL_BYTES
    # Attestation (records/attest): the key that signs manifests and checkpoints (None: the
    # home's signing-key.pem when it exists), and the RFC 3161 time-stamping authority.
    signing_key: Path | None = None
    tsa_url: str | None = None
    tsa_chain: Path | None = None
    signing_cert: Path | None = None  # the key's certificate chain: WACZ packages get signed
    # "capture": one TSA request per manifest; "batch": manifests are signed, and stamped by
    # the log checkpoint that includes them (one TSA request per batch)
    tsa_per: str = "capture"
    # prepared sources kept across processes (records.prepared): the folder, None when off
    # (SNAP_PREPARED_CACHE=off), and its bound in MiB (SNAP_PREPARED_CACHE_MB)
    prepared_cache: Path | None = None
    prepared_cache_mb: int = DEFAULT_PREPARED_CACHE_MB

    def __post_init__(self) -> None:
        """Validated here, so command-line overrides (``with_overrides``) are checked too."""
        check_range("SNAP_TIMEOUT (--timeout)", self.timeout, 0, MAX_SECONDS, low_open=True)
        if self.deadline is not None:
            check_range("SNAP_DEADLINE (--deadline)", self.deadline, 0, MAX_SECONDS, low_open=True)
        check_range(
            "SNAP_MAX_BYTES (--max-bytes)", self.max_bytes, 1, MAX_BYTES_LIMIT, low_open=False
        )
        check_range(
            "SNAP_MAX_REDIRECTS", self.max_redirects, 0, MAX_REDIRECTS_LIMIT, low_open=False
        )
        check_range("SNAP_S3_LOCK_DAYS", self.lock_days, 1, MAX_LOCK_DAYS, low_open=False)
        check_range(
            "SNAP_HOST_CONCURRENCY", self.host_concurrency, 1, MAX_HOST_CONCURRENCY, low_open=False
        )
        check_range("SNAP_HOST_DELAY", self.host_delay, 0, MAX_SECONDS, low_open=False)
        check_range("SNAP_TASK_RETRIES", self.task_retries, 0, MAX_TASK_RETRIES, low_open=False)
        check_range(
            "SNAP_PREPARED_CACHE_MB",
            self.prepared_cache_mb,
            1,
            MAX_PREPARED_CACHE_MB,
            low_open=False,
        )
        if self.capture not in CAPTURE_METHODS:
            raise ConfigError(f"SNAP_CAPTURE must be http, browser or auto, got {self.capture!r}")
        check_range(
            "SNAP_BROWSER_MAX_RESOURCES",
            self.browser_max_resources,
            0,
            MAX_BROWSER_RESOURCES,
            low_open=False,
        )
        check_range(
            "SNAP_BROWSER_MAX_TOTAL_BYTES",
            self.browser_max_total_bytes,
            0,
            MAX_BYTES_LIMIT,
            low_open=False,
        )

    @property
    def capture_deadline(self) -> float:
        """Seconds one whole capture (connect, TLS, headers, body, redirects) may take."""
        return self.deadline if self.deadline is not None else self.timeout * DEADLINE_FACTOR

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        home = Path(env.get("SNAP_HOME") or default_home(env)).expanduser()
        return cls(
            home=home,
            store_url=env.get("SNAP_STORE") or str(home / "store"),
            database_url=env.get("SNAP_DATABASE_URL") or f"sqlite:///{home / 'snap.db'}",
            max_bytes=_int_setting(env, "SNAP_MAX_BYTES", DEFAULT_MAX_BYTES),
            allow_private=_flag(env, "SNAP_ALLOW_PRIVATE"),
            allow_networks=parse_networks(
                env.get("SNAP_ALLOW_NETWORKS", ""), "SNAP_ALLOW_NETWORKS"
            ),
            timeout=_timeout(env),
            max_redirects=_int_setting(env, "SNAP_MAX_REDIRECTS", 10),
            user_agent=_user_agent(env),
            lock_mode=_lock_mode(env),
            lock_days=_int_setting(env, "SNAP_S3_LOCK_DAYS", 365),
            deadline=_float_setting(env, "SNAP_DEADLINE", None),
            broker_url=_broker_url(env),
            queue=_queue(env),
            host_concurrency=_int_setting(env, "SNAP_HOST_CONCURRENCY", 2),
            host_delay=_float_setting(env, "SNAP_HOST_DELAY", 1.0) or 0.0,
            task_retries=_int_setting(env, "SNAP_TASK_RETRIES", 5),
            capture=_capture(env),
            browser=env.get("SNAP_BROWSER", "").strip() or None,
            browser_max_resources=_int_setting(
                env, "SNAP_BROWSER_MAX_RESOURCES", DEFAULT_BROWSER_MAX_RESOURCES
            ),
            browser_max_total_bytes=_int_setting(
                env, "SNAP_BROWSER_MAX_TOTAL_BYTES", DEFAULT_BROWSER_MAX_TOTAL_BYTES
            ),
            signing_key=_path_setting(env, "SNAP_SIGNING_KEY"),
            tsa_url=env.get("SNAP_TSA_URL", "").strip() or None,
            tsa_chain=_path_setting(env, "SNAP_TSA_CHAIN"),
            signing_cert=_path_setting(env, "SNAP_SIGNING_CERT"),
            tsa_per=_tsa_per(env),
            prepared_cache=_prepared_cache(env, home),
            prepared_cache_mb=_int_setting(
                env, "SNAP_PREPARED_CACHE_MB", DEFAULT_PREPARED_CACHE_MB
            ),
        )

    def with_overrides(self, **changes: object) -> Settings:
        """A copy with command-line options applied on top of the environment."""
        return replace(self, **changes)  # type: ignore[arg-type]

    def fetch_options(self) -> FetchOptions:
        """The snapshotter's options for a fetch (it never reads these settings itself)."""
        return FetchOptions(
            max_bytes=self.max_bytes,
            timeout=self.timeout,
            max_redirects=self.max_redirects,
            user_agent=self.user_agent,
            allow_private=self.allow_private,
            allow_networks=self.allow_networks,
            total_timeout=self.capture_deadline,
        )

    def workspace_options(self) -> WorkspaceOptions:
        """The records' options: what ``records.workspace.Workspace.open`` needs."""
        return WorkspaceOptions(
            home=self.home,
            store_url=self.store_url,
            database_url=self.database_url,
            fetch=self.fetch_options(),
            lock_mode=self.lock_mode,
            lock_days=self.lock_days,
            host_concurrency=self.host_concurrency,
            capture=self.capture,
            browser=self.browser,
            browser_max_resources=self.browser_max_resources,
            browser_max_total_bytes=self.browser_max_total_bytes,
            signing_key=self.signing_key,
            signing_cert=self.signing_cert,
            tsa_url=self.tsa_url,
            tsa_chain=self.tsa_chain,
            tsa_per=self.tsa_per,
            prepared_cache=self.prepared_cache,
            prepared_cache_bytes=self.prepared_cache_mb * 2**20,
        )


def settings_of(workspace: Workspace) -> Settings:
    """The shell's settings a workspace was opened with (the broker, the queue: what the
    records' options leave out)."""
    config = workspace.config
    if not isinstance(config, Settings):
        raise TypeError("this workspace was opened from options, not from snap's Settings")
    return config
