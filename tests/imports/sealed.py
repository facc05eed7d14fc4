"""A signed and stamped snap home that captured one loopback page twice, and its exports: what
the import tests of attestations start from."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from records.attest.signing import KeyType, write_new_key
from snap.cli import cli
from tests.attest.conftest import attesting_env
from tests.attest.tsa import LocalTsa
from tests.http_fixtures import LoopbackServer
from tests.imports.warcs import PAGE


def export_two_sealed_captures(folder: Path, tsa: LocalTsa, formats: list[str]) -> str:
    """Fetch ``PAGE`` twice into a home in ``folder`` that signs and stamps (the second
    capture a revisit of the first's bytes), export the URL in each of ``formats`` to
    ``folder/evidence.wacz`` or ``folder/evidence.warc.gz``; the URL, its server closed."""
    home = folder / "home"
    write_new_key(home / "signing-key.pem", KeyType.ECDSA_P256)
    env = attesting_env(home, tsa)
    runner = CliRunner()
    with LoopbackServer() as server:
        server.route("/cdn", body=PAGE)
        url = server.url("/cdn")
        for _ in range(2):
            fetched = runner.invoke(cli, ["fetch", "--allow-private", url], env=env)
            assert fetched.exit_code == 0, fetched.output
        for fmt in formats:
            out = folder / f"evidence.{'wacz' if fmt == 'wacz' else 'warc.gz'}"
            done = runner.invoke(
                cli, ["export", "--format", fmt, "-o", str(out), "--url", url], env=env
            )
            assert done.exit_code == 0, done.output
    return url
