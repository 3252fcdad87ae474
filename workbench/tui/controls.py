"""Control characters in the UI: shown escaped, as the CLI shows them.

Rich's `Text` and Textual's `Content` drop only bell, backspace, vertical tab, form feed
and carriage return from the strings they are built from; an escape sequence in a note,
a name or a model's answer (OSC 52 writes the reader's clipboard, CSI 2J clears the
screen) would reach the terminal. `show_controls_escaped` extends the one translate table
each of them applies to every string, so each C0/C1 control and DEL is shown as `\\xNN`
(`workbench.present.controls.ESCAPE_TABLE`); every PAW app calls it when it starts.
"""

from __future__ import annotations


def show_controls_escaped() -> None:
    """Make every Rich `Text` and Textual `Content` built from a string escape controls."""
    import rich.control
    import textual.content

    from workbench.present.controls import ESCAPE_TABLE

    for module in (rich.control, textual.content):
        table = getattr(module, "_CONTROL_STRIP_TRANSLATE", None)
        if isinstance(table, dict):  # the table strip_control_codes reads by default
            table.update(ESCAPE_TABLE)
