"""Start and end the one Chromium process snap drives, with its network cut off.

snap starts Chromium itself (rather than through Playwright's ``launch``) so that it owns the
process: at a deadline or on a hang it is killed by its process id, never waited for. Every
request the browser makes is answered by snap's fetcher through Playwright routing
(``snapshotter.browser.render``); these flags make sure nothing else leaves the browser:
every host name resolves to nothing except 127.0.0.1 (which Playwright's own connection to
the browser needs), an HTTP proxy is named on a closed loopback port with no bypass list, and
Chromium's background services (component updates, field trials, sync) are off.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from snapshotter.browser.errors import BrowserFailed, BrowserUnavailable

DEFAULT_EXECUTABLE = "/usr/bin/chromium"
CLOSED_PORT = 9  # the discard port on loopback: nothing listens there, so a proxy use fails
NETWORK_FLAGS = (
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    f"--proxy-server=http://127.0.0.1:{CLOSED_PORT}",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
)
OTHER_FLAGS = (
    "--headless",
    "--disable-gpu",
    "--disable-quic",
    "--disable-sync",
    "--hide-scrollbars",
    "--mute-audio",
    "--no-default-browser-check",
)
START_TIMEOUT = 30.0  # seconds for Chromium to open its DevTools endpoint


def find_executable(configured: str | None) -> str | None:
    """The Chromium to use: ``SNAP_BROWSER`` if set, else /usr/bin/chromium, else on PATH."""
    if configured:
        return configured if Path(configured).is_file() else shutil.which(configured)
    if Path(DEFAULT_EXECUTABLE).is_file():
        return DEFAULT_EXECUTABLE
    return shutil.which("chromium") or shutil.which("chromium-browser")


def chromium_flags(user_data_dir: Path) -> list[str]:
    """Every flag Chromium is started with; ``--no-sandbox`` only as root (Chromium refuses to
    start as root with its sandbox, and elsewhere the sandbox stays on)."""
    sandbox = ["--no-sandbox"] if os.geteuid() == 0 else []
    return [
        *NETWORK_FLAGS,
        *OTHER_FLAGS,
        *sandbox,
        f"--user-data-dir={user_data_dir}",
        "--remote-debugging-port=0",
        "about:blank",
    ]


@dataclass
class ChromiumProcess:
    """A running Chromium with a fresh profile folder, and its DevTools endpoint."""

    process: subprocess.Popen[bytes]
    profile: Path
    endpoint: str

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        """Kill Chromium and every process it started (its own process group), then remove
        the profile folder. Safe to call twice."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        shutil.rmtree(self.profile, ignore_errors=True)


# Chromium's own network prediction preconnects to an origin a page navigates a frame to,
# before (and whatever) the request's interception answers: "never" turns it off.
PREFERENCES = {"net": {"network_prediction_options": 2}}


def write_preferences(profile: Path) -> None:
    """The fresh profile's preferences, written before Chromium first reads them."""
    folder = profile / "Default"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Preferences").write_text(json.dumps(PREFERENCES))


def start_chromium(executable: str, *, timeout: float = START_TIMEOUT) -> ChromiumProcess:
    """Start Chromium in a process group of its own and wait for its DevTools endpoint
    (``DevToolsActivePort`` in the profile folder names the port it picked)."""
    profile = Path(tempfile.mkdtemp(prefix="snap-chromium-"))
    write_preferences(profile)
    try:
        process = subprocess.Popen(
            [executable, *chromium_flags(profile)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as error:
        shutil.rmtree(profile, ignore_errors=True)
        raise BrowserUnavailable(f"cannot start Chromium at {executable}: {error}") from None
    started = ChromiumProcess(process, profile, endpoint="")
    marker = profile / "DevToolsActivePort"
    give_up = time.monotonic() + timeout
    while time.monotonic() < give_up:
        if process.poll() is not None:
            started.kill()
            raise BrowserFailed(f"Chromium at {executable} exited at start ({process.returncode})")
        with contextlib.suppress(OSError):
            lines = marker.read_text().split()
            if len(lines) >= 2:
                started.endpoint = f"ws://127.0.0.1:{int(lines[0])}{lines[1]}"
                return started
        time.sleep(0.02)
    started.kill()
    raise BrowserFailed(
        f"timed out: Chromium at {executable} did not start within {timeout:g} s"
        " (bounded by the capture deadline)"
    )
