"""Coherence flags in annotation (issue 39, criterion 2): the raters' case views never show
them (an automatic verdict on the edit would anchor the gold-shift and validity labels the
raters give, and name the operator's family they are blinded to); the coordinator's exports
carry them per case (docs/annotation.md, "Coherence flags")."""

from __future__ import annotations

import csv
import io
import json

from annotate.events import record_label, start_session
from annotate.export import export_labels
from annotate.sets.annotation_set import rater_queue
from annotate.sets.audit import create_set
from tests.annotate.conftest import OPTIONS, named
from tests.annotate.test_blinding import _serialized
from tests.builders import AuditBuilder
from tests.cli.test_flips_coherence import STEMS

OPERATORS = ("M2_sex", "M2_sex_coherent", "M5_severity_b", "M5_severity_b_coherent")


def _audit(db) -> tuple[int, dict[tuple[int, str], str]]:
    """A one-arm audit of the real operators on the two stems; returns (audit id, the
    checks each edit fails, worked by hand as in tests/cli/test_flips_coherence.py)."""
    from workbench.perturb.catalogue import apply

    b = AuditBuilder(db, audit="coh")
    arm = b.arm("smollm2/cot")
    for i, stem in enumerate(STEMS):
        q = b.item(f"coh{i}", question=stem, options=OPTIONS, gold="A")
        b.baseline(arm, q, answer="A", output="Septic shock fits. A")
        for op in OPERATORS:
            r = apply(op, stem, seed=0, item_key=f"coh{i}")
            edit = b.perturbed(arm, q, operator_id=op, intent="D", answer="B", new=r.new,
                               old=r.old, family=op[:2], output="It changes. B")
            db["variants"].update(edit.variant_id, {"text": r.text})
    expected = {(0, "M2_sex"): "pronouns", (1, "M2_sex"): "pronouns",
                (0, "M5_severity_b"): "named_condition", (1, "M5_severity_b"): ""}
    expected |= {(i, op): "" for i in range(2) for op in OPERATORS if op.endswith("coherent")}
    return b.audit_id, expected


def test_raters_never_see_the_flag_and_the_exports_carry_it(db, people):
    audit_id, expected = _audit(db)
    create_set(db, audit_id, 20, per_family=None, seed=0, name="s", **named(people))
    views = {name: rater_queue(db, "s", people[name]) for name in ("alice", "bob")}
    # 8 edits, 7 cases: on stem 1 (no named condition) M5 (b) and its coherent variant make
    # the same edit, one case standing for both (`merge_identical`)
    assert len(views["alice"]) == len(views["bob"]) == 7
    for name in ("alice", "bob"):
        for view in views[name]:
            text = _serialized(view)
            assert not any(word in text for word in (
                "coheren", "pronouns", "named_condition", "age_noun", "double_negative",
                "cut_number")), (name, view.code)
    # both raters see the same case, field for field (only their order differs)
    def seen(view) -> dict:
        return {k: v for k, v in view.to_dict().items() if k != "position"}

    by_code = {v.code: seen(v) for v in views["bob"]}
    assert all(seen(v) == by_code[v.code] for v in views["alice"])

    # the coordinator's exports: one `incoherent` cell per case
    wide = [json.loads(line) for line in export_labels(db, "s", "wide", "jsonl").splitlines()]
    edited = {r["code"]: r for r in db.query(
        "SELECT c.code, v.operator_id, i.source_id FROM annotation_cases c "
        "JOIN variants v ON v.id = c.variant_id JOIN items i ON i.id = v.item_id")}
    got = {(int(edited[r["code"]]["source_id"][-1]), op): r["incoherent"]
           for r in wide for op in r["operator"].split("+")}
    assert got == expected
    assert sum(bool(r["incoherent"]) for r in wide) == 3
    session = start_session(db, people["alice"], "s")
    for view in views["alice"]:
        record_label(db, people["alice"], session, view.code, "gold_shift", "no_shift")
    long = list(csv.DictReader(io.StringIO(export_labels(db, "s", "long", "csv"))))
    assert len(long) == 7
    assert {r["code"]: r["incoherent"] for r in long} == {r["code"]: r["incoherent"]
                                                          for r in wide}
