"""The demo loader: reads both packaged files strictly, imports idempotently into 'demo'."""

from __future__ import annotations

import json

import pytest

from store.datasets import get_items, list_datasets
from store.errors import UserError
from workbench.datasets import demo
from workbench.datasets.demo import DEMO_FILES, import_demo, load_demo_items


def _rows(filename: str) -> int:
    return sum(1 for line in demo._read(filename).decode().splitlines() if line.strip())


def test_loader_reads_both_files_in_order():
    items = load_demo_items()
    n_vignettes, n_triage = _rows("vignettes.jsonl"), _rows("triage.jsonl")
    # Every non-blank line is an item (a bad one would have raised), vignettes first.
    assert len(items) == n_vignettes + n_triage > 0
    ids = [i.source_id for i in items]
    assert len(ids) == len(set(ids))
    assert all(i.kind == "binary" and set(i.labels) == {"Yes", "No"}
               for i in items[n_vignettes:])
    assert all(i.gold in i.options for i in items)


def test_import_demo_is_idempotent(db):
    first = import_demo(db)
    again = import_demo(db)
    assert first == again
    (summary,) = list_datasets(db)
    shipped = load_demo_items()
    assert (summary.name, summary.n_items) == ("demo", len(shipped))
    assert [i.gold for i in get_items(db, "demo")] == [i.gold for i in shipped]


def _fake_files(monkeypatch, files: dict[str, bytes]) -> None:
    def read(filename: str) -> bytes:
        if filename not in files:
            raise UserError(f"demo set file {filename} is missing")
        return files[filename]

    monkeypatch.setattr(demo, "_read", read)


def _row(ident: str) -> bytes:
    return json.dumps({"id": ident, "kind": "binary", "question": "Q?",
                       "options": {"Yes": "Yes", "No": "No"}, "answer": "No"}).encode() + b"\n"


def test_id_repeated_across_the_two_files_is_refused(monkeypatch):
    assert DEMO_FILES == ("vignettes.jsonl", "triage.jsonl")
    _fake_files(monkeypatch, {"vignettes.jsonl": _row("d-1"), "triage.jsonl": _row("d-1")})
    with pytest.raises(UserError, match=r"triage.jsonl:1: id: expected an id not used in "
                                        r"vignettes.jsonl, got 'd-1'"):
        load_demo_items()


def test_a_bad_demo_row_fails_loudly(monkeypatch):
    _fake_files(monkeypatch, {"vignettes.jsonl": _row("d-1"),
                              "triage.jsonl": _row("d-2").replace(b'"No"}', b'"Maybe"}')})
    with pytest.raises(UserError, match=r"demo set is invalid: .*triage.jsonl:1: answer: "
                                        r"expected one of Yes, No, got 'Maybe'"):
        load_demo_items()


def test_missing_demo_file_names_it(monkeypatch):
    _fake_files(monkeypatch, {"vignettes.jsonl": _row("d-1")})
    with pytest.raises(UserError, match="triage.jsonl is missing"):
        load_demo_items()


def test_real_missing_resource_message(monkeypatch):
    # Point the loader at a file name the package does not contain.
    with pytest.raises(UserError, match="demo set file nope.jsonl is missing from the "
                                        "installed package"):
        demo._read("nope.jsonl")
