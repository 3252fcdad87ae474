"""Run `paw` in-process the way a shell would and collect what it printed: one helper for the
CLI tests instead of a copy per module."""

from __future__ import annotations

from workbench.cli import main


def paw(capsys, *argv: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `paw ARGV…` run through its real entry point."""
    try:
        main(list(argv))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err
