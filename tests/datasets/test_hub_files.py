"""Files as users download them: Parquet written with pyarrow in the Hugging Face Hub's exact
column layouts, and the same rows as JSON lines written by pandas (which `datasets`'
`to_json` uses), imported by `medqa`, `medmcqa`, `pubmedqa` and the generic formats.

Sources of the layouts (the Hub's dataset cards, `dataset_info.features`, as of 2025;
written here from them, not downloaded):

- `GBaker/MedQA-USMLE-4-options`: question: string, answer: string, options:
  struct<A, B, C, D: string>, meta_info: string, answer_idx: string, metamap_phrases:
  list<string>.
- `bigbio/med_qa`, config `med_qa_en_source`: meta_info: string, question: string,
  answer_idx: string, answer: string, options: list<struct<key: string, value: string>>.
- `openlifescienceai/medmcqa`: id, question, opa, opb, opc, opd: string, cop:
  ClassLabel(names a, b, c, d) stored as int64 0-3 (-1 in the unanswered test split),
  choice_type, exp, subject_name, topic_name: string.
- `qiaojin/PubMedQA`, config `pqa_labeled` (the Parquet conversion): pubid: int32,
  question: string, context: struct<contexts: list<string>, labels: list<string>, meshes:
  list<string>> (a `datasets.Sequence` of a dict is stored as a struct of lists),
  long_answer: string, final_decision: string.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from store.datasets import get_items
from store.errors import UserError
from workbench.cli import main
from workbench.datasets import import_file, parse_mapping

S = pa.string()

MEDQA_4 = pa.schema([("question", S), ("answer", S),
                     ("options", pa.struct([("A", S), ("B", S), ("C", S), ("D", S)])),
                     ("meta_info", S), ("answer_idx", S), ("metamap_phrases", pa.list_(S))])
MEDQA_BIGBIO = pa.schema([("meta_info", S), ("question", S), ("answer_idx", S), ("answer", S),
                          ("options", pa.list_(pa.struct([("key", S), ("value", S)])))])
MEDMCQA = pa.schema([("id", S), ("question", S), ("opa", S), ("opb", S), ("opc", S),
                     ("opd", S), ("cop", pa.int64()), ("choice_type", S), ("exp", S),
                     ("subject_name", S), ("topic_name", S)])
PUBMEDQA = pa.schema([("pubid", pa.int32()), ("question", S),
                      ("context", pa.struct([("contexts", pa.list_(S)),
                                             ("labels", pa.list_(S)),
                                             ("meshes", pa.list_(S))])),
                      ("long_answer", S), ("final_decision", S)])


def _medqa_rows() -> list[dict]:
    return [
        {"question": "A 23-year-old woman has dysuria. Best treatment?", "answer": "Nitrofurantoin",
         "options": {"A": "Ampicillin", "B": "Ceftriaxone", "C": "Doxycycline",
                     "D": "Nitrofurantoin"},
         "meta_info": "step2&3", "answer_idx": "D", "metamap_phrases": ["dysuria", "woman"]},
        {"question": "A 3-month-old has a murmur. Most likely cause?", "answer": "VSD",
         "options": {"A": "VSD", "B": "ASD", "C": "PDA", "D": "Tetralogy of Fallot"},
         "meta_info": "step1", "answer_idx": "A", "metamap_phrases": ["murmur"]},
    ]


def _medmcqa_rows(cops: list[int]) -> list[dict]:
    return [{"id": f"e9ad821a-{n:04d}", "question": f"Question {n}?", "opa": f"a{n}",
             "opb": f"b{n}", "opc": f"c{n}", "opd": f"d{n}", "cop": cop,
             "choice_type": "single", "exp": None, "subject_name": "Anatomy",
             "topic_name": None} for n, cop in enumerate(cops)]


def _pubmedqa_rows() -> list[dict]:
    return [
        {"pubid": 21645374, "question": "Do mitochondria play a role in remodelling lace "
         "plant leaves during programmed cell death?",
         "context": {"contexts": ["Programmed cell death (PCD) is ...", "The following "
                                  "events were observed ..."],
                     "labels": ["BACKGROUND", "RESULTS"], "meshes": ["Alismataceae"]},
         "long_answer": "Results depicted mitochondrial dynamics ...", "final_decision": "yes"},
        {"pubid": 16418930, "question": "Landolt C and snellen e acuity: differences in "
         "strabismus amblyopia?",
         "context": {"contexts": ["Assessment of visual acuity ..."], "labels": ["PURPOSE"],
                     "meshes": ["Amblyopia"]},
         "long_answer": "Using the charts described ...", "final_decision": "no"},
    ]


def _parquet(path, rows, schema):
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    return path


def _pandas_jsonl(path, rows, schema):
    """The rows as JSON lines written by pandas, as `datasets`' `Dataset.to_json` writes."""
    frame = pa.Table.from_pylist(rows, schema=schema).to_pandas()
    frame.to_json(path, orient="records", lines=True)
    return path


