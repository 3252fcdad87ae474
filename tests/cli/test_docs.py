"""Every `paw` command and subcommand is in docs/cli.md's "Every command" table, and every
command the table names exists (the check sqlite-utils runs over its CLI reference).

The commands come from walking the registered click tree (`tests/cli/test_help.walk`), so
a command added by any module without a line in the table fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import click

from tests.cli.test_help import walk
from workbench.cli import cli

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
SECTION = "## Every command"


def documented(text: str) -> set[str]:
    """Command paths named in the first column of the reference table (`paw models list`
    -> 'models list')."""
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    return {match.group(1) for match in re.finditer(r"^\| `paw ([a-z -]+)` \|", section,
                                                    re.MULTILINE)}


def mismatch(group: click.Group, text: str) -> tuple[list[str], list[str]]:
    """(commands missing from the table, table rows naming no command)."""
    commands = {" ".join(path) for path, _, _ in walk(group)}
    listed = documented(text)
    return sorted(commands - listed), sorted(listed - commands)


def test_every_command_is_documented_and_every_documented_command_exists():
    text = REFERENCE.read_text(encoding="utf-8")
    assert mismatch(cli, text) == ([], [])
    # The three the table was written for (undocumented before it).
    assert {"models list", "raters list", "runs show"} <= documented(text)


def test_the_check_finds_a_missing_and_a_stale_command():
    @click.group()
    def scratch() -> None:
        """A scratch CLI."""

    @scratch.group()
    def models() -> None:
        """Models."""

    @models.command("list")
    def models_list() -> None:
        """List."""

    @models.command("frobnicate")
    def models_frobnicate() -> None:
        """Not in the table."""

    text = (f"{SECTION}\n\n| command | what | where |\n|---|---|---|\n"
            "| `paw models` | models | here |\n| `paw models list` | list | here |\n"
            "| `paw models gone` | removed | here |\n\n## Next section\n"
            "| `paw models frobnicate` | outside the table's section | here |\n")
    assert mismatch(scratch, text) == (["models frobnicate"], ["models gone"])
