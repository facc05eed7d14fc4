"""RFC 3161 trusted timestamps with ``rfc3161-client`` (Trail of Bits; the client sigstore uses).

A request carries the SHA-256 imprint of the stamped bytes (a manifest, a checkpoint) and a
nonce; the reply (the whole ``TimeStampResp``, which ``openssl ts -verify -in`` reads) is kept
as a ``timestamp`` blob. It is checked against the TSA's certificate chain
(``SNAP_TSA_CHAIN``, PEM: the TSA certificate, any intermediates, the root), and its imprint
must equal the SHA-256 of the stamped bytes. The request goes out with no database transaction
open, and never through an environment proxy.
"""

from __future__ import annotations

import functools
import hashlib
import urllib.error
import urllib.request
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from cryptography import x509
from rfc3161_client import (
    HashAlgorithm,
    TimestampRequestBuilder,
    VerificationError,
    VerifierBuilder,
    decode_timestamp_response,
)

from records.attest.errors import NO_TIMESTAMP, KeyError_, TimestampUnavailable

MAX_REPLY = 1 << 20


@dataclass(frozen=True)
class TsaConfig:
    url: str
    chain: tuple[x509.Certificate, ...]
    timeout: float = 10.0

    @classmethod
    def load(cls, url: str, chain_path: Path | None, *, timeout: float = 10.0) -> TsaConfig:
        if chain_path is None:
            raise KeyError_("SNAP_TSA_URL is set but SNAP_TSA_CHAIN (its certificate chain) is not")
        return cls(url, load_chain(chain_path), timeout)


def load_chain(path: Path) -> tuple[x509.Certificate, ...]:
    try:
        certificates = x509.load_pem_x509_certificates(path.read_bytes())
    except OSError as error:
        raise KeyError_(f"SNAP_TSA_CHAIN {path} cannot be read: {error.strerror}") from None
    except ValueError as error:
        raise KeyError_(f"SNAP_TSA_CHAIN {path} is not a PEM certificate chain: {error}") from None
    return tuple(certificates)


@dataclass(frozen=True)
class Stamp:
    """A granted timestamp: the reply's bytes and the time the TSA put in it."""

    reply: bytes
    gen_time: datetime


def request_timestamp(config: TsaConfig, data: bytes) -> Stamp:
    """Ask the TSA to stamp ``data``; the reply is verified before it is kept."""
    request = TimestampRequestBuilder().data(data).hash_algorithm(HashAlgorithm.SHA256).build()
    http = urllib.request.Request(  # noqa: S310 (the configured TSA URL, http or https)
        config.url,
        data=request.as_bytes(),
        headers={"Content-Type": "application/timestamp-query"},
        method="POST",
    )
    try:
        with _opener().open(http, timeout=config.timeout) as response:
            reply = response.read(MAX_REPLY + 1)
    except (urllib.error.URLError, OSError, ValueError) as error:
        raise TimestampUnavailable(
            f"{NO_TIMESTAMP}: the TSA {config.url} failed: {error}"
        ) from None
    if len(reply) > MAX_REPLY:
        raise TimestampUnavailable(f"{NO_TIMESTAMP}: the TSA's reply is over 1 MiB")
    problem = timestamp_problem(config.chain, reply, data, nonce=request.nonce)
    if problem is not None:
        raise TimestampUnavailable(f"{NO_TIMESTAMP}: the TSA's reply {problem}")
    return Stamp(reply, decode_timestamp_response(reply).tst_info.gen_time)


@functools.cache
def _opener() -> urllib.request.OpenerDirector:
    """One opener per process, with no proxy (building one costs milliseconds, as much as a
    loopback TSA's answer)."""
    return urllib.request.build_opener(urllib.request.ProxyHandler({}))


def timestamp_problem(
    chain: tuple[x509.Certificate, ...], reply: bytes, data: bytes, *, nonce: int | None = None
) -> str | None:
    """None when ``reply`` is a granted timestamp over SHA-256(``data``) signed by a TSA
    certified by ``chain``; else what is wrong, in a few words."""
    try:
        response = decode_timestamp_response(reply)
    except ValueError as error:
        return f"is not an RFC 3161 reply ({error})"
    imprint = response.tst_info.message_imprint.message
    if imprint != hashlib.sha256(data).digest():
        return "stamps another digest than the stamped bytes' SHA-256"
    builder = VerifierBuilder()
    for certificate in chain:
        if certificate.issuer == certificate.subject:
            builder = builder.add_root_certificate(certificate)
        else:
            builder = builder.add_intermediate_certificate(certificate)
    if nonce is not None:
        builder = builder.nonce(nonce)
    try:
        builder.build().verify_message(response, data)
    except (VerificationError, ValueError) as error:
        return f"does not verify against the TSA chain ({error})"
    return None


def gen_time(reply: bytes) -> datetime | None:
    try:
        return decode_timestamp_response(reply).tst_info.gen_time
    except ValueError:
        return None
