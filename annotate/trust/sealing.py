"""Sealed label values: each label's field and value encrypted to the rater and the set's
coordinator, so reading the shared file with sqlite3 does not show another rater's labels.

Every person has, besides their Ed25519 signing key, an X25519 key for receiving sealed
values. Its private half is derived from the signing key (HKDF-SHA256, label
`paw-box-v1`), so it is unsealed by the same passphrase and stored nowhere; its public half
is `people.box_public_key`, attested in the signed record like the signing key.

Sealing one event (`seal`): a random 32-byte content key encrypts the padded JSON
`{"field": ..., "value": ...}` with ChaCha20-Poly1305; for each recipient an ephemeral
X25519 exchange with their public key, through HKDF-SHA256, gives a key that wraps the
content key (ChaCha20-Poly1305 again). The associated data binds every ciphertext to its
event (id, case, rater), so a sealed value cannot be moved to another event. The stored
form (`label_events.sealed_json`) names the recipients by person id and holds only
ciphertexts. Plaintexts are padded to at least `MIN_PLAIN_BYTES` and to a multiple of
`PAD_BYTES`, so every categorical label has the same length; a note's length shows only
to the nearest 64 bytes (notes of up to 74 bytes all seal to one length). A label made in the
store also seals its time on item (`time_on_item`), which the column no longer holds.

Opening (`open_row`) uses the keys this process holds: `hold` is called when a person
signs in (`annotate.trust.identity.issue`). A rater's process holds only that rater's key, so it
can read only their own labels; agreement, export, adjudication and the reports are
computed in the coordinator's signed-in session, which holds the coordinator's key.
Opened values are cached per event and ciphertext.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from typing import Any

from store.errors import UserError

SEALED_FIELD = "*"
"""`label_events.field` of a sealed event (the real field is inside the seal)."""

PAD_BYTES = 64
"""Plaintexts are padded to a multiple of this many bytes."""

MIN_PLAIN_BYTES = 128
"""Plaintexts are padded to at least this many bytes: every categorical label with its
sealed time on item (the longest, `{"field":"stereotype_category","time_on_item_ms":
86400000,"value":"socioeconomic_status"}`, is 89 bytes) seals to one length."""

_BOX_LABEL = b"paw-box-v1"
_WRAP_INFO = b"paw-seal-wrap-v1"
_NONCE = 12

_HELD: dict[int, Any] = {}
_OPENED: dict[str, dict[str, Any]] = {}


def box_private(signing_key: Any) -> Any:
    """A person's X25519 private key, derived from their Ed25519 signing key."""
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    raw = signing_key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                    serialization.NoEncryption())
    seed = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_BOX_LABEL).derive(raw)
    return X25519PrivateKey.from_private_bytes(seed)


def box_public(signing_key: Any) -> bytes:
    """The raw 32-byte X25519 public key that goes with `box_private(signing_key)`."""
    from cryptography.hazmat.primitives import serialization

    return box_private(signing_key).public_key().public_bytes(serialization.Encoding.Raw,
                                                               serialization.PublicFormat.Raw)


def hold(person_id: int, signing_key: Any) -> None:
    """Keep a signed-in person's receiving key for this process (their labels then open)."""
    if signing_key is not None:
        _HELD[int(person_id)] = box_private(signing_key)


def held() -> frozenset[int]:
    """Ids of the people whose sealed values this process can open."""
    return frozenset(_HELD)


def _aad(event_id: int, case_id: int, person_id: int) -> bytes:
    return f"paw-label-v1:{int(event_id)}:{int(case_id)}:{int(person_id)}".encode()


def _wrapping_key(shared: bytes, ephemeral: bytes, recipient: bytes) -> bytes:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return HKDF(algorithm=hashes.SHA256(), length=32, salt=ephemeral + recipient,
                info=_WRAP_INFO).derive(shared)