@pytest.mark.parametrize("write", [_parquet, _pandas_jsonl], ids=["parquet", "pandas-jsonl"])
def test_medqa_four_option_layout(write, tmp_path, db):
    path = write(tmp_path / "medqa_test.data", _medqa_rows(), MEDQA_4)
    report = import_file(db, "medqa", path)
    assert (report.n_valid, report.n_new) == (2, 2)
    items = get_items(db, "medqa_test")
    assert [(i.gold, i.options[i.gold]) for i in items] == [("D", "Nitrofurantoin"),
                                                            ("A", "VSD")]
    assert items[0].meta == {"meta_info": "step2&3", "metamap_phrases": ["dysuria", "woman"]}
    assert [i.source_id for i in items] == ["medqa_test:1", "medqa_test:2"]


def test_medqa_bigbio_source_layout_key_value_options(tmp_path, db):
    rows = [{"meta_info": "step1", "question": "Which vitamin deficiency causes scurvy?",
             "answer_idx": "C", "answer": "Vitamin C",
             "options": [{"key": k, "value": v} for k, v in
                         zip("ABCDE", ["Vitamin A", "Vitamin B1", "Vitamin C", "Vitamin D",
                                       "Vitamin K"], strict=True)]}]
    path = _parquet(tmp_path / "bigbio.parquet", rows, MEDQA_BIGBIO)
    import_file(db, "medqa", path)
    (item,) = get_items(db, "bigbio")
    assert item.labels == ("A", "B", "C", "D", "E") and item.gold == "C"
    assert item.options["E"] == "Vitamin K"


def test_medqa_struct_of_five_with_a_null_fifth_on_four_option_rows(tmp_path, db):
    five = pa.schema([(f.name, f.type) if f.name != "options" else
                      ("options", pa.struct([(k, S) for k in "ABCDE"])) for f in MEDQA_4])
    rows = _medqa_rows()
    rows[1]["options"] = {**rows[1]["options"], "E": "Coarctation"}
    path = _parquet(tmp_path / "mixed.parquet", rows, five)  # row 1 gets E: null
    import_file(db, "medqa", path)
    items = get_items(db, "mixed")
    assert [i.labels for i in items] == [("A", "B", "C", "D"), ("A", "B", "C", "D", "E")]
    rows[0]["options"] = {"A": "x", "B": None, "C": "y", "D": "z"}
    gap = _parquet(tmp_path / "gap.parquet", rows, five)
    with pytest.raises(UserError, match=r"gap.parquet:row 1: options.B: expected text, got None"):
        import_file(db, "medqa", gap)


@pytest.mark.parametrize("write", [_parquet, _pandas_jsonl], ids=["parquet", "pandas-jsonl"])
def test_medmcqa_hub_file_is_read_zero_based_and_says_so(write, tmp_path, db):
    path = write(tmp_path / "validation.data", _medmcqa_rows([0, 3, 1, 2]), MEDMCQA)
    report = import_file(db, "medmcqa", path)
    items = get_items(db, "validation")
    assert [i.gold for i in items] == ["A", "D", "B", "C"]
    unit = "row" if write is _parquet else "line"
    assert report.notes == (f"{path}: cop read as 0-based (0 = opa, as in the Hugging Face "
                            f"files): {unit} 1 has cop 0",)
    assert report.lines()[1] == report.notes[0]


def test_medmcqa_one_based_file_is_detected_by_its_four(tmp_path, db):
    path = tmp_path / "dev.json"
    path.write_text("".join(json.dumps(r) + "\n" for r in _medmcqa_rows([4, 1, 2])))
    report = import_file(db, "medmcqa", path)
    assert [i.gold for i in get_items(db, "dev")] == ["D", "A", "B"]
    assert "cop read as 1-based" in report.notes[0] and "line 1 has cop 4" in report.notes[0]


def test_medmcqa_subset_that_could_be_either_base_needs_the_base_named(tmp_path, db):
    # No cop 0 and no cop 4: the Hub's 0-based file read as 1-based would shift every
    # gold by one, silently. Refused until the base is named; then imported with a warning.
    path = _parquet(tmp_path / "subset.parquet", _medmcqa_rows([1, 2, 3, 1]), MEDMCQA)
    with pytest.raises(UserError, match=r"subset.parquet: cop: expected a 0 or a 4 somewhere "
                       r".*import it as medmcqa0 or medmcqa1"):
        import_file(db, "medmcqa", path)
    assert db.execute("SELECT COUNT(*) FROM items").fetchone()[0] == 0
    report = import_file(db, "medmcqa0", path)
    assert [i.gold for i in get_items(db, "subset")] == ["B", "C", "D", "B"]
    assert report.notes[0].startswith(f"warning: {path}: every cop is 1, 2 or 3, so the file "
                                      "could be 0- or 1-based; read as 0-based")


def test_medmcqa_file_mixing_both_bases_is_refused_naming_both_rows(tmp_path, db):
    path = _parquet(tmp_path / "mixed.parquet", _medmcqa_rows([1, 0, 2, 4]), MEDMCQA)
    with pytest.raises(UserError) as caught:
        import_file(db, "medmcqa", path)
    assert str(caught.value).startswith(
        f"{path}:row 4: cop: expected one numbering in the file, got 0 on row 2 (0-based) "
        "and 4 here (1-based)")


