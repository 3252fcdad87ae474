"""`paw operators [--json]` and `paw perturb` through click's CliRunner and the real entry point."""

from __future__ import annotations

import json

from click.testing import CliRunner

from store.errors import UserError
from workbench.cli import cli, main
from workbench.perturb import F_BLOCK, M_BLOCK, OPERATORS


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), prog_name="paw")


def test_operators_table_lists_every_operator_with_tags_and_an_example():
    result = invoke("operators")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["id", "family", "variant", "intent", "locus", "target"]
    for op_id in OPERATORS:
        row = next(line for line in lines if line.split()[:1] == [op_id])
        op = OPERATORS[op_id]
        assert row.split() == [op.id, op.family, op.variant, op.intent or "-", op.locus or "-",
                               op.target]
        example = lines[lines.index(row) + 1]
        assert example.startswith("    e.g. ") and "->" in example
    assert f"{len(OPERATORS)} operators." in result.output


def test_operators_json_matches_the_catalogue():
    result = invoke("operators", "--json")
    assert result.exit_code == 0
    rows = json.loads(result.output)
    assert [r["id"] for r in rows] == list(OPERATORS)
    assert [r["id"] for r in rows[:30]] == F_BLOCK + M_BLOCK
    m5 = next(r for r in rows if r["id"] == "M5_severity_b")
    assert (m5["family"], m5["variant"], m5["intent"], m5["locus"]) == ("M5", "b", "D", "Sur")
    out = m5["example"]["output"]
    # "moderate persistent asthma ... severe exacerbation": (b) scans moderate before severe
    assert out["fired"] and (out["old"], out["new"]) == ("moderate", "mild")


def test_perturb_prints_the_result_json():
    result = invoke("perturb", "M5_severity_a", "--text",
                    "Which drug is given to prevent acute mountain sickness?")
    assert result.exit_code == 0
    payload = json.loads(result.output)
    assert payload["operator"] == "M5_severity_a" and payload["fired"] is True
    assert payload["text"] == "Which drug is given to prevent chronic mountain sickness?"
    assert (payload["old"], payload["new"]) == ("acute", "chronic")
    # 10 word tokens (9 words + "?"), one substituted -> 1/10
    assert payload["token_change_fraction"] == 0.1


def test_perturb_not_fired_and_seeded():
    payload = json.loads(invoke("perturb", "M4_negation_a", "--text", "No hinge.").output)
    assert payload["fired"] is False and payload["text"] is None
    assert payload["reason"] == "no clinical hinge phrase"
    one = invoke("perturb", "F2_delete_a", "--text", "a\n\nb\n\nc", "--seed", "3").output
    assert one == invoke("perturb", "F2_delete_a", "--text", "a\n\nb\n\nc", "--seed", "3").output


def test_perturb_option_shuffle_with_options_and_params():
    options = {"A": "Aspirin", "B": "Heparin", "C": "Warfarin"}
    result = invoke("perturb", "option_shuffle", "--text", "Which drug?", "--options",
                    json.dumps(options), "--gold", "B", "--item-key", "q7")
    payload = json.loads(result.output)
    assert payload["options"][payload["gold"]] == "Heparin"
    assert sorted(payload["options"].values()) == sorted(options.values())
    fixed = json.loads(invoke("perturb", "fixed_sentence", "--text", "Q?", "--param",
                              "sentence=family_member").output)
    assert fixed["text"] == "A family member came with me to the appointment. Q?"


def test_perturb_strip_answer_and_stdin():
    result = CliRunner().invoke(cli, ["perturb", "F1_truncate_50", "--text", "-",
                                      "--strip-answer"],
                                input="Step 1: a\nStep 2: b\nAnswer: B\n", prog_name="paw")
    assert json.loads(result.output)["text"] == "Step 1: a"


def test_unknown_operator_exits_1_with_one_line(capsys):
    result = invoke("perturb", "M9_nothing", "--text", "x")
    assert result.exit_code == 1 and isinstance(result.exception, UserError)
    try:
        main(["perturb", "M9_nothing", "--text", "x"])
        code = 0
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1 and err.startswith("paw: error: operator: expected one of")
    assert "got 'M9_nothing'" in err


def test_bad_options_json_is_a_user_error(capsys):
    try:
        main(["perturb", "option_shuffle", "--text", "Q", "--options", "[1, 2]"])
        code = 0
    except SystemExit as exc:
        code = exc.code
    assert code == 1
    assert capsys.readouterr().err.startswith("paw: error: --options: expected a JSON object")


def test_user_operator_shows_up_in_the_cli(tmp_path, monkeypatch):
    rules = tmp_path / "ops.toml"
    rules.write_text('[[operator]]\nid = "U_pyrexia"\nintent = "P"\nlocus = "Sur"\n'
                     'pattern = "fever"\nreplacement = "pyrexia"\nexample = "Has fever."\n')
    monkeypatch.setenv("PAW_OPERATORS", str(rules))
    table = invoke("operators").output
    assert "U_pyrexia" in table and "'Has pyrexia.'" in table
    payload = json.loads(invoke("perturb", "U_pyrexia", "--text", "Has fever.").output)
    assert payload["text"] == "Has pyrexia."
