"""Passphrase hashing (scrypt, cost stored per hash) and each person's Ed25519 signing key.

A passphrase is stretched once per sign-in: `master = scrypt(passphrase, salt, N, r, p)`.
Two independent values come from `master` by HMAC-SHA256 with fixed labels: the stored
authentication tag (`pass_hash`) and the key that encrypts (wraps) the person's private
signing key with ChaCha20-Poly1305. The store keeps the salt, the cost, the tag, the
wrapped key and the public key; never the passphrase, `master` or the private key. So:

- knowing the store does not let anyone sign as a person (the private key is sealed under
  a key only the passphrase yields; guessing costs one scrypt per guess);
- anyone can check a signature with the public key, without any passphrase;
- raising the cost re-wraps the same private key, so the public key never changes.

The cost: N = 2**17, r = 8, p = 1 (128 MiB, about 0.4 s here), today's OWASP floor for
scrypt. `PAW_SCRYPT_LOG2N` lowers N for the test suite only; every hash stores the cost it
was made with and is always checked with that cost, and the CLI warns when the variable is
set. Hashes made by older PAW (scrypt N = 2**14, no stored cost) still verify and are
re-made at the current cost at the next sign-in.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from dataclasses import dataclass
from typing import Any

from store.errors import UserError

RECOMMENDED_LOG2N = 17
"""scrypt cost exponent used in production (N = 2**17)."""

TEST_COST_ENV = "PAW_SCRYPT_LOG2N"
"""Environment variable that lowers the scrypt cost for tests (never set it in production)."""

LEGACY_PARAMS: dict[str, Any] = {"alg": "scrypt", "n": 2**14, "r": 8, "p": 1}
"""The cost of hashes made before costs were stored (PAW 0.1, migration m001)."""

_SALT_BYTES = 16
_NONCE_BYTES = 12
_AUTH_LABEL = b"paw-auth-v1"
_WRAP_LABEL = b"paw-wrap-v1"
SIGNATURE_CONTEXT = b"paw-record-v1:"
"""Prefix of every signed message, so a signature made here means nothing elsewhere."""


def current_params() -> dict[str, Any]:
    """The scrypt cost new hashes get: N = 2**17, or 2**PAW_SCRYPT_LOG2N in tests.

    Raises:
        UserError: PAW_SCRYPT_LOG2N is set but not an integer in 4..20.
    """
    raw = os.environ.get(TEST_COST_ENV)
    log2n = RECOMMENDED_LOG2N
    if raw:
        try:
            log2n = int(raw)
        except ValueError:
            raise UserError(f"{TEST_COST_ENV}: expected an integer 4..20, got {raw!r}") from None
        if not 4 <= log2n <= 20:
            raise UserError(f"{TEST_COST_ENV}: expected an integer 4..20, got {raw!r}")
    return {"alg": "scrypt", "n": 2**log2n, "r": 8, "p": 1}


def cost_warning() -> str | None:
    """A warning line when the test-only cost variable lowers the cost, else None."""
    params = current_params()
    if params["n"] < 2**RECOMMENDED_LOG2N:
        return (f"warning: {TEST_COST_ENV} lowers passphrase hashing to scrypt N=2**"
                f"{params['n'].bit_length() - 1} (tests only; unset it for real use)")
    return None


def params_json(params: dict[str, Any]) -> str:
    """Canonical JSON of a cost, as stored in `people.kdf_json`."""
    return json.dumps(params, sort_keys=True, separators=(",", ":"))


def weaker_than_current(params: dict[str, Any]) -> bool:
    """True when a stored cost is below what new hashes get (so it is upgraded at sign-in)."""
    target = current_params()
    return (params.get("alg") != "scrypt" or params["n"] < target["n"]
            or params["r"] < target["r"] or params["p"] < target["p"])


def stretch(passphrase: str, salt: bytes, params: dict[str, Any]) -> bytes:
    """scrypt(passphrase, salt) at the given cost (32 bytes)."""
    n, r, p = int(params["n"]), int(params["r"]), int(params["p"])
    # scrypt needs 128·r·N bytes; Python's default cap (32 MiB) refuses N = 2**17.
    return hashlib.scrypt(passphrase.encode("utf-8"), salt=salt, n=n, r=r, p=p, dklen=32,
                          maxmem=256 * r * n + 2**20)


def new_salt() -> bytes:
    """A fresh random salt."""
    return secrets.token_bytes(_SALT_BYTES)


def auth_tag(master: bytes) -> bytes:
    """The stored authentication tag derived from a stretched passphrase."""
    return hmac.new(master, _AUTH_LABEL, hashlib.sha256).digest()


def legacy_tag(passphrase: str, salt: bytes) -> bytes:
    """The hash PAW 0.1 stored: scrypt at `LEGACY_PARAMS` itself, no derivation."""
    return stretch(passphrase, salt, LEGACY_PARAMS)


def _wrapping_key(master: bytes) -> bytes:
    return hmac.new(master, _WRAP_LABEL, hashlib.sha256).digest()


@dataclass(frozen=True)
class KeyPair:
    """A person's Ed25519 key: the private key object and the raw 32-byte public key."""

    private: Any
    public: bytes


def new_keypair() -> KeyPair:
    """A fresh random Ed25519 key pair."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    private = Ed25519PrivateKey.generate()
    return KeyPair(private, public_bytes(private))


def public_bytes(private: Any) -> bytes:
    """The raw 32-byte public key of a private key."""
    from cryptography.hazmat.primitives import serialization

    return private.public_key().public_bytes(serialization.Encoding.Raw,
                                              serialization.PublicFormat.Raw)


def wrap(private: Any, master: bytes, name: str) -> bytes:
    """The private key sealed under the passphrase (nonce ‖ ChaCha20-Poly1305 ciphertext)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

    raw = private.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                serialization.NoEncryption())
    nonce = secrets.token_bytes(_NONCE_BYTES)
    return nonce + ChaCha20Poly1305(_wrapping_key(master)).encrypt(
        nonce, raw, f"paw-person:{name}".encode())


def unwrap(blob: bytes | None, master: bytes, name: str) -> Any | None:
    """The private key from `wrap`, or None when the passphrase or the blob is wrong."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

    if not blob:
        return None
    blob = bytes(blob)
    try:
        raw = ChaCha20Poly1305(_wrapping_key(master)).decrypt(
            blob[:_NONCE_BYTES], blob[_NONCE_BYTES:], f"paw-person:{name}".encode())
    except (InvalidTag, ValueError):
        return None
    return Ed25519PrivateKey.from_private_bytes(raw)


def sign(private: Any, digest: str) -> bytes:
    """Ed25519 signature of a record entry's hex digest (64 bytes)."""
    return private.sign(SIGNATURE_CONTEXT + digest.encode("ascii"))


def signature_valid(public: bytes | None, signature: bytes | None, digest: str) -> bool:
    """True when `signature` is the holder of `public`'s signature of `digest`."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    if not public or not signature:
        return False
    try:
        Ed25519PublicKey.from_public_bytes(bytes(public)).verify(
            bytes(signature), SIGNATURE_CONTEXT + digest.encode("ascii"))
    except (InvalidSignature, ValueError):
        return False
    return True


def fingerprint(public: bytes | None) -> str:
    """Short printable fingerprint of a public key (first 16 hex digits of its SHA-256)."""
    if not public:
        return "none"
    return hashlib.sha256(bytes(public)).hexdigest()[:16]