def test_medmcqa_stated_base_contradicted_by_a_row(tmp_path, db):
    path = _parquet(tmp_path / "hub.parquet", _medmcqa_rows([0, 1]), MEDMCQA)
    with pytest.raises(UserError, match=r"hub.parquet:row 1: cop: expected 1, 2, 3 or 4 .* "
                       r"got 0 \(a 0-based export\? import it as medmcqa0\)"):
        import_file(db, "medmcqa1", path)


def test_medmcqa_hub_test_split_has_no_answers(tmp_path, db):
    path = _parquet(tmp_path / "test.parquet", _medmcqa_rows([-1, -1]), MEDMCQA)
    with pytest.raises(UserError, match=r"test.parquet:row 1: cop: .* got -1 \(the MedMCQA "
                       "test split has no answers\\)"):
        import_file(db, "medmcqa", path)


@pytest.mark.parametrize("write", [_parquet, _pandas_jsonl], ids=["parquet", "pandas-jsonl"])
def test_pubmedqa_hub_form_keeps_the_abstract(write, tmp_path, db):
    path = write(tmp_path / "pqa_labeled.data", _pubmedqa_rows(), PUBMEDQA)
    import_file(db, "pubmedqa", path)
    items = get_items(db, "pqa_labeled")
    assert [i.source_id for i in items] == ["21645374", "16418930"]
    assert [i.gold for i in items] == ["Yes", "No"]
    assert all(i.kind == "binary" and i.labels == ("Yes", "No", "Maybe") for i in items)
    # Joined as ori_pqal.json's CONTEXTS are: a blank line between sections.
    assert items[0].context == ("Programmed cell death (PCD) is ...\n\nThe following events "
                                "were observed ...")
    # The same lower-case meta keys as ori_pqal.json gives.
    assert items[0].meta == {"labels": ["BACKGROUND", "RESULTS"], "meshes": ["Alismataceae"],
                             "long_answer": "Results depicted mitochondrial dynamics ..."}


def test_pubmedqa_hub_row_without_its_context_is_refused(tmp_path, db):
    rows = _pubmedqa_rows()
    rows[1]["context"] = None
    path = _parquet(tmp_path / "pq.parquet", rows, PUBMEDQA)
    with pytest.raises(UserError, match=r"pq.parquet:row 2: context: expected a value, got null"):
        import_file(db, "pubmedqa", path)
    assert db.execute("SELECT COUNT(*) FROM items").fetchone()[0] == 0


def test_generic_parquet_with_dotted_paths(tmp_path, db):
    path = _parquet(tmp_path / "pq.parquet", _pubmedqa_rows(), PUBMEDQA)
    mapping = parse_mapping('{"id": "pubid", "question": "question", "context": '
                            '"context.contexts", "answer": "final_decision", '
                            '"fixed_options": ["Yes", "No", "Maybe"]}')
    import_file(db, "parquet", path, mapping=mapping)
    items = get_items(db, "pq")
    assert items[1].context == "Assessment of visual acuity ..."
    assert items[0].gold == "Yes"
    # The rest of `context` is not a used field: kept; the used top-level key is not.
    assert items[0].meta == {"long_answer": "Results depicted mitochondrial dynamics ..."}


def test_generic_dotted_path_through_a_non_object_names_the_path(tmp_path, db):
    path = tmp_path / "g.jsonl"
    path.write_text('{"id": "a", "q": {"text": "Q?"}, "options": ["x", "y"], "answer": "A"}\n'
                    '{"id": "b", "q": "flat", "options": ["x", "y"], "answer": "A"}\n')
    mapping = parse_mapping('{"question": "q.text"}')
    with pytest.raises(UserError, match=r"g.jsonl:2: q: expected an object holding 'text'"):
        import_file(db, "jsonl", path, mapping=mapping)


def test_parquet_format_refuses_text(tmp_path, db):
    path = tmp_path / "rows.parquet"
    path.write_text('{"id": "a"}\n')
    with pytest.raises(UserError, match=r"rows.parquet: expected a Parquet file \(starting "
                       r"with b'PAR1'\), got one that is not"):
        import_file(db, "parquet", path)


def test_damaged_parquet_is_named(tmp_path, db):
    path = tmp_path / "cut.parquet"
    whole = _parquet(tmp_path / "whole.parquet", _medqa_rows(), MEDQA_4).read_bytes()
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(UserError, match=r"cut.parquet: expected a readable Parquet file, got "
                       "one pyarrow cannot read"):
        import_file(db, "medqa", path)


def test_cli_prints_the_cop_note(tmp_path, capsys):
    path = _parquet(tmp_path / "train.parquet", _medmcqa_rows([0, 1]), MEDMCQA)
    try:
        main(["import", "medmcqa", str(path), "--db", str(tmp_path / "paw.db")])
    except SystemExit as exc:
        assert exc.code in (0, None)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{path}: 2 new items in dataset 'train' (2 valid rows, 0 already present)"
    assert out[1] == f"{path}: cop read as 0-based (0 = opa, as in the Hugging Face files): " \
                     "row 1 has cop 0"
