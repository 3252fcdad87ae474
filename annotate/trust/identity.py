"""Who is signed in: the authenticated `Person`, its per-process proof, and `require`.

A `Person` is only obtained through `annotate.trust.people.register` or `authenticate`, which
call `issue`; it carries a proof that `require` (and so every write) checks, and the
person's private signing key, unsealed by their passphrase. Below `annotate.trust.people` and
`annotate.trust.record`, which both need it.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field
from typing import Any

from store.errors import UserError

# A random key alive only in this process: `Person.proof` is an HMAC of the person's id,
# name and role under it, so a Person built by hand (not by authenticate) is rejected.
_PROCESS_KEY = secrets.token_bytes(32)


def _proof(person_id: int, name: str, role: str) -> str:
    return hmac.new(_PROCESS_KEY, f"{person_id}\x00{name}\x00{role}".encode(),
                    hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Person:
    """An authenticated rater or coordinator.

    Attributes:
        id: `people.id`.
        name: unique name, e.g. 'alice'.
        role: 'rater' or 'coordinator'.
        proof: issued by `authenticate`/`register`; checked by every write.
        signing_key: the person's Ed25519 private key, unsealed by their passphrase.
    """

    id: int
    name: str
    role: str
    proof: str = field(default="", repr=False, compare=False)
    signing_key: Any = field(default=None, repr=False, compare=False)

    @property
    def is_coordinator(self) -> bool:
        """True for the coordinator role."""
        return self.role == "coordinator"


def issue(person_id: int, name: str, role: str, signing_key: Any) -> Person:
    """A `Person` with its proof; only `annotate.trust.people` calls this, once the person has
    registered or their passphrase has been checked. From then on this process can open
    the label values sealed to them (`annotate.trust.sealing.hold`)."""
    from annotate.trust.sealing import hold

    hold(person_id, signing_key)
    return Person(person_id, name, role, _proof(person_id, name, role), signing_key)


def require(person: Person, role: str | None = None) -> Person:
    """Check that `person` came from `authenticate`/`register` (and has `role`, if given).

    Raises:
        UserError: a hand-built Person, or the wrong role.
    """
    if not isinstance(person, Person) or not hmac.compare_digest(
            person.proof, _proof(person.id, person.name, person.role)):
        raise UserError("person: expected an authenticated person (log in with a passphrase)")
    if role is not None and person.role != role:
        raise UserError(f"{person.name}: this needs the {role} role, not {person.role}")
    return person
