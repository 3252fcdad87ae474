"""Errors a user can cause: the CLI prints them as one line and exits non-zero."""

from __future__ import annotations


class UserError(Exception):
    """A mistake in the user's input (file, row, field, argument), not a bug.

    The message must say where the problem is and what was expected; the CLI prints
    it verbatim with no traceback.
    """


class NotFound(UserError):
    """A named thing (dataset, model, audit, rater, case) does not exist in the store."""
