"""Issue 34, criterion 6: control characters are stored as typed and shown escaped.

A rater's note holding OSC 52 (writes the reader's clipboard) and CSI 2J (clears the
screen) is typed through `paw label`, stored as typed, and read by the coordinator with
`paw annotate export`: what reaches the terminal carries no control character. A dataset
named with an escape sequence is listed by `paw datasets` the same way, and an error
message naming it too.
"""

from __future__ import annotations

import re

import pytest

from tests.annotate.test_cli import AS_CAROL, env, setup_set  # noqa: F401  (fixture)
from tests.paw_cli import paw
from workbench.present.controls import EscapingStream, escape_controls

OSC52 = "\x1b]52;c;cm0gLXJmIH4K\x07"
CLEAR = "\x1b[2J\x1b[H"
RAW = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""A control character other than newline and tab (CR only before LF)."""


def no_raw_controls(text: str) -> bool:
    return RAW.search(text.replace("\r\n", "\n")) is None


def test_escape_controls_shows_every_control_and_keeps_lines():
    assert escape_controls(f"a{OSC52}b") == "a\\x1b]52;c;cm0gLXJmIH4K\\x07b"
    assert escape_controls(CLEAR) == "\\x1b[2J\\x1b[H"
    assert escape_controls("x\x9b31m\x7f\x00") == "x\\x9b31m\\x7f\\x00"
    assert escape_controls("one\ttwo\nthree\r\nfour\rfive") == \
        "one\ttwo\nthree\r\nfour\\rfive"
    assert escape_controls("\x1b[1mbold\x1b[0m \x1b[2J", keep_sgr=True) == \
        "\x1b[1mbold\x1b[0m \\x1b[2J"
    assert escape_controls("é ü 日本 — ok") == "é ü 日本 — ok"


def test_the_escaping_stream_is_the_wrapped_one_otherwise(capsys):
    import sys

    stream = EscapingStream(sys.stdout)
    assert stream.write(f"x{CLEAR}\n") == len(f"x{CLEAR}\n")
    stream.flush()
    assert capsys.readouterr().out == "x\\x1b[2J\\x1b[H\n"
    assert stream.isatty() == sys.stdout.isatty()


def test_on_a_terminal_a_screen_clear_is_shown_not_obeyed():
    import io

    import click

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    click.echo(f"note: {CLEAR}{OSC52}", file=EscapingStream(screen))
    assert screen.getvalue() == "note: \\x1b[2J\\x1b[H\\x1b]52;c;cm0gLXJmIH4K\\x07\n"


def test_a_note_with_osc52_and_a_screen_clear_reaches_the_coordinator_escaped(
        env, capsys, monkeypatch):  # noqa: F811
    codes = setup_set(env)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    note = f"see chart {OSC52}{CLEAR}ok"
    code, out, err = paw(capsys, "label", codes[0], "--rater", "alice", "--field", "note",
                         "--value", note, "--passphrase-env", "PW")
    assert code == 0, err
    assert no_raw_controls(out + err)
    code, out, err = paw(capsys, "annotate", "export", "--format", "csv", *AS_CAROL)
    assert code == 0, err
    assert no_raw_controls(out) and no_raw_controls(err)
    # (click itself drops CSI sequences such as the screen clear when stdout is not a
    # terminal; on a terminal they reach the escaping stream and are shown as \x1b[2J.)
    assert "see chart \\x1b]52;c;cm0gLXJmIH4K\\x07" in out
    # Stored as typed: the export written to a file (data, not a terminal) has it raw.
    code, _, err = paw(capsys, "annotate", "export", "--format", "jsonl", "--out",
                       env["PAW_DB"] + ".labels.jsonl", *AS_CAROL)
    assert code == 0, err
    import json

    with open(env["PAW_DB"] + ".labels.jsonl", encoding="utf-8") as handle:
        values = [json.loads(line).get("value") for line in handle]
    assert note in values


def test_a_dataset_name_with_an_escape_is_listed_escaped(tmp_path, capsys):
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"id": "1", "question": "Q?", "options": {"A": "a", "B": "b"}, '
                    '"answer": "A"}\n', encoding="utf-8")
    db = str(tmp_path / "paw.db")
    name = f"evil{OSC52}set"
    code, out, err = paw(capsys, "import", "jsonl", str(rows), "--name", name, "--db", db)
    assert code == 0, err
    assert no_raw_controls(out + err)
    code, out, err = paw(capsys, "datasets", "--db", db)
    assert code == 0, err
    assert "evil\\x1b]52;c;cm0gLXJmIH4K\\x07set" in out and no_raw_controls(out)
    code, out, err = paw(capsys, "report", "--audit", name, "--db", db)
    assert code == 1 and no_raw_controls(err), err


@pytest.mark.parametrize("argv", [["audits", "--db", "x\x1b]52;c;AAAA\x07.db"]])
def test_an_error_naming_an_argument_is_escaped(capsys, argv):
    code, out, err = paw(capsys, *argv)
    assert code == 1 and "\\x1b]52" in err and no_raw_controls(err), err
