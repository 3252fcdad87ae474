"""Every `paw` command, found by walking the registered click tree, has help text, answers
`--help` with exit 0, and takes `--db` if it opens the store.

The walk covers commands other modules add later, so a new command without help fails here.
"""

from __future__ import annotations

import inspect

import click
import pytest
from click.testing import CliRunner

from workbench.cli import COMMAND_MODULES, cli, main

# Names that show a command's callback opens the store (directly or through a helper
# taking the --db value).
STORE_MARKERS = ("open_store(", "open_db(", "db_path")


def walk(group: click.Group, path: tuple[str, ...] = ()):
    """(path, command, ancestors) for every command under `group`, depth first."""
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, f"{' '.join(path + (name,))} is listed but not found"
        yield path + (name,), command, [group]
        if isinstance(command, click.Group):
            for sub_path, sub, ancestors in walk(command, path + (name,)):
                yield sub_path, sub, [group, *ancestors]


COMMANDS = list(walk(cli))
IDS = [" ".join(path) for path, _, _ in COMMANDS]


def test_the_walk_finds_commands():
    # At least this module's own commands, so an empty walk cannot pass vacuously.
    assert {"import", "datasets", "demo"} <= set(IDS)
    assert "workbench.cli.data" in COMMAND_MODULES


def test_top_level_help():
    result = CliRunner().invoke(cli, ["--help"], prog_name="paw")
    assert result.exit_code == 0
    assert "Perturbation Audit Workbench" in result.output
    for path, _, _ in COMMANDS:
        if len(path) == 1:
            assert f"  {path[0]} " in result.output or f"  {path[0]}\n" in result.output


@pytest.mark.parametrize(("path", "command", "ancestors"), COMMANDS, ids=IDS)
def test_command_has_help(path, command, ancestors):
    text = (command.help or "").strip()
    assert text, f"paw {' '.join(path)} has no help text"
    assert (command.get_short_help_str(limit=80) or "").strip()
    result = CliRunner().invoke(cli, [*path, "--help"], prog_name="paw")
    assert result.exit_code == 0, result.output
    assert f"Usage: paw {' '.join(path)}" in result.output
    # Click re-wraps the text, so compare with whitespace collapsed.
    assert " ".join(text.split()[:8]) in " ".join(result.output.split())
    for param in command.params:
        if isinstance(param, click.Option) and not param.hidden:
            assert (param.help or "").strip(), f"paw {' '.join(path)} {param.opts[0]}: no help"


def _takes_db(command: click.Command, ancestors: list[click.Command]) -> bool:
    return any("--db" in p.opts for c in [command, *ancestors] for p in c.params
               if isinstance(p, click.Option))


@pytest.mark.parametrize(("path", "command", "ancestors"),
                         [c for c in COMMANDS if not isinstance(c[1], click.Group)],
                         ids=[i for i, c in zip(IDS, COMMANDS)
                              if not isinstance(c[1], click.Group)])
def test_store_commands_take_db(path, command, ancestors):
    source = inspect.getsource(command.callback) if command.callback else ""
    if not any(marker in source for marker in STORE_MARKERS):
        pytest.skip("does not open the store")
    assert _takes_db(command, ancestors), f"paw {' '.join(path)} opens the store without --db"


def test_store_marker_check_can_fail():
    @click.command()
    def probe() -> None:
        """Probe."""
        from workbench.cli.options import open_store

        open_store("x.db")

    source = inspect.getsource(probe.callback)
    assert any(marker in source for marker in STORE_MARKERS)
    assert not _takes_db(probe, [])


def test_main_help_exits_zero(capsys):
    # The real entry point (standalone_mode=False): help must not turn into an error exit.
    try:
        main(["--help"])
        code = 0
    except SystemExit as exc:
        code = exc.code or 0
    assert code == 0
    assert "Usage: paw" in capsys.readouterr().out
