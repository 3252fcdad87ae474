"""Each importer on a valid fixture: the items stored, their labels, gold, ids and lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from store.datasets import get_items, list_datasets
from store.errors import UserError
from workbench.datasets import import_file, parse_mapping

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "datasets"


def test_medqa(db):
    report = import_file(db, "medqa", FIXTURES / "medqa.jsonl")
    assert (report.dataset, report.n_valid, report.n_new) == ("medqa", 3, 3)
    items = get_items(db, "medqa")
    # MedQA rows carry no id: <stem>:<line>. Line 3 of the fixture is blank, so the
    # third row is on line 4.
    assert [i.source_id for i in items] == ["medqa:1", "medqa:2", "medqa:4"]
    assert [i.gold for i in items] == ["A", "C", "B"]
    assert items[1].options["C"] == "Right coronary artery"
    assert items[0].kind == "mcq" and items[0].labels == ("A", "B", "C", "D")
    assert items[0].meta["meta_info"] == "step1"
    assert items[0].meta["metamap_phrases"] == ["fatigue", "pallor"]
    assert items[2].source_line == 4


def test_medmcqa_cop_is_one_based(db):
    import_file(db, "medmcqa", FIXTURES / "medmcqa.jsonl")
    items = get_items(db, "medmcqa")
    # cop 2 -> B (Ethosuximide), cop 4 -> D (Axillary nerve), cop 1 -> A (Measles).
    assert [(i.gold, i.options[i.gold]) for i in items] == [
        ("B", "Ethosuximide"), ("D", "Axillary nerve"), ("A", "Measles")]
    assert [i.source_id for i in items] == ["0a1b2c3d-0001", "0a1b2c3d-0002",
                                            "0a1b2c3d-0003"]
    assert items[0].subject == "Pharmacology"
    assert items[0].meta["topic_name"] == "Antiepileptics"


def test_medmcqa0_reads_zero_based_cop(tmp_path, db):
    path = tmp_path / "hf.jsonl"
    path.write_text('{"id": "x1", "question": "q?", "opa": "a", "opb": "b", "opc": "c", '
                    '"opd": "d", "cop": 0, "subject_name": "Anatomy"}\n')
    import_file(db, "medmcqa0", path)
    assert get_items(db, "hf")[0].gold == "A"  # 0-based: 0 -> opa


def test_pubmedqa(db):
    import_file(db, "pubmedqa", FIXTURES / "ori_pqal.json")
    items = get_items(db, "ori_pqal")
    assert [i.source_id for i in items] == ["10000001", "10000002", "10000003"]
    assert [i.gold for i in items] == ["Yes", "No", "Maybe"]
    assert all(i.kind == "binary" and set(i.labels) == {"Yes", "No", "Maybe"} for i in items)
    # The two CONTEXTS passages of the first entry, joined by a blank line.
    assert items[0].context == (
        "Patients mobilised on the first postoperative day were compared with those "
        "mobilised later.\n\nMedian length of stay was 9 days versus 13 days.")
    assert items[0].question.startswith("Does early mobilisation")
    assert items[0].meta["long_answer"].startswith("Early mobilisation")
    # Each entry's line is the line of its key in the file.
    assert [i.source_line for i in items] == [2, 16, 27]


def test_mmlu(db):
    import_file(db, "mmlu", FIXTURES / "clinical_knowledge_test.csv")
    items = get_items(db, "clinical_knowledge_test")
    assert [i.gold for i in items] == ["B", "B", "C"]
    assert items[1].question.startswith("The recommended site")  # quoted cell with a comma
    assert items[0].subject == "clinical_knowledge"  # split suffix _test dropped
    assert items[2].source_id == "clinical_knowledge_test:3"


def test_two_mmlu_files_share_a_dataset_without_id_clashes(tmp_path, db):
    one = tmp_path / "anatomy_test.csv"
    two = tmp_path / "virology_test.csv"
    one.write_text("q1?,a,b,c,d,A\n")
    two.write_text("q2?,a,b,c,d,D\n")
    assert import_file(db, "mmlu", one, name="mmlu-med").n_new == 1
    assert import_file(db, "mmlu", two, name="mmlu-med").n_new == 1
    assert sorted(i.subject for i in get_items(db, "mmlu-med")) == ["anatomy", "virology"]


def test_generic_jsonl_defaults_read_paw_format(db):
    import_file(db, "jsonl", FIXTURES / "paw_format.jsonl")
    items = get_items(db, "paw_format")
    assert [(i.source_id, i.kind, i.gold) for i in items] == [
        ("fx-001", "mcq", "A"), ("fx-002", "binary", "Yes"), ("fx-003", "binary", "No")]
    assert set(items[1].labels) == {"Yes", "No"}
    assert items[0].subject == "Infectious disease"
    assert items[0].meta == {"rationale": "Uncomplicated cystitis; nitrofurantoin is first "
                                          "line."}


def test_generic_csv_with_column_list_mapping(db):
    mapping = parse_mapping('{"id": "qid", "question": "stem", "options": ["opA", "opB", '
                            '"opC", "opD", "opE"], "answer": "correct", '
                            '"subject": "specialty"}')
    import_file(db, "csv", FIXTURES / "generic.csv", mapping=mapping)
    items = get_items(db, "generic")
    # Rows g1 and g3 leave opE empty: four options; g2 fills it: five.
    assert [len(i.options) for i in items] == [4, 5, 4]
    assert [i.gold for i in items] == ["A", "B", "C"]
    assert items[1].subject == "Emergency medicine"
    assert items[0].source_line == 2  # line 1 is the header


def test_option_display_order_survives_the_store(db):
    import_file(db, "pubmedqa", FIXTURES / "ori_pqal.json")
    import_file(db, "jsonl", FIXTURES / "paw_format.jsonl")
    assert get_items(db, "ori_pqal")[0].labels == ("Yes", "No", "Maybe")
    assert get_items(db, "paw_format")[1].labels == ("Yes", "No")


def test_dataset_name_option_and_counts(db, tmp_path, monkeypatch):
    import hashlib
    import shutil

    shutil.copy(FIXTURES / "paw_format.jsonl", tmp_path / "p.jsonl")
    monkeypatch.chdir(tmp_path)
    import_file(db, "jsonl", "p.jsonl", name="mine")
    (summary,) = list_datasets(db)
    assert (summary.name, summary.format, summary.n_items, summary.n_mcq,
            summary.n_binary) == ("mine", "jsonl", 3, 1, 2)
    # Provenance: the absolute path and the file's sha256, even when given relatively.
    path, sha = db.execute("SELECT source_path, source_sha256 FROM datasets").fetchone()
    assert path == str(tmp_path.resolve() / "p.jsonl")
    assert sha == hashlib.sha256((tmp_path / "p.jsonl").read_bytes()).hexdigest()


def test_reimport_adds_nothing(db):
    first = import_file(db, "medqa", FIXTURES / "medqa.jsonl")
    again = import_file(db, "medqa", FIXTURES / "medqa.jsonl")
    assert (first.n_new, again.n_new, again.n_valid) == (3, 0, 3)
    assert db.execute("SELECT COUNT(*) FROM items").fetchone()[0] == 3
    assert "0 new items in dataset 'medqa' (3 valid rows, 3 already present)" in \
        again.lines()[0]


def test_reimport_on_disk_store_adds_nothing(db_path):
    from store import open_db

    import_file(open_db(db_path), "mmlu", FIXTURES / "clinical_knowledge_test.csv")
    reopened = open_db(db_path)
    assert import_file(reopened, "mmlu", FIXTURES / "clinical_knowledge_test.csv").n_new == 0
    assert reopened.execute("SELECT COUNT(*) FROM items").fetchone()[0] == 3


def test_same_name_other_format_is_refused(db):
    import_file(db, "medqa", FIXTURES / "medqa.jsonl", name="x")
    with pytest.raises(UserError, match="already exists with format 'medqa'"):
        import_file(db, "medmcqa", FIXTURES / "medmcqa.jsonl", name="x")


def test_utf8_bom_and_crlf_are_accepted(tmp_path, db):
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbfWhich organ makes insulin?,Liver,Pancreas,Spleen,Kidney,B"
                     b"\r\nq2 \xc3\xa9?,a,b,c,d,A\r\n")
    import_file(db, "mmlu", path)
    items = get_items(db, "bom")
    assert items[0].question == "Which organ makes insulin?"  # BOM not part of the text
    assert items[1].question == "q2 \u00e9?"


def test_unknown_format_lists_known_ones(db):
    with pytest.raises(UserError, match=r"format: expected one of medqa, .*got 'medqb'"):
        import_file(db, "medqb", FIXTURES / "medqa.jsonl")


def test_missing_file_is_one_line(db, tmp_path):
    with pytest.raises(UserError, match=r"nope\.jsonl: no such file"):
        import_file(db, "medqa", tmp_path / "nope.jsonl")
