"""``snap serve`` as a real uvicorn subprocess on loopback, and a plain HTTP client for it.

The subprocess installs the loopback-only guard (``netguard``) before snap loads. The client is
``http.client`` on 127.0.0.1: no proxy from the environment can redirect it anywhere else.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
GUARDED_SNAP = (
    "from tests.service import netguard; netguard.install(); from snap.cli import main; main()"
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Served:
    def __init__(self, env: dict[str, str], *args: str, token: str | None = None) -> None:
        self.port = free_port()
        self.token = token
        self.process = subprocess.Popen(
            [sys.executable, "-c", GUARDED_SNAP, "serve", "--port", str(self.port), *args],
            env={**env, "PYTHONPATH": str(ROOT)},
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        self.wait_ready()

    def wait_ready(self, seconds: float = 60) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                output = self.process.stdout.read().decode() if self.process.stdout else ""
                raise RuntimeError(f"snap serve exited {self.process.returncode}: {output}")
            try:
                if self.call("GET", "/healthz").status == 200:
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("snap serve did not answer /healthz in time")

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str | None = None,
        raw: bytes | None = None,
    ) -> Answer:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        headers = {"Content-Type": "application/json"}
        token = self.token if token is None else token  # "": send none
        if token:
            headers["Authorization"] = f"Bearer {token}"
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        try:
            connection.request(method, path, body=data, headers=headers)
            response = connection.getresponse()
            return Answer(response.status, dict(response.getheaders()), response.read())
        finally:
            connection.close()

    def stop(self) -> tuple[int, str]:
        """SIGTERM, as a service manager stops it: uvicorn shuts down, the lifespan closes the
        workspace, and uvicorn then ends by the same signal (so the code is -SIGTERM)."""
        self.process.send_signal(signal.SIGTERM)
        try:
            output, _ = self.process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            output, _ = self.process.communicate()
        return self.process.returncode, output.decode()


def service_env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SNAP_", "AWS_"))}
    return env | extra
