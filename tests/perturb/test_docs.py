"""docs/operators.md stays in step with the catalogue: every id and every word-list entry."""

from __future__ import annotations

from pathlib import Path

from workbench.perturb import OPERATORS
from workbench.perturb.baselines import FIXED_SENTENCES, GENDER_PAIRS
from workbench.perturb.chain import F4_NOTES, F6_MAPS
from workbench.perturb.paraphrase import PARAPHRASE_TABLE
from workbench.perturb.question import M3_DISTRACTORS, M4_NEGATIONS, M5_TABLES, M6_TABLES

DOC = " ".join((Path(__file__).resolve().parents[2] / "docs" / "operators.md")
               .read_text(encoding="utf-8").split())


def test_every_operator_id_is_documented():
    families = {op.id.rsplit("_", 1)[0] for op in OPERATORS.values()
                if op.family == "demographic" and op.id != "gender_swap"}
    assert families == {"demo_prefix_male", "demo_prefix_female"}
    for op_id in OPERATORS:
        if not op_id.startswith("demo_prefix_"):  # documented as a pattern of six
            assert f"`{op_id}" in DOC, op_id
    assert "demo_prefix_{male,female}_{white,black,hispanic}" in DOC


def test_every_word_list_entry_is_documented():
    phrases = list(F4_NOTES) + list(M3_DISTRACTORS) + list(FIXED_SENTENCES.values())
    phrases += [f"{a} → {b}" for table in F6_MAPS.values() for a, b in table.items()]
    phrases += [f"{a} → {b}" for a, b in M4_NEGATIONS]
    phrases += [f"{a} → {b}" for table in M5_TABLES.values() for a, b in table]
    phrases += [f"{label} → {b}" for table in M6_TABLES.values() for label, _, b in table]
    phrases += [f"{a} → {b}" for a, b in PARAPHRASE_TABLE]
    phrases += [f"{a}↔{b}" for a, b in GENDER_PAIRS]
    missing = [p for p in phrases if p not in DOC]
    assert missing == []
