"""`paw export`: an audit's analysis frames (edits with flips, generations with distributions,
and — for a coordinator — the labels) as Parquet, CSV or JSON-lines files for pandas, DuckDB,
R and `datasets`."""

from __future__ import annotations

from pathlib import Path

import click

from store.errors import UserError
from workbench.cli.options import db_option, open_store
from workbench.cli.outputs import OutputPath, check_outputs, guard_outputs
from workbench.present.run_files import (
    DEFAULT_TABLES,
    FORMATS,
    PARQUET_MISSING,
    run_frame_paths,
    safe_name,
    write_frame,
    write_run_frames,
)
from workbench.cli.signin import coordinator_option, passphrase_env_option

TABLES: tuple[str, ...] = ("edits", "wide", "generations", "labels")
"""What `--tables` can name (columns: docs/schema.md, "Exported frames"); `wide` is a
robustness run's one row per model × item."""


def _labels_frame(db, set_name: str | None, person):
    import io

    import pandas as pd

    from annotate.export import export_verified
    from annotate.sets.annotation_set import resolve_set

    chosen = resolve_set(db, set_name)
    export = export_verified(db, person, chosen, "long", "csv")
    frame = pd.read_csv(io.StringIO(export.text), dtype=str, keep_default_na=False,
                        na_values=[""])
    for column in ("event_id", "time_on_item_ms"):
        if column in frame:
            frame[column] = pd.to_numeric(frame[column]).astype("Int64")
    return chosen, frame, export.record_head


@guard_outputs
@click.command("export")
@click.option("--audit", metavar="NAME_OR_ID", help="The audit (default: the latest).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="parquet",
              show_default=True, help="Parquet (needs the [parquet] extra: pyarrow), CSV, or "
                                      "JSON lines (one object per row).")
@click.option("--tables", default=None,
              help="Comma-separated: edits, wide (robustness runs), generations, labels "
                   "(labels: coordinator only). Default: edits,generations; for a robustness "
                   "run edits,wide,generations.")
@click.option("--out", "out_dir", type=OutputPath(folder=True), default=".",
              show_default=True, help="Folder the files are written to (created if missing).")
@click.option("--set", "set_name", help="Annotation set of the labels (default: the newest).")
@coordinator_option
@passphrase_env_option
@db_option
def export_command(audit: str | None, fmt: str, tables: str | None, out_dir: str,
                   set_name: str | None, coordinator: str | None, passphrase_env: str | None,
                   db_path: str) -> None:
    """Write an audit's analysis frames as files: <audit>-edits (one row per edit: flip,
    exclusion, correctness, chain update, judge verdict, JSD), <audit>-generations (one row
    per answered job: answer, status, tokens, text, p_<label> distribution) and, with
    --tables labels and a coordinator's passphrase, <set>-labels (long form, verified).

    A robustness run (`paw robustness`): <run>-edits is long (one row per demographic
    answer and per CFV re-answer: change, direction, flags, consistency with the vignette,
    CFV outcome, EDD with its embedder) and <run>-wide has one row per model × item.

    Columns: docs/schema.md, "Exported frames". Read them with pandas.read_parquet,
    DuckDB (SELECT * FROM 'file.parquet') or R arrow::read_parquet.

    Once people are registered in the store, every table is the coordinator's
    (`--coordinator NAME`): the edits name each case's model, arm and operator.
    """
    from analysis.audit.frames import resolve_audit

    if fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise UserError(PARQUET_MISSING) from None
    db = open_store(db_path)
    from workbench.cli.signin import blinding_gate, login_coordinator

    # The edits and generations name each case's model, arm and operator: once people are
    # registered the export is the coordinator's, signed in once for every table.
    person = blinding_gate(db, coordinator, passphrase_env, "paw export")
    info = resolve_audit(db, audit)
    robustness = info["kind"] == "robustness"
    tables = tables if tables is not None else DEFAULT_TABLES.get(info["kind"],
                                                                   "edits,generations")
    wanted = [t.strip() for t in tables.split(",") if t.strip()]
    unknown = [t for t in wanted if t not in TABLES]
    if unknown or not wanted:
        raise UserError(f"--tables: expected some of {', '.join(TABLES)}, got {tables!r}")
    if "wide" in wanted and not robustness:
        raise UserError(f"--tables wide: only a robustness run has a wide table; "
                        f"{info['name']} is a run of kind {info['kind']!r}")
    labels = None
    if "labels" in wanted:  # sign in and verify first: nothing is written if that fails
        if person is None:
            person = login_coordinator(db, coordinator, passphrase_env, "exporting labels")
        labels = _labels_frame(db, set_name, person)
    folder = Path(out_dir)
    paths = run_frame_paths(info, wanted, fmt, folder)
    if labels is not None:
        paths["labels"] = folder / f"{safe_name(labels[0])}-labels.{fmt}"
    check_outputs(paths.values())  # all of them before the first is written
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    if labels is not None:
        chosen, frame, head = labels
        written.append((write_frame(frame, paths["labels"], fmt), len(frame)))
        click.echo(f"record head {head} (the labels were verified against it)", err=True)
    written += write_run_frames(db, info, wanted, fmt, folder)
    for path, n in written:
        click.echo(f"wrote {path} ({n} rows)")


commands = [export_command]
"""Registered on `paw` through COMMAND_MODULES."""
