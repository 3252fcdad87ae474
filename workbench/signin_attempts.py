"""Wrong passphrases at sign-in: how many are allowed and how long each costs, one rule for
the CLI prompt (`workbench/cli/signin.py`) and the workbench's two forms (the gate,
`tui/screens/signin.py`, and key 5, `tui/screens/coordination.py`).

The wait after a wrong passphrase slows guessing on top of the scrypt each check costs
(~0.4 s); after `MAX_ATTEMPTS` the CLI command stops and a form stays locked for that run
of the app.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_ATTEMPTS = 3
"""Wrong passphrases allowed before the prompt stops or the form locks."""

FAILURE_DELAYS_S: tuple[float, ...] = (1.0, 2.0, 4.0)
"""Wait after the 1st, 2nd, 3rd wrong passphrase (the last repeats beyond)."""


def failure_delay(failures: int) -> float:
    """Seconds to wait after a wrong passphrase that follows `failures` earlier ones."""
    # Read at call time, so a test can shorten the waits for the whole module at once.
    return FAILURE_DELAYS_S[min(failures, len(FAILURE_DELAYS_S) - 1)]


@dataclass
class FailedAttempts:
    """A sign-in form's wrong passphrases so far."""

    count: int = 0

    @property
    def locked(self) -> bool:
        """No attempt left: the form takes no more passphrases."""
        return self.count >= MAX_ATTEMPTS

    def delay(self) -> float:
        """The wait after the wrong passphrase being counted now."""
        return failure_delay(self.count)

    def record(self, error: str) -> str:
        """Count one wrong passphrase; returns what the form says under it.

        Args:
            error: the one-line reason the sign-in was refused.
        """
        self.count += 1
        left = MAX_ATTEMPTS - self.count
        return error + (
            f" ({left} attempt(s) left: type the passphrase again; shift+tab: the name)"
            if left > 0 else " — locked: restart the app to try again")
