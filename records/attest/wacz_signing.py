"""Signing a WACZ as Webrecorder's "WACZ Signing and Verification" recommends (the
``signedData`` of ``datapackage-digest.json``), in the domain-signed form that authsign's
verifier, and so ``wacz validate --verify-auth``, accepts.

``signedData`` holds: ``hash`` (the SHA-256 of ``datapackage.json``), ``created`` (equal to the
package's own), ``signature`` (ECDSA P-256 over the hash string, base64 DER), ``domain`` and
``domainCert`` (the signing key's certificate chain, ``SNAP_SIGNING_CERT``, leaf first), and
``timeSignature`` / ``timestampCert``: an RFC 3161 reply over the signature string, and the
TSA's chain (its certificate from the reply, then ``SNAP_TSA_CHAIN``). Without an ECDSA key, a
certificate chain or a TSA the package is written unsigned and the export says why.
"""

from __future__ import annotations

import base64
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from rfc3161_client import decode_timestamp_response

from records.attest.errors import KeyError_
from records.attest.seal import Attestor
from records.attest.signing import key_id
from records.attest.timestamps import TsaConfig, load_chain, request_timestamp
from snapshotter.version import __version__

SIGNED_DATA_VERSION = "0.1.0"


@dataclass(frozen=True)
class WaczSigner:
    private: ec.EllipticCurvePrivateKey
    chain: tuple[x509.Certificate, ...]
    tsa: TsaConfig

    @property
    def domain(self) -> str:
        names = self.chain[0].subject.get_attributes_for_oid(NameOID.COMMON_NAME)
        return str(names[0].value) if names else ""

    def signed_data(self, package_hash: str, created: str) -> dict[str, Any]:
        """``signedData`` for a ``datapackage.json`` with SHA-256 ``package_hash``."""
        signature = base64.b64encode(
            self.private.sign(package_hash.encode("ascii"), ec.ECDSA(hashes.SHA256()))
        ).decode("ascii")
        stamp = request_timestamp(self.tsa, signature.encode("ascii"))  # network, no transaction
        signer = _signer_certificates(stamp.reply)
        return {
            "hash": package_hash,
            "created": created,
            "software": f"snap {__version__}",
            "version": SIGNED_DATA_VERSION,
            "signature": signature,
            "domain": self.domain,
            "domainCert": _pem_chain(self.chain),
            "timeSignature": base64.b64encode(stamp.reply).decode("ascii"),
            "timestampCert": _pem_chain((*signer, *self.tsa.chain)),
        }


def wacz_signer(attestor: Attestor, cert_path: Path | None) -> tuple[WaczSigner | None, str]:
    """The signer, or None and why a WACZ cannot be signed here."""
    key = attestor.key
    if key is None:
        return None, "not signed: no signing key"
    if not isinstance(key.private, ec.EllipticCurvePrivateKey):
        return None, "not signed: WACZ signing needs an ECDSA P-256 key (snap keys init)"
    if cert_path is None:
        return None, "not signed: SNAP_SIGNING_CERT (the key's certificate chain) is not set"
    if attestor.tsa is None:
        return None, "not signed: WACZ signing needs a TSA (SNAP_TSA_URL)"
    chain = load_chain(cert_path)
    if not chain or key_id(chain[0].public_key()) != key.key_id:  # type: ignore[arg-type]
        raise KeyError_(f"SNAP_SIGNING_CERT {cert_path}: its first certificate is not the key's")
    return WaczSigner(key.private, chain, attestor.tsa), "signed"


def _signer_certificates(reply: bytes) -> tuple[x509.Certificate, ...]:
    response = decode_timestamp_response(reply)
    return tuple(x509.load_der_x509_certificate(der) for der in response.signed_data.certificates)


def _pem_chain(chain: tuple[x509.Certificate, ...]) -> str:
    seen: list[x509.Certificate] = []
    for certificate in chain:
        if certificate not in seen:
            seen.append(certificate)
    return "".join(c.public_bytes(serialization.Encoding.PEM).decode("ascii") for c in seen)


def signed_data_state(signed: Any, package_hash: str) -> str:
    """What an imported WACZ's ``signedData`` proves, checked with ``cryptography`` and
    ``rfc3161-client``: "valid: …" (which domain and root, and when stamped), or "invalid: …".
    Whether the named root is to be trusted is for the reader: its fingerprint is recorded."""
    if not isinstance(signed, dict):
        return "invalid: signedData is not an object"
    if str(signed.get("hash", "")).removeprefix("sha256:") != package_hash.removeprefix("sha256:"):
        return "invalid: signedData signs another datapackage.json"
    signature = str(signed.get("signature", ""))
    try:
        raw = base64.b64decode(signature, validate=True)
        public: Any
        if signed.get("domainCert"):
            chain = x509.load_pem_x509_certificates(str(signed["domainCert"]).encode("ascii"))
            for child, parent in itertools.pairwise(chain):
                child.verify_directly_issued_by(parent)
            public = chain[0].public_key()
            signer = f"domain {signed.get('domain')}, root sha256:{_fingerprint(chain[-1])}"
        else:
            public = serialization.load_pem_public_key(str(signed["publicKey"]).encode("ascii"))
            signer = f"an anonymous key sha256:{key_id(public)[7:]}"
        if not isinstance(public, ec.EllipticCurvePublicKey):
            return "invalid: the signing key is not ECDSA"
        public.verify(raw, str(signed["hash"]).encode("ascii"), ec.ECDSA(hashes.SHA256()))
    except Exception as error:  # any malformed or failing piece is "invalid", with its reason
        return f"invalid: the signature does not verify ({type(error).__name__})"
    if not signed.get("timeSignature"):
        return f"valid: signed by {signer}, not timestamped"
    try:
        reply = base64.b64decode(str(signed["timeSignature"]), validate=True)
        tsa_chain = tuple(
            x509.load_pem_x509_certificates(str(signed["timestampCert"]).encode("ascii"))
        )
    except Exception as error:
        return f"invalid: the timestamp cannot be read ({type(error).__name__})"
    from records.attest.timestamps import gen_time, timestamp_problem

    problem = timestamp_problem(tsa_chain, reply, signature.encode("ascii"))
    if problem is not None:
        return f"invalid: the timestamp {problem}"
    return f"valid: signed by {signer}, stamped {gen_time(reply)}"


def _fingerprint(certificate: x509.Certificate) -> str:
    return certificate.fingerprint(hashes.SHA256()).hex()
