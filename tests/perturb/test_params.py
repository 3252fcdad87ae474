"""Operator settings are declared: a misspelt `params` key (or `paw perturb --param`) is an
error naming the settings the operator takes, never silently ignored."""

from __future__ import annotations

import pytest

from store.errors import UserError
from workbench.cli import main
from workbench.perturb import get_operator
from workbench.perturb.catalogue import OPERATORS

STEM = "A 50-year-old man has mild fever and a cough for 3 days."


def test_a_misspelt_setting_is_refused_naming_the_real_ones():
    op = get_operator("paraphrase_token_adjusted")
    with pytest.raises(UserError, match="no setting 'targt_fraction' .*target_fraction, "
                                        "tolerance"):
        op.apply(STEM, params={"targt_fraction": 0.2})
    with pytest.raises(UserError, match="M4_negation_a has no setting 'sentence' .*no settings"):
        get_operator("M4_negation_a").apply(STEM, params={"sentence": "x"})


def test_declared_settings_still_work():
    result = get_operator("fixed_sentence").apply(STEM, params={"sentence": "family_member"})
    assert result.fired
    default = get_operator("fixed_sentence").apply(STEM)
    assert result.text != default.text  # the setting was read, not ignored


def test_every_builtin_declares_its_settings():
    assert all(op.params is not None for op in OPERATORS.values())
    takes = {op.id: op.params for op in OPERATORS.values() if op.params}
    assert takes["fixed_sentence"] == ("sentence",)
    assert "skip_step_numbers" in takes["F3_substitute_a"]


def test_paw_perturb_param_typo_is_a_one_line_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["perturb", "fixed_sentence", "--text", STEM, "--param", "sentense=family_member"])
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no setting 'sentense'" in err
