"""What a sealed set attests beyond the texts shown: every input of the clinician tables.

The tables read more than the raters saw: a case's operator family, intent and (old, new)
tokens (the token rule, the strata, the harm and chain subsets), the automatic verdicts
the human labels validate (the judgements on the case's generations), the dataset, and the
identity of the model and template whose answers are shown (the `model` stratum). A set
entry (`annotate.trust.record.set_content`, version 2) carries all of them per case, so
changing any after the set was sealed — which would move rows between strata or change a
validation — is named by `paw verify` like an edited question.
"""

from __future__ import annotations

from typing import Any

SET_CONTENT_VERSION = 2
"""Version of a `set` entry's content: 2 adds `inputs` to each case (1: texts only)."""

_INPUTS_SQL = """
SELECT c.id AS case_id, v.operator_id, v.family, v.intent, v.locus, v.target, v.fired,
       v.old, v.new, v.seed AS variant_seed, d.name AS dataset, d.format AS dataset_format,
       p.id AS perturbed_id, p.template AS perturbed_template, pm.name AS perturbed_model,
       pm.sha256 AS perturbed_model_sha256,
       b.id AS baseline_id, b.template AS baseline_template, bm.name AS baseline_model,
       bm.sha256 AS baseline_model_sha256
FROM annotation_cases c
JOIN variants v ON v.id = c.variant_id
JOIN items i ON i.id = v.item_id
JOIN datasets d ON d.id = i.dataset_id
LEFT JOIN generations p ON p.id = c.perturbed_generation_id
LEFT JOIN models pm ON pm.id = p.model_id
LEFT JOIN generations b ON b.id = c.baseline_generation_id
LEFT JOIN models bm ON bm.id = b.model_id
WHERE c.set_id = ? ORDER BY c.id
"""


def case_inputs(conn: Any, set_id: int) -> dict[int, dict[str, Any]]:
    """case id -> the variant's tags and tokens, the dataset, the model identity of both
    generations shown, and every judgement (verdict) made on them."""
    cursor = conn.execute(_INPUTS_SQL, [set_id])
    names = [d[0] for d in cursor.description]
    out: dict[int, dict[str, Any]] = {}
    generations: dict[int, list[int]] = {}
    for values in cursor.fetchall():
        row = dict(zip(names, values, strict=True))
        case_id = row.pop("case_id")
        row["verdicts"] = []
        out[case_id] = row
        for key in ("perturbed_id", "baseline_id"):
            if row[key] is not None:
                generations.setdefault(int(row[key]), []).append(case_id)
    if generations:
        marks = ",".join("?" * len(generations))
        for subject, kind, method, verdict, variant in conn.execute(
                "SELECT subject_generation_id, kind, method, verdict, variant_id FROM "
                f"judgements WHERE subject_generation_id IN ({marks}) ORDER BY id",
                list(generations)).fetchall():
            for case_id in generations[subject]:
                out[case_id]["verdicts"].append(
                    {"generation_id": subject, "kind": kind, "method": method,
                     "verdict": verdict, "variant_id": variant})
    return out
