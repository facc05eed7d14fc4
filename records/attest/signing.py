"""The signing key: Ed25519 or ECDSA P-256 (``SNAP_SIGNING_KEY``, a PEM PKCS#8 file made by
``snap keys init``), signing every manifest and checkpoint.

Signatures are over the exact bytes (the canonical manifest), so ``openssl`` checks them with
the printed public key: ECDSA with ``openssl dgst -sha256 -verify``, Ed25519 with ``openssl
pkeyutl -verify -rawin``. A key is named by ``sha256:`` of its DER SubjectPublicKeyInfo.
ECDSA P-256 is the default because Webrecorder's WACZ signing (and authsign's verifier) accept
only ECDSA; Ed25519 signs manifests and checkpoints but not WACZ packages.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import os
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from records.attest.errors import KeyError_


class KeyType(StrEnum):
    ECDSA_P256 = "ecdsa-p256"
    ED25519 = "ed25519"


PrivateKey = ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey
PublicKey = ec.EllipticCurvePublicKey | ed25519.Ed25519PublicKey


@dataclass(frozen=True)
class Signature:
    """A signature as recorded: which key, which algorithm, base64 of the signature bytes."""

    algorithm: str
    key_id: str
    value: str

    def to_json(self) -> dict[str, str]:
        return {"algorithm": self.algorithm, "keyId": self.key_id, "value": self.value}


@dataclass(frozen=True)
class SigningKey:
    private: PrivateKey

    @property
    def public(self) -> PublicKey:
        return self.private.public_key()

    @property
    def key_type(self) -> KeyType:
        return (
            KeyType.ED25519
            if isinstance(self.private, ed25519.Ed25519PrivateKey)
            else (KeyType.ECDSA_P256)
        )

    @functools.cached_property
    def key_id(self) -> str:
        return key_id(self.public)

    @functools.cached_property
    def _public_pem(self) -> str:
        return public_pem(self.public)

    def public_pem(self) -> str:
        return self._public_pem

    def sign(self, data: bytes) -> Signature:
        if isinstance(self.private, ed25519.Ed25519PrivateKey):
            raw = self.private.sign(data)
            algorithm = "ed25519"
        else:
            raw = self.private.sign(data, ec.ECDSA(hashes.SHA256()))
            algorithm = "ecdsa-p256-sha256"
        return Signature(algorithm, self.key_id, base64.b64encode(raw).decode("ascii"))


def key_id(public: PublicKey) -> str:
    der = public.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return "sha256:" + hashlib.sha256(der).hexdigest()


def public_pem(public: PublicKey) -> str:
    return public.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode("ascii")


def load_public_pem(text: str) -> PublicKey:
    try:
        key = serialization.load_pem_public_key(text.encode("ascii"))
    except (ValueError, UnicodeEncodeError) as error:
        raise KeyError_(f"not a PEM public key: {error}") from None
    if isinstance(key, ed25519.Ed25519PublicKey):
        return key
    if isinstance(key, ec.EllipticCurvePublicKey) and isinstance(key.curve, ec.SECP256R1):
        return key
    raise KeyError_("the public key is neither Ed25519 nor ECDSA P-256")


def verify_signature(public: PublicKey, signature: Signature, data: bytes) -> bool:
    """Whether ``signature`` is this key's over ``data`` (a wrong key id is a failure too)."""
    if signature.key_id != key_id(public):
        return False
    try:
        raw = base64.b64decode(signature.value, validate=True)
        if isinstance(public, ed25519.Ed25519PublicKey):
            public.verify(raw, data)
        else:
            public.verify(raw, data, ec.ECDSA(hashes.SHA256()))
    except (InvalidSignature, ValueError):
        return False
    return True


def generate(key_type: KeyType) -> SigningKey:
    if key_type is KeyType.ED25519:
        return SigningKey(ed25519.Ed25519PrivateKey.generate())
    return SigningKey(ec.generate_private_key(ec.SECP256R1()))


def write_new_key(path: Path, key_type: KeyType) -> SigningKey:
    """Generate a key and write it, readable by its owner only; an existing file is refused
    (replacing a key would orphan every signature made with it)."""
    key = generate(key_type)
    pem = key.private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise KeyError_(f"{path} exists; a signing key is never replaced") from None
    with os.fdopen(fd, "wb") as handle:
        handle.write(pem)
    return key


def load_key(path: Path) -> SigningKey:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise KeyError_(f"SNAP_SIGNING_KEY {path} cannot be read: {error.strerror}") from None
    try:
        private = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as error:
        raise KeyError_(f"SNAP_SIGNING_KEY {path} is not an unencrypted PEM key: {error}") from None
    if isinstance(private, ed25519.Ed25519PrivateKey):
        return SigningKey(private)
    if isinstance(private, ec.EllipticCurvePrivateKey) and isinstance(private.curve, ec.SECP256R1):
        return SigningKey(private)
    raise KeyError_(f"SNAP_SIGNING_KEY {path} is neither an Ed25519 nor an ECDSA P-256 key")
