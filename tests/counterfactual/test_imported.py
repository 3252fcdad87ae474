"""Ready-made perturbed texts (`--targets-file`) as study targets, used exactly like generated
ones: planned, answered k times, paraphrase-sized against each imported text, reported."""

from __future__ import annotations

import json

import pytest

from analysis.counterfactual.data import load_study
from analysis.counterfactual.report import StudyReportOptions, build_report
from store.jobs import list_jobs
from tests.counterfactual.conftest import STEMS
from tests.counterfactual.test_cli_study import paw
from workbench.engine.variants import get_variant
from workbench.counterfactual import StudySpec, run_study
from workbench.counterfactual.imported import read_targets_file
from workbench.perturb.tokenize import CallableTokenizer, token_change_fraction

COLORFUL = {  # MedPerturb-style "colorful" rewrites, written for this test
    "t-man": STEMS["man"].replace("chest pain", "a crushing, awful chest pain"),
    "t-woman": STEMS["woman"].replace("a runny nose", "a dreadfully runny nose"),
}
SWAPPED = {"t-man": STEMS["man"].replace("man", "woman").replace("He ", "She ")}


def _write(tmp_path, rows, name="targets.jsonl"):
    path = tmp_path / name
    if not isinstance(rows, str):
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        path.write_text(rows)
    return path


def _rows():
    rows = [{"item": k, "perturbation": "colorful", "text": v} for k, v in COLORFUL.items()]
    rows += [{"item": k, "perturbation": "gender_swap_mp", "text": v, "direction": 1}
             for k, v in SWAPPED.items()]
    return rows


def test_imported_texts_are_targets_like_generated_ones(study_db, fake_model, make_engine,
                                                        tmp_path):
    targets = read_targets_file(_write(tmp_path, _rows()))
    assert targets.target_ids == ("file:colorful", "file:gender_swap_mp")
    spec = StudySpec(dataset="triage", models=("fake",), paraphraser="fake", targets=(),
                     targets_file=targets)
    engine = make_engine()
    outcome = run_study(study_db, spec, engine=engine)
    jobs = list_jobs(study_db, outcome.study_id)
    tokenizer = CallableTokenizer(lambda t: engine.runner(fake_model).backend.tokenize(
        t, special=False))
    fired = {}
    for job in jobs:
        if job.role == "target" and job.sample_index == 0:
            variant = get_variant(study_db, job.variant_id)
            fired[(variant.operator_id, job.item_id)] = (job.status, variant)
    # 3 items × 2 perturbations; the file has 2 + 1 texts, the rest are 'not fired'.
    statuses = sorted(status for status, _ in fired.values())
    assert statuses == ["done", "done", "done", "not_fired", "not_fired", "not_fired"]
    for status, variant in fired.values():
        assert variant.family == "imported"
        if status == "done":
            source = study_db.execute("SELECT source_id FROM items WHERE id = ?",
                                      [variant.item_id]).fetchone()[0]
            expected = COLORFUL if variant.operator_id == "file:colorful" else SWAPPED
            assert variant.text == expected[source]
    # Every fired unit has k = 3 samples of original, target, fixed and paraphrase.
    roles = {j.role for j in jobs if j.status == "done"}
    assert roles == {"original", "target", "fixed", "paraphrase"}
    # The paraphrase is sized against the imported text with the audited model's tokenizer.
    for job in list_jobs(study_db, outcome.study_id, role="paraphrase"):
        if job.sample_index:
            continue
        variant = get_variant(study_db, job.variant_id)
        target = get_variant(study_db, variant.details["reference_variant_id"])
        question = study_db.execute("SELECT question FROM items WHERE id = ?",
                                    [variant.item_id]).fetchone()[0]
        assert variant.details["target_fraction"] == pytest.approx(
            token_change_fraction(question, target.text, tokenizer), abs=1e-6)
    data = load_study(study_db, outcome.study)
    swap = next(c for c in data.comparisons if c.target == "file:gender_swap_mp")
    assert swap.direction.tolist() == [1.0]
    table4 = build_report(study_db, outcome.study, options=StudyReportOptions(n_boot=50)) \
        .section("table4").frame
    assert set(table4["perturbation"]) == {"file:colorful", "file:gender_swap_mp"}
    # The same command finds the same study and generates nothing new.
    again = run_study(study_db, spec, engine=engine)
    assert again.study_id == outcome.study_id and again.generated == 0


def test_csv_targets_and_aliases(tmp_path):
    path = _write(tmp_path, 'id,name,question\nt-man,colorful,"A man, in pain?"\n',
                  "targets.csv")
    targets = read_targets_file(path)
    assert targets.rows[0].text == "A man, in pain?" and targets.names == ("colorful",)


@pytest.mark.parametrize("content, name, message", [
    ('{"item": "t-man", "text": "x"}\n', "t.jsonl", ("t.jsonl:1: perturbation: expected a "
                                                     "column perturbation / name")),
    ('{"item": "t-man", "perturbation": "c", "text": "  "}\n', "t.jsonl",
     "t.jsonl:1: text: expected text"),
    (('{"item": "t-man", "perturbation": "c", "text": "a"}\n'
     '{"item": "t-man", "perturbation": "c", "text": "b"}\n'), "t.jsonl",
     "t.jsonl:2: expected one text per item and perturbation"),
    ('{"item": "t-man", "perturbation": "c", "text": "a", "direction": 2}\n', "t.jsonl",
     "t.jsonl:1: direction: expected 1 or -1"),
    ('{"item": "t-man", "perturbation": "c d", "text": "a"}\n', "t.jsonl",
     "perturbation: expected a name without spaces"),
    ("not json\n", "t.jsonl", "t.jsonl:1: line: expected a JSON object"),
    ("item,perturbation,text\n", "t.csv", "expected at least one row"),
    ("x", "t.txt", "expected a .jsonl or .csv file"),
    ('{"item": "nope", "perturbation": "c", "text": "a"}\n', "t.jsonl",
     "t.jsonl:1: item: expected an item id of dataset 'demo', got 'nope'"),
])
def test_bad_targets_files_are_one_line_errors_and_store_nothing(capsys, db_path, tmp_path,
                                                                 content, name, message):
    assert paw(capsys, "demo", "--import-only", "--db", db_path)[0] == 0
    from store import open_db

    before = open_db(db_path).execute("SELECT COUNT(*) FROM audits").fetchone()[0]
    path = _write(tmp_path, content, name)
    code, out, err = paw(capsys, "study", "--dataset", "demo", "--targets-file", str(path),
                         "--db", db_path)
    assert code != 0 and out == ""
    assert err.startswith("paw: error:") and err.count("\n") == 1 and message in err, err
    after = open_db(db_path).execute("SELECT COUNT(*) FROM audits").fetchone()[0]
    assert after == before


def test_a_missing_targets_file(capsys, db_path, tmp_path):
    paw(capsys, "demo", "--import-only", "--db", db_path)
    code, _, err = paw(capsys, "study", "--dataset", "demo", "--targets-file",
                       str(tmp_path / "gone.jsonl"), "--db", db_path)
    assert code == 1 and "--targets-file: cannot read" in err and err.count("\n") == 1
