"""Passphrase strength: zxcvbn's estimate, a minimum score, and the one-line refusal.

zxcvbn (Dropbox's estimator, the maintained Python port) scores a passphrase 0–4 from the
number of guesses an attacker who knows common passwords, words, names, dates, keyboard
patterns and repeats would need. PAW refuses anything below `MIN_SCORE` = 3, zxcvbn's
"safely unguessable: moderate protection from an offline slow-hash scenario" (≥ 10⁸
guesses). The offline attack is the one that matters: anyone with a copy of the file can
try guesses against a person's stored salt and tag at one scrypt each (docs/annotation.md
gives the measured cost of one guess), so `password`, `12345678`, `aaaaaaaa` and eight
spaces — all score 0 — fall to a short word list in seconds.
"""

from __future__ import annotations

from store.errors import UserError

MIN_SCORE = 3
"""Lowest zxcvbn score accepted (0–4; 3 = at least about 10**8 guesses)."""

MIN_CHARS = 8
"""Shortest passphrase accepted, whatever its score."""


def strength(passphrase: str, name: str = "") -> tuple[int, str]:
    """(zxcvbn score 0–4, its warning or suggestion) for a passphrase.

    Args:
        passphrase: the candidate.
        name: the person's name, which an attacker would try first.
    """
    from zxcvbn import zxcvbn

    result = zxcvbn(passphrase, user_inputs=[name] if name else [])
    feedback = result.get("feedback") or {}
    hint = feedback.get("warning") or " ".join(feedback.get("suggestions") or [])
    return int(result["score"]), str(hint).strip()


def check(passphrase: str, name: str = "") -> None:
    """Refuse a passphrase that is too short or that zxcvbn scores below `MIN_SCORE`.

    Raises:
        UserError: one line with the score, zxcvbn's reason and what to do instead.
    """
    if len(passphrase) < MIN_CHARS:
        raise UserError(f"passphrase: expected at least {MIN_CHARS} characters, "
                        f"got {len(passphrase)}")
    score, hint = strength(passphrase, name)
    if score < MIN_SCORE:
        why = f": {hint.rstrip('.')}" if hint else ""
        raise UserError(f"passphrase: too easy to guess (zxcvbn strength {score} of 4, at "
                        f"least {MIN_SCORE} needed{why}); use three or four unrelated words")
