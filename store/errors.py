"""Errors a user can cause: the CLI prints them as one line and exits non-zero."""

from __future__ import annotations


class UserError(Exception):
    """A mistake in the user's input (file, row, field, argument), not a bug.

    The message must say where the problem is and what was expected; the CLI prints
    it verbatim with no traceback.
    """


class NotFound(UserError):
    """A named thing (dataset, model, audit, rater, case) does not exist in the store."""


def no_such(path: object, what: str = "file") -> str:
    """'PATH: no such WHAT' — or, for a symbolic link, what it really is: a loop (it points
    back to itself) or a link to a file that does not exist."""
    import errno
    import os

    where = os.path.expanduser(str(path))
    if os.path.islink(where):
        try:
            os.stat(where)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return (f"{path}: a symbolic link loop (the link leads back to itself), not "
                        f"a {what}")
            return f"{path}: a symbolic link to {os.readlink(where)}, which does not exist"
    return f"{path}: no such {what}"


def is_link_loop(path: object) -> bool:
    """True when `path` is a symbolic link that leads back to itself."""
    import errno
    import os

    where = os.path.expanduser(str(path))
    if not os.path.islink(where):
        return False
    try:
        os.stat(where)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False
