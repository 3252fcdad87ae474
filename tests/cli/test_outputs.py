"""No command writes over the store or over a file it did not create (issue 34, criterion 1).

The click tree is walked: every path a command writes must be an `OutputPath` of a command
wrapped by `guard_outputs`, and every other path parameter must be listed here as one PAW
only reads. Then every guarded command is run, one case per output parameter, with the
database, its -wal and -shm and an existing file as the output: each is refused naming it,
exit 1, nothing changed; `--force` never makes the database writable. End to end, the
issue's own typo (`paw report --out paw.db --db paw.db`) on a real audit, and `--force`
replacing a file that is not the store.
"""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from store import open_db
from workbench.cli import cli, main
from workbench.cli.outputs import OutputPath, is_guarded

READ_PATHS: set[str] = {
    "paw --db", "import PATH", "import --map-file", "study --targets-file",
    "models add PATH", "annotate --file", "annotate merge PATHS", "serve --llama-server",
    "coordinate --watch", "audit --items-file",
}
"""Path parameters PAW only reads (or the store itself, `--db`; `annotate --file` is the
rater's own file, labelled in place): `command param`."""

WRITE_WORDS = re.compile(r"\b(writes?|written|save[sd]?)\b", re.I)
OUT_NAMES = re.compile(r"(^|[-_])(out|output|dest|csv|save|report-file)([-_]|$)", re.I)