def seal(field: str, value: str | None, *, event_id: int, case_id: int, person_id: int,
         recipients: dict[int, bytes], extra: dict[str, Any] | None = None) -> str:
    """The sealed form of one label (canonical JSON text for `label_events.sealed_json`).

    Args:
        field: the label's field.
        value: its value (None: a cleared label).
        event_id, case_id, person_id: the event it belongs to (bound as associated data).
        recipients: person id -> raw X25519 public key (the rater and the coordinator).
        extra: more to seal with it (a live event's time on item, a merged event's
            commitment salt).
    """
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.x25519 import (
        X25519PrivateKey,
        X25519PublicKey,
    )
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

    plain = json.dumps({**(extra or {}), "field": field, "value": value}, sort_keys=True,
                       separators=(",", ":"), ensure_ascii=False).encode()
    plain += b" " * max(MIN_PLAIN_BYTES - len(plain), -len(plain) % PAD_BYTES)
    aad = _aad(event_id, case_id, person_id)
    content_key, nonce = secrets.token_bytes(32), secrets.token_bytes(_NONCE)
    ephemeral = X25519PrivateKey.generate()
    eph_public = ephemeral.public_key().public_bytes(serialization.Encoding.Raw,
                                                     serialization.PublicFormat.Raw)
    wrapped = {}
    for pid, public in sorted(recipients.items()):
        shared = ephemeral.exchange(X25519PublicKey.from_public_bytes(bytes(public)))
        wrap_nonce = secrets.token_bytes(_NONCE)
        key = _wrapping_key(shared, eph_public, bytes(public))
        wrapped[str(pid)] = {"n": wrap_nonce.hex(), "k": ChaCha20Poly1305(key).encrypt(
            wrap_nonce, content_key, aad).hex()}
    return json.dumps({"v": 1, "eph": eph_public.hex(), "n": nonce.hex(),
                       "ct": ChaCha20Poly1305(content_key).encrypt(nonce, plain, aad).hex(),
                       "to": wrapped}, sort_keys=True, separators=(",", ":"))


def open_sealed(sealed_json: str, *, event_id: int, case_id: int,
                person_id: int) -> tuple[str, str | None] | None:
    """(field, value) of a sealed label, or None when this process holds no recipient's key
    (or the ciphertext was altered: the signed record names that)."""
    data = _open(sealed_json, event_id=event_id, case_id=case_id, person_id=person_id)
    return None if data is None else (str(data["field"]), data["value"])


def _open(sealed_json: str, *, event_id: int, case_id: int,
          person_id: int) -> dict[str, Any] | None:
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PublicKey
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

    try:
        blob = json.loads(sealed_json)
        eph = bytes.fromhex(blob["eph"])
        aad = _aad(event_id, case_id, person_id)
        for pid, wrapped in blob["to"].items():
            private = _HELD.get(int(pid))
            if private is None:
                continue
            mine = private.public_key().public_bytes(serialization.Encoding.Raw,
                                                     serialization.PublicFormat.Raw)
            shared = private.exchange(X25519PublicKey.from_public_bytes(eph))
            key = _wrapping_key(shared, eph, mine)
            content_key = ChaCha20Poly1305(key).decrypt(bytes.fromhex(wrapped["n"]),
                                                        bytes.fromhex(wrapped["k"]), aad)
            plain = ChaCha20Poly1305(content_key).decrypt(bytes.fromhex(blob["n"]),
                                                          bytes.fromhex(blob["ct"]), aad)
            return json.loads(plain.decode())
    except (InvalidTag, ValueError, KeyError, TypeError, AttributeError):
        return None
    return None


def open_row(row: dict[str, Any]) -> tuple[str, str | None] | None:
    """(field, value) of a `label_events` row: in clear for an unsealed (older) event,
    opened with a held key for a sealed one; None when it cannot be opened here."""
    if row.get("sealed_json") is None:
        return row["field"], row["value"]
    data = open_row_full(row)
    return None if data is None else (str(data["field"]), data["value"])


def open_row_full(row: dict[str, Any]) -> dict[str, Any] | None:
    """Everything sealed in a sealed `label_events` row (field, value and any extra), or
    None when it cannot be opened here."""
    sealed = row["sealed_json"]
    cache_key = f"{row['id']}:{row['case_id']}:{row['person_id']}:" + \
        hashlib.sha256(sealed.encode()).hexdigest()
    if cache_key in _OPENED:
        return _OPENED[cache_key]
    opened = _open(sealed, event_id=row["id"], case_id=row["case_id"],
                   person_id=row["person_id"])
    if opened is not None:
        _OPENED[cache_key] = opened
    return opened


def time_on_item(row: dict[str, Any]) -> int | None:
    """A `label_events` row's time on item: its column where that holds it (older events,
    merged rater-file events, whose time the rater signed in clear), else sealed with its
    value (live events from issue 35 on), opened with a held key; None when not recorded
    or not openable here."""
    if row.get("time_on_item_ms") is not None or row.get("sealed_json") is None:
        return row.get("time_on_item_ms")
    data = open_row_full(row)
    value = None if data is None else data.get("time_on_item_ms")
    return int(value) if value is not None else None


def require_open(row: dict[str, Any]) -> tuple[str, str | None]:
    """`open_row`, refusing what this process cannot open.

    Raises:
        UserError: the label is sealed to people who have not signed in here.
    """
    opened = open_row(row)
    if opened is None:
        raise UserError(f"label event {row['id']}: its value is sealed to the rater and the "
                        "set's coordinator; it opens only in their signed-in session (the "
                        "coordinator: add --coordinator NAME)")
    return opened
