"""A time-stamping authority on loopback for the tests: a test CA made with ``cryptography``,
a TSA certificate it signs (extended key usage timeStamping, critical), and ``openssl ts
-reply`` behind a small HTTP handler. Nothing leaves 127.0.0.1."""

from __future__ import annotations

import datetime
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CONFIG = """\
[ tsa ]
default_tsa = tsa_config1
[ tsa_config1 ]
dir = {dir}
serial = $dir/serial
crypto_device = builtin
signer_cert = $dir/tsa.pem
signer_key = $dir/tsa.key
signer_digest = sha256
default_policy = 1.2.3.4.1
digests = sha256, sha384, sha512
accuracy = secs:1
ordering = yes
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = sha256
"""


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _pem(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.PEM)


def make_ca(common: str = "snap test CA") -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(_name(common))
        .issuer_name(_name(common))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )
    return key, certificate


def issue(
    ca_key: ec.EllipticCurvePrivateKey,
    ca: x509.Certificate,
    common: str,
    public_key: object,
    *,
    timestamping: bool = False,
    dns: str | None = None,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common))
        .issuer_name(ca.subject)
        .public_key(public_key)  # type: ignore[arg-type]
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(days=5))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
    )
    if timestamping:
        builder = builder.add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.TIME_STAMPING]), critical=True
        )
    if dns:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName(dns)]), critical=False
        )
    return builder.sign(ca_key, hashes.SHA256())


@dataclass
class LocalTsa:
    url: str
    folder: Path
    ca: x509.Certificate
    ca_key: ec.EllipticCurvePrivateKey
    tsa_cert: x509.Certificate
    requests: list[bytes]

    @property
    def chain_path(self) -> Path:
        """The CA certificate: what SNAP_TSA_CHAIN and ``openssl ts -verify -CAfile`` take."""
        return self.folder / "ca.pem"

    @property
    def tsa_cert_path(self) -> Path:
        return self.folder / "tsa.pem"


@contextmanager
def local_tsa(*, include_chain: bool = False) -> Iterator[LocalTsa]:
    """``include_chain``: replies carry the CA certificate too (``certs``), as public TSAs'
    do, for signers that take the TSA's chain from its reply (authsign)."""
    with tempfile.TemporaryDirectory(prefix="snap-tsa-") as name:
        folder = Path(name)
        ca_key, ca = make_ca()
        tsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        tsa_cert = issue(ca_key, ca, "snap test TSA", tsa_key.public_key(), timestamping=True)
        (folder / "ca.pem").write_bytes(_pem(ca))
        (folder / "tsa.pem").write_bytes(_pem(tsa_cert))
        (folder / "tsa.key").write_bytes(
            tsa_key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        (folder / "serial").write_text("01\n")
        config = CONFIG.format(dir=folder)
        if include_chain:
            config += "certs = $dir/ca.pem\n"
        (folder / "tsa.cnf").write_text(config)
        requests: list[bytes] = []
        lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                query = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                requests.append(query)
                with lock, tempfile.TemporaryDirectory(dir=folder) as work:
                    (Path(work) / "q.tsq").write_bytes(query)
                    subprocess.run(
                        [
                            "openssl",
                            "ts",
                            "-reply",
                            "-config",
                            str(folder / "tsa.cnf"),
                            "-queryfile",
                            str(Path(work) / "q.tsq"),
                            "-out",
                            str(Path(work) / "r.tsr"),
                        ],
                        check=True,
                        capture_output=True,
                    )
                    reply = (Path(work) / "r.tsr").read_bytes()
                self.send_response(200)
                self.send_header("Content-Type", "application/timestamp-reply")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: object) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            port = server.server_address[1]
            yield LocalTsa(f"http://127.0.0.1:{port}/tsa", folder, ca, ca_key, tsa_cert, requests)
        finally:
            server.shutdown()
            server.server_close()
