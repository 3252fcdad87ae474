"""`paw import`, `paw datasets`, `paw demo`: getting questions into the store and seeing them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click

from store.errors import UserError, no_such
from workbench.cli.options import NAME, db_option, open_store

def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    """Plain left-aligned text columns (numbers right-aligned), header underlined."""
    cells = [[str(c) for c in headers]] + [["" if c is None else str(c) for c in r]
                                           for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    numeric = [bool(rows) and all(isinstance(r[i], int) for r in rows)
               for i in range(len(headers))]

    def fmt(row: list[str]) -> str:
        parts = [c.rjust(w) if numeric[i] else c.ljust(w)
                 for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        return "  ".join(parts).rstrip()

    return [fmt(cells[0]), "  ".join("-" * w for w in widths)] + [fmt(r) for r in cells[1:]]


def _mapping(map_json: str | None, map_file: str | None):
    from workbench.datasets.mapping import parse_mapping

    if map_json and map_file:
        raise UserError("--map, --map-file: expected one of them, got both")
    if map_json:
        return parse_mapping(map_json, "--map")
    if map_file:
        path = Path(map_file)
        if not path.is_file():
            raise UserError(f"{no_such(map_file)} (--map-file)")
        try:
            text = path.read_bytes().decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise UserError(f"{map_file}: expected UTF-8 JSON, got byte "
                            f"0x{exc.object[exc.start]:02x}") from None
        return parse_mapping(text, map_file)
    return None


@click.command("import")
@click.argument("format_name", metavar="FORMAT")
@click.argument("path", type=click.Path())  # checked by the importer: one-line errors
@click.option("--name", type=NAME,
              help="Dataset name to import into (default: the file name's stem).")
@click.option("--skip-bad", is_flag=True,
              help="Import the valid rows and report the bad ones, instead of stopping.")
@click.option("--map", "map_json", metavar="JSON",
              help='Field mapping for jsonl/parquet/csv (dotted paths reach nested fields), '
                   'e.g. \'{"id": "qid", "question": "stem", '
                   '"options": ["opA", "opB", "opC"], "answer": "correct"}\'.')
@click.option("--map-file", type=click.Path(),
              help="Read the --map JSON from this file.")
@db_option
def import_command(format_name: str, path: str, name: str | None, skip_bad: bool,
                   map_json: str | None, map_file: str | None, db_path: str) -> None:
    """Import questions from PATH, a file in FORMAT, into a dataset.

    Rows are read one at a time: a bad row (missing field, answer not among the options,
    fewer than two options, two options with the same text, repeated id, invalid JSON,
    bytes that are not UTF-8, a line over 8 MiB) stops the import naming file, line and
    field, and nothing is stored. A binary file is named by its first bytes (Parquet is
    read as Parquet; GGUF, ZIP, gzip and SQLite are refused). Importing the same file
    again adds nothing. See docs/importing.md.

    \b
    FORMAT is one of:
      medqa     MedQA, JSON lines or Parquet (options {A..D}, or [{key, value}])
      medmcqa   MedMCQA, JSON lines or Parquet: opa..opd, cop 0- or 1-based, detected
                from the file (a file with only cop 1-3 needs medmcqa0 or medmcqa1)
      medmcqa0  MedMCQA with cop 0-based (0 = opa: the Hugging Face Hub's files)
      medmcqa1  MedMCQA with cop 1-based (1 = opa: the official release)
      pubmedqa  PubMedQA: ori_pqal.json, or the Hub's form (pubid, question,
                context{contexts, labels, meshes}, final_decision) in Parquet or JSON lines
      mmlu      MMLU CSV without header: question, A, B, C, D, answer
      jsonl     any JSON lines (or Parquet); fields named by --map, dotted paths reach
                nested fields (default: id, question, options, answer, and optional
                kind, subject, context)
      parquet   any Parquet file; fields named by --map, as for jsonl
      csv       any CSV with a header row; columns named by --map
    """
    from workbench.datasets.importers import check_file
    from workbench.datasets.opening import get_format

    # Argument mistakes fail before open_store creates a database file.
    get_format(format_name)
    mapping = _mapping(map_json, map_file)
    check_file(path)
    db = open_store(db_path, create=True)  # creates a database (see options.open_store)
    report = _import_with_progress(db, format_name, path, name=name, skip_bad=skip_bad,
                                   mapping=mapping)
    for line in report.lines():
        click.echo(line)


LARGE_IMPORT_BYTES = 2_000_000
"""Files from this size on (≈ 5,000 MedQA rows) show validation progress on stderr."""


def _import_with_progress(db, format_name: str, path: str, **options):
    """`import_file`, with a rows bar (rate, ETA) while a large file is validated."""
    import time

    from workbench.cli.progress import ProgressReporter
    from workbench.datasets.importers import import_file

    if not Path(path).is_file() or Path(path).stat().st_size < LARGE_IMPORT_BYTES:
        return import_file(db, format_name, path, **options)
    lines, unit = _count_rows(path)
    if lines is None:
        return import_file(db, format_name, path, **options)
    started = time.perf_counter()
    with ProgressReporter() as progress:
        progress.begin(f"importing {path}: {lines} {unit}, checked and stored in one "
                       "transaction", "lines", lines, unit=unit)
        step = max(1, lines // 200)

        def on_row(line: int) -> None:
            if line % step == 0:
                progress.advance("lines", line, lines)

        report = import_file(db, format_name, path, on_row=on_row, **options)
        progress.advance("lines", lines, lines)
        progress.end(f"imported {path} in {time.perf_counter() - started:.1f} s")
    return report


def _count_rows(path: str) -> tuple[int | None, str]:
    """Lines of a text file, or rows of a Parquet file (from its footer), for the bar."""
    with open(path, "rb") as handle:
        if handle.read(4) == b"PAR1":
            try:
                import pyarrow.parquet as pq

                return pq.ParquetFile(path).metadata.num_rows, "rows"
            except Exception:  # noqa: BLE001 (no bar; the import names the fault)
                return None, "rows"
        handle.seek(0)
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b"")), \
            "lines"


def dataset_lines(db) -> list[str]:
    """The `paw datasets` table for an open store."""
    from store.datasets import list_datasets

    summaries = list_datasets(db)
    if not summaries:
        return ["no datasets yet: try `paw demo` or `paw import FORMAT PATH`"]
    return table(
        ["name", "format", "items", "mcq", "binary", "source"],
        [[s.name, s.format, s.n_items, s.n_mcq, s.n_binary, s.source_path or ""]
         for s in summaries],
    )


@click.command("datasets")
@db_option
def datasets_command(db_path: str) -> None:
    """List imported datasets with their item counts (all, multiple choice, yes/no)."""
    db = open_store(db_path)
    for line in dataset_lines(db):
        click.echo(line)


def demo_lines(db) -> list[str]:
    """Import the demo set and describe what the database now holds."""
    from collections import Counter

    from store.datasets import get_items
    from workbench.datasets.demo import DEMO_DATASET, import_demo_report

    report = import_demo_report(db)
    items = get_items(db, DEMO_DATASET)
    subjects = Counter(item.subject or "(none)" for item in items)
    out = [f"demo set: {report.n_new} new items ({report.n_valid} in the package)", ""]
    out += dataset_lines(db)
    out += ["", f"{DEMO_DATASET!r} by subject:"]
    by_count = sorted(subjects.items(), key=lambda kv: (-kv[1], kv[0]))
    out += table(["subject", "items"], by_count)
    example = items[0] if items else None
    if example is not None:
        out += ["", f"first item ({example.source_id}, {example.kind}): {example.question}"]
        out += [f"  {label}. {text}" for label, text in example.options.items()]
        out += [f"  gold: {example.gold}"]
    return out


@click.command("demo")
@db_option
def demo_command(db_path: str) -> None:
    """Import the demo set shipped with PAW and show what the database holds."""
    db = open_store(db_path)
    for line in demo_lines(db):
        click.echo(line)


commands = [import_command, datasets_command]  # `paw demo` lives in workbench.cli.audit
"""Registered on `paw` through COMMAND_MODULES."""
