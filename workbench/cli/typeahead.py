"""Keys typed before a passphrase prompt: neither echoed nor taken as the passphrase.

A command that signs someone in loads its modules (and opens the store) before it can
ask for the passphrase, and a terminal echoes whatever is typed meanwhile: a passphrase
typed ahead of the prompt would stand on the screen, and then be read as the answer.
So the `paw` entry point, first of all (before any heavy import), switches the terminal's
echo off when the command line will ask for a passphrase (`will_prompt`); each hidden
prompt first discards the keys typed ahead (`termios.tcflush(TCIFLUSH)`) and gives the
terminal back its settings once answered. The settings are also restored at exit, so a
command that fails before its prompt leaves the terminal as it found it.

Standard library only: this module is imported before anything else of the command.
"""

from __future__ import annotations

import atexit
import os
import sys
from collections.abc import Sequence

try:
    import termios
except ImportError:  # not a POSIX terminal (Windows): nothing to do
    termios = None  # type: ignore[assignment]

SIGNIN_OPTIONS: tuple[str, ...] = ("--rater", "--coordinator", "--person", "--file")
"""Options naming someone who signs in at a prompt (`workbench.cli.signin`)."""

ENV_OPTIONS: tuple[str, ...] = ("--passphrase-env",)
"""With this option the passphrase comes from the environment: no prompt."""

_saved: tuple[int, list] | None = None


def will_prompt(argv: Sequence[str]) -> bool:
    """Will this command line ask for a passphrase at the terminal (a best guess: wrong
    only means echo is off a little longer, or not off before the prompt)?"""
    names = [arg.split("=", 1)[0] for arg in argv]
    if "--help" in names or "-h" in names or any(n in ENV_OPTIONS for n in names):
        return False
    return (any(n in SIGNIN_OPTIONS for n in names) or list(argv[:2]) == ["raters", "add"]
            or _command(argv) == "ui")  # its sign-in form may be the first thing shown


def _command(argv: Sequence[str]) -> str | None:
    """The command word after the group's own options (`paw --db x.db ui` → "ui")."""
    index = 0
    while index < len(argv) and argv[index].startswith("-"):
        index += 1 if "=" in argv[index] or argv[index] == "--version" else 2
    return argv[index] if index < len(argv) else None


def _terminal() -> int | None:
    """The file descriptor of the terminal the prompt reads (stdin), if it is one."""
    try:
        if sys.stdin is not None and os.isatty(sys.stdin.fileno()):
            return sys.stdin.fileno()
    except (OSError, ValueError):
        pass
    return None


def hold(argv: Sequence[str]) -> bool:
    """Switch the terminal's echo off now if `argv` will ask for a passphrase.

    Returns:
        True when echo was switched off (restored by `release`, at the latest at exit).
    """
    global _saved
    fd = _terminal()
    if termios is None or fd is None or _saved is not None or not will_prompt(argv):
        return False
    try:
        attrs = termios.tcgetattr(fd)
        quiet = list(attrs)
        quiet[3] &= ~termios.ECHO
        termios.tcsetattr(fd, termios.TCSANOW, quiet)
    except termios.error:
        return False
    _saved = (fd, attrs)
    atexit.register(release)
    return True


def discard() -> None:
    """Drop the keys typed but not read yet (called right before a hidden prompt)."""
    fd = _terminal()
    if termios is None or fd is None:
        return
    try:
        termios.tcflush(fd, termios.TCIFLUSH)
    except termios.error:
        pass


def release() -> None:
    """Give the terminal back the settings `hold` found (echo on again)."""
    global _saved
    if _saved is None or termios is None:
        return
    fd, attrs = _saved
    _saved = None
    try:
        termios.tcsetattr(fd, termios.TCSANOW, attrs)
    except termios.error:
        pass
