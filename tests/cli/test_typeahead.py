"""Keys typed before a passphrase prompt, in a real pty: not echoed, not the passphrase.

`paw verify --person alice` loads its commands and opens the store before it asks; what a
rater types meanwhile used to stand on the screen and then be read as the passphrase.
"""

from __future__ import annotations

import pytest

from tests.cli.pty_prompt import PASSPHRASE, Terminal, make_store
from workbench.cli.typeahead import will_prompt

AHEAD = "typedahead42"
"""Typed after `paw` started, before its prompt."""


@pytest.fixture
def store(tmp_path) -> str:
    return make_store(str(tmp_path / "paw.db"))


def test_keys_typed_before_the_prompt_are_neither_echoed_nor_the_passphrase(store):
    term = Terminal(["--db", store, "verify", "--person", "alice"])
    # Echo goes off as soon as `paw` starts, well before the prompt (on the old code
    # only getpass switched it off, at the prompt itself).
    assert term.wait_echo_off(), "echo never went off"
    prompted_already = "Passphrase for alice" in term.text
    term.type(AHEAD)
    assert term.read_until("Passphrase for alice"), term.text
    assert not prompted_already  # the keys really were typed ahead of the prompt
    before_prompt = term.text
    assert AHEAD not in before_prompt  # not echoed
    term.type(PASSPHRASE + "\n")
    code = term.finish()
    assert "wrong passphrase" not in term.text, term.text  # the early keys were dropped
    assert AHEAD not in term.text
    assert code == 0, term.text


def test_hold_switches_echo_off_and_release_gives_it_back(monkeypatch):
    import os
    import sys
    import termios

    from workbench.cli import typeahead

    master, slave = os.openpty()
    try:
        with os.fdopen(os.dup(slave), "r") as tty:
            monkeypatch.setattr(sys, "stdin", tty)
            assert termios.tcgetattr(slave)[3] & termios.ECHO
            assert not typeahead.hold(["audits"])  # no prompt coming: left alone
            assert termios.tcgetattr(slave)[3] & termios.ECHO
            assert typeahead.hold(["annotate", "--rater", "alice"])
            assert not termios.tcgetattr(slave)[3] & termios.ECHO
            os.write(master, b"early")
            typeahead.discard()  # what was typed is gone: nothing left to read
            os.write(master, b"x\n")
            assert os.read(slave, 100) == b"x\n"
            typeahead.release()
            assert termios.tcgetattr(slave)[3] & termios.ECHO
    finally:
        typeahead.release()
        os.close(master)
        os.close(slave)


def test_which_command_lines_will_prompt():
    assert will_prompt(["annotate", "--rater", "alice"])
    assert will_prompt(["coordinate", "--coordinator=carol", "--set", "s"])
    assert will_prompt(["raters", "add", "dave"])
    assert not will_prompt(["coordinate", "--coordinator", "carol", "--passphrase-env", "P"])
    assert not will_prompt(["annotate", "--rater", "alice", "--help"])
    assert not will_prompt(["audits"])
    # `paw ui` may open on its sign-in form (issue 22: a passphrase typed before it was
    # on screen landed in the name field): echo off from the start, type-ahead discarded.
    assert will_prompt(["ui"]) and will_prompt(["--db", "x.db", "ui"])
    assert will_prompt(["--db=x.db", "ui", "--threads", "2"])
    assert not will_prompt(["--db", "ui", "audits"]) and not will_prompt(["ui", "--help"])