def walk(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    ctx = click.Context(group)
    found: list[tuple[str, click.Command]] = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        path = f"{prefix}{name}"
        found.append((path, command))
        if isinstance(command, click.Group):
            found += walk(command, path + " ")
    return found


COMMANDS = walk(cli)


def label(param: click.Parameter) -> str:
    if isinstance(param, click.Option):
        return max(param.opts, key=len)
    return (param.name or "").upper()


def params(command: click.Command) -> list[click.Parameter]:
    return command.get_params(click.Context(command))


def test_every_path_parameter_is_an_output_or_a_listed_read():
    seen = {"paw --db"}
    problems = []
    for path, command in COMMANDS:
        for param in params(command):
            key = f"{path} {label(param)}"
            output = isinstance(param.type, OutputPath)
            looks_written = (not getattr(param, "is_flag", False) and param.name != "fmt"
                             and (OUT_NAMES.search(label(param).lstrip("-"))
                                  or WRITE_WORDS.search(getattr(param, "help", None) or "")
                                  and isinstance(param.type, click.Path)))
            if output and not is_guarded(command):
                problems.append(f"{key}: an OutputPath on a command without @guard_outputs")
            elif looks_written and not output and key not in READ_PATHS:
                problems.append(f"{key}: looks like a file the command writes; give it "
                                "OutputPath() and @guard_outputs")
            elif isinstance(param.type, click.Path) and not output:
                if key not in READ_PATHS and param.name != "db_path":
                    problems.append(f"{key}: a path that is neither an OutputPath nor listed "
                                    "in READ_PATHS")
                seen.add(key)
    assert not problems, "\n".join(problems)
    assert not READ_PATHS - seen - {"paw --db"}, "READ_PATHS lists parameters that are gone"


def test_the_walk_finds_the_commands_that_write():
    guarded = {path for path, command in COMMANDS if is_guarded(command)}
    assert {"report", "export", "backup", "demo", "power", "dbpa", "annotate export",
            "annotate pack"} <= guarded


def filler(param: click.Parameter, tmp: Path) -> list[str]:
    """A value click accepts for a required parameter (the guard runs before the body)."""
    kind = param.type
    if isinstance(kind, click.Choice):
        value = str(kind.choices[0])
    elif isinstance(kind, click.IntRange | click.FloatRange):
        value = str(kind.min if kind.min is not None else 1)
    elif isinstance(kind, click.Path) and kind.exists:
        value = str(tmp)
    else:
        value = "x"
    return [value] if not isinstance(param, click.Option) else [label(param), value]


def output_cases() -> list[tuple[str, str]]:
    """(command, parameter) of every output file; an export folder's files are checked
    one by one when written (`test_export_checks_every_file_before_writing_any`)."""
    return [(path, param.name or "") for path, command in COMMANDS if is_guarded(command)
            for param in params(command) if isinstance(param.type, OutputPath)
            and not param.type.folder]


def argv_for(path: str, name: str, target: str, db: str, tmp: Path, *extra: str) -> list[str]:
    command = dict(COMMANDS)[path]
    argv = path.split()
    for param in params(command):
        if param.name == name:
            argv += [target] if not isinstance(param, click.Option) else [label(param), target]
        elif param.required and param.name != "db_path":
            argv += filler(param, tmp)
    return [*argv, "--db", db, *extra]


def paw(capsys, argv: list[str]) -> tuple[int, str]:
    try:
        main(argv)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    return code, capsys.readouterr().err


@pytest.fixture
def store(tmp_path) -> tuple[str, dict[str, bytes]]:
    """A real store with a -wal and -shm beside it (a writer holds it open), and a report a
    user wrote by hand; (database path, each file's bytes)."""
    path = tmp_path / "paw.db"
    db = open_db(str(path), create=True)
    db.conn.execute("CREATE TABLE probe(x)")
    db.conn.commit()
    (tmp_path / "notes.md").write_text("my own notes\n")
    files = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    assert {"paw.db-wal", "paw.db-shm"} <= set(files)
    yield str(path), files
    db.conn.close()


@pytest.mark.parametrize("path,name", output_cases())
def test_each_output_refuses_the_store_and_an_existing_file(capsys, tmp_path, store, path,
                                                            name):
    db, before = store
    command = dict(COMMANDS)[path]
    targets = [(db, "is the database"), (db + "-wal", "-wal file"),
               (db + "-shm", "-shm file"), (f"{tmp_path}/./paw.db", "is the database"),
               (str(tmp_path / "notes.md"), "already exists")]
    for target, fragment in targets:
        for extra in ([], ["--force"]) if "--force" in [label(p) for p in params(command)] \
                else ([],):
            if extra and fragment == "already exists":
                continue  # replacing a file that is not the store is --force's job
            code, err = paw(capsys, argv_for(path, name, target, db, tmp_path, *extra))
            assert code == 1, (path, target, extra, err)
            assert fragment in err and target in err, err
            assert len(err.strip().splitlines()) == 1, err
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    assert after["notes.md"] == before["notes.md"]
    assert set(after) >= {"paw.db", "paw.db-wal", "paw.db-shm"}


def test_the_files_beside_a_symlinked_store_are_its_files(capsys, tmp_path, store):
    db, _ = store
    link = tmp_path / "link.db"
    link.symlink_to(db)
    for target in (db, db + "-wal", str(tmp_path / "link.db-wal")):
        code, err = paw(capsys, ["backup", target, "--db", str(link), "--force"])
        assert code == 1 and "is the database" in err, (target, err)


def test_rater_files_are_never_replaced_even_with_force(capsys, tmp_path, store):
    db, _ = store
    code, err = paw(capsys, argv_for("annotate pack", "out", str(tmp_path / "notes.md"), db,
                                     tmp_path))
    assert code == 1 and "never replaces it" in err
    assert "--force" not in [label(p) for p in params(dict(COMMANDS)["annotate pack"])]


def test_the_issue_typo_leaves_the_store_whole(capsys, fake_audit):
    db, _ = fake_audit
    before = Path(db).read_bytes()
    for argv in (["report", "--out", db, "--db", db],
                 ["report", "--out", db, "--db", db, "--force"],
                 ["backup", db + "-wal", "--db", db]):
        code, err = paw(capsys, argv)
        assert code == 1 and db in err, err
    assert Path(db).read_bytes() == before
    code, err = paw(capsys, ["audits", "--db", db])
    assert code == 0, err


def test_force_replaces_a_report_and_a_backup_but_not_without_it(capsys, tmp_path,
                                                                  fake_audit):
    db, _ = fake_audit
    out = tmp_path / "r.md"
    out.write_text("mine")
    code, err = paw(capsys, ["report", "--out", str(out), "--db", db, "--n-boot", "0"])
    assert code == 1 and f"--out {out}: already exists; pass --force" in err
    assert out.read_text() == "mine"
    code, err = paw(capsys, ["report", "--out", str(out), "--db", db, "--n-boot", "0",
                             "--force"])
    assert code == 0, err
    assert out.read_text().startswith("#")
    # A second run without --force: the report and its figures exist now.
    code, err = paw(capsys, ["report", "--out", str(out), "--db", db, "--n-boot", "0"])
    assert code == 1 and "already exists" in err
    copy = tmp_path / "copy.db"
    copy.write_text("old")
    code, err = paw(capsys, ["backup", str(copy), "--db", db])
    assert code == 1 and "already exists" in err
    code, err = paw(capsys, ["backup", str(copy), "--db", db, "--force"])
    assert code == 0, err
    assert copy.read_bytes()[:15] == b"SQLite format 3"


def test_export_checks_every_file_before_writing_any(capsys, tmp_path, fake_audit):
    db, outcome = fake_audit
    folder = tmp_path / "frames"
    folder.mkdir()
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", outcome.audit).strip("_")
    (folder / f"{stem}-generations.csv").write_text("mine")
    code, err = paw(capsys, ["export", "--format", "csv", "--out", str(folder), "--db", db])
    assert code == 1 and f"{stem}-generations.csv: already exists" in err, err
    assert sorted(p.name for p in folder.iterdir()) == [f"{stem}-generations.csv"]
    code, err = paw(capsys, ["export", "--format", "csv", "--out", str(folder), "--db", db,
                             "--force"])
    assert code == 0, err
    assert (folder / f"{stem}-edits.csv").exists()
