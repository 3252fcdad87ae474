"""Seed-003 data: a robustness run's answers, CFV attempts, judge verdicts and EDD, as frames.

`load_robustness` reads everything a profile needs straight from the store (jobs, variants,
generations, judgements, embeddings); `cfv_attempts` scores each CFV attempt with the rule
of `definitions.score_cfv`; `demographic_pairs` lines each prefixed answer up with
its baseline, its direction label and its flags; `edd_values` computes EDD per question.
The profiles and their CIs are computed in `analysis.robustness.profiles`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from analysis.robustness.consistency import vignette_consistency
from analysis.robustness.definitions import (
    KIND_CFV,
    KIND_DIRECTION,
    KIND_FLAGS,
    MODE_PREFIX,
    UNPARSED,
    RobustnessRole,
    demographic_key,
    demographic_mode,
    edd,
    mode_operator,
    score_cfv,
)

if TYPE_CHECKING:
    import pandas as pd
    import sqlite_utils

KIND_OF_ROLE: dict[str, str] = {RobustnessRole.JUDGE_CFV: KIND_CFV,
                                RobustnessRole.JUDGE_DIRECTION: KIND_DIRECTION,
                                RobustnessRole.JUDGE_FLAGS: KIND_FLAGS}


@dataclass(frozen=True)
class RobustnessData:
    """A robustness run as frames (one row per stored unit).

    Attributes:
        audit: id, name, kind, dataset, config, created_at.
        arms: arm_id, label, model.
        items: item_id, source_id, gold, question, meta (dict; every item of the run).
        answers: arm_id, item_id, role, variant_id, prefix (the demographic operator id),
            status, generation_id, answer, output, mode ('prefix' / 'substitute'; None for
            the baseline): baseline and demographic answers.
        cfv: one row per CFV proposal job: arm_id, item_id, propose_status, proposal_id,
            variant_id, fired, target, circular, options_removed (a copied option list
            was cut from the changed case), problem, token_change_fraction,
            answer_status, answer_generation_id, answer.
        verdicts: one row per judged unit: role, arm_id, item_id, variant_id,
            judge_generation_id, subject_generation_id, verdict, evidence (dict),
            n_sharing (how many of the run's units that judge generation serves).
        embeddings: generation_id → vector, for `embedder`.
        embedder: the run's EDD embedder (None when the demographic test is off).
        judge_jobs: role, arm_id, item_id, variant_id, status of every judge job planned
            (a unit without one was not judged: e.g. an empty explanation has no flags job).
    """

    audit: dict[str, Any]
    arms: pd.DataFrame
    items: pd.DataFrame
    answers: pd.DataFrame
    cfv: pd.DataFrame
    verdicts: pd.DataFrame
    embeddings: dict[int, Any]
    embedder: str | None
    judge_jobs: pd.DataFrame

    @property
    def prefixes(self) -> list[str]:
        """The run's prefix operator ids, in config order (the demographics it compares)."""
        return list(self.audit["config"].get("prefixes") or [])

    @property
    def modes(self) -> list[str]:
        """The run's demographic modes: 'prefix' (the paper's), and/or 'substitute'."""
        if not self.prefixes:
            return []
        return list(self.audit["config"].get("demographic_modes") or [MODE_PREFIX])

    def mode_operators(self, mode: str) -> list[str]:
        """The demographic operator ids of one mode, in config order."""
        keys = [demographic_key(op) or op for op in self.prefixes]
        return [mode_operator(mode, key) for key in keys] if mode in self.modes else []


def resolve_robustness(db: sqlite_utils.Database, ref: str | int | None) -> dict[str, Any]:
    """The `audits` row of a robustness run by name or id (None: the latest).

    Raises:
        NotFound: no such robustness run.
    """
    from store.errors import NotFound

    sql = ("SELECT a.id, a.name, a.kind, d.name, a.config_json, a.created_at FROM audits a "
           "JOIN datasets d ON d.id = a.dataset_id WHERE a.kind = 'robustness'")
    if ref is None:
        row = db.execute(sql + " ORDER BY a.id DESC LIMIT 1").fetchone()
    else:
        row = db.execute(sql + " AND (a.name = ? OR CAST(a.id AS TEXT) = ?)",
                         [str(ref), str(ref)]).fetchone()
    if row is None:
        raise NotFound(f"no robustness run {ref!r}" if ref is not None
                       else "no robustness run yet (run `paw robustness`)")
    return {"id": row[0], "name": row[1], "kind": row[2], "dataset": row[3],
            "config": json.loads(row[4]), "created_at": row[5]}


_ANSWERS_SQL = """
SELECT j.arm_id, j.item_id, j.role, j.variant_id, v.operator_id, j.status, g.id, g.answer,
       g.output
FROM jobs j
LEFT JOIN variants v ON v.id = j.variant_id
LEFT JOIN generations g ON g.key = j.generation_key AND j.status = 'done'
WHERE j.audit_id = ? AND j.role IN (?, ?)
ORDER BY j.id
"""

_CFV_SQL = """
SELECT p.arm_id, p.item_id, p.status, pg.id, v.id, v.fired, v.details_json,
       v.token_change_fraction, a.status, g.id, g.answer
FROM jobs p
LEFT JOIN generations pg ON pg.key = p.generation_key AND p.status = 'done'
LEFT JOIN jobs a ON a.audit_id = p.audit_id AND a.arm_id = p.arm_id AND a.item_id = p.item_id
     AND a.role = ?
LEFT JOIN variants v ON v.id = a.variant_id
LEFT JOIN generations g ON g.key = a.generation_key AND a.status = 'done'
WHERE p.audit_id = ? AND p.role = ?
ORDER BY p.id
"""

# A judge generation is content-addressed: two units whose judge prompts are identical (two
# prefixes that move an item the same way, A -> B; two models with the same answers) share
# one. Each unit has its own `judgements` row (keyed by its subject), so a verdict is read
# through the job's own subject, never through the judge generation alone (which would pair
# every unit with every verdict of that generation).
_CFV_VERDICTS_SQL = """
SELECT j.role, j.arm_id, j.item_id, j.variant_id, g.id, jd.subject_generation_id, jd.verdict,
       jd.evidence, jd.method
FROM jobs j
JOIN generations g ON g.key = j.generation_key
JOIN variants v ON v.id = j.variant_id
JOIN judgements jd ON jd.judge_generation_id = g.id AND jd.kind = ?
     AND jd.subject_generation_id = v.source_generation_id
WHERE j.audit_id = ? AND j.role = ? AND j.status = 'done'
ORDER BY j.id
"""

_ANSWER_VERDICTS_SQL = """
SELECT j.role, j.arm_id, j.item_id, j.variant_id, g.id, jd.subject_generation_id, jd.verdict,
       jd.evidence, jd.method
FROM jobs j
JOIN generations g ON g.key = j.generation_key
JOIN jobs d ON d.audit_id = j.audit_id AND d.arm_id = j.arm_id AND d.item_id = j.item_id
     AND d.role = ? AND d.variant_id = j.variant_id AND d.status = 'done'
JOIN generations dg ON dg.key = d.generation_key
JOIN judgements jd ON jd.judge_generation_id = g.id AND jd.kind = ?
     AND jd.subject_generation_id = dg.id
WHERE j.audit_id = ? AND j.role = ? AND j.status = 'done'
ORDER BY j.id
"""


def load_robustness(db: sqlite_utils.Database, ref: str | int | None = None) -> RobustnessData:
    """Read a robustness run (default: the latest) from the store.

    Raises:
        NotFound: no such run.
    """
    import pandas as pd

    audit = resolve_robustness(db, ref)
    aid = audit["id"]
    arms = pd.DataFrame(
        db.execute("SELECT a.id, a.label, m.name FROM arms a JOIN models m ON m.id = a.model_id "
                   "WHERE a.audit_id = ? ORDER BY a.id", [aid]).fetchall(),
        columns=["arm_id", "label", "model"])
    items = pd.DataFrame(
        [(*r[:4], json.loads(r[4]) if r[4] else {}) for r in db.execute(
            "SELECT DISTINCT i.id, i.source_id, i.gold, i.question, i.meta_json FROM jobs j "
            "JOIN items i ON i.id = j.item_id WHERE j.audit_id = ? ORDER BY i.id", [aid])],
        columns=["item_id", "source_id", "gold", "question", "meta"])
    answers = pd.DataFrame(
        db.execute(_ANSWERS_SQL,
                   [aid, RobustnessRole.BASELINE, RobustnessRole.DEMOGRAPHIC]).fetchall(),
        columns=["arm_id", "item_id", "role", "variant_id", "prefix", "status",
                 "generation_id", "answer", "output"], dtype=object)
    answers["mode"] = [demographic_mode(op) if isinstance(op, str) else None
                       for op in answers["prefix"]]
    rows = []
    for (arm_id, item_id, p_status, proposal_id, variant_id, fired, details, tcf, a_status,
         answer_id, answer) in db.execute(
             _CFV_SQL, [RobustnessRole.CFV_ANSWER, aid, RobustnessRole.CFV_PROPOSE]):
        info = json.loads(details) if details else {}
        rows.append({"arm_id": arm_id, "item_id": item_id, "propose_status": p_status,
                     "proposal_id": proposal_id, "variant_id": variant_id,
                     "fired": None if fired is None else bool(fired),
                     "target": info.get("target"), "circular": bool(info.get("circular")),
                     "options_removed": bool(info.get("options_removed")),
                     "problem": info.get("problem"), "token_change_fraction": tcf,
                     "answer_status": a_status, "answer_generation_id": answer_id,
                     "answer": answer})
    cfv = pd.DataFrame(rows, dtype=object, columns=[
        "arm_id", "item_id", "propose_status", "proposal_id", "variant_id", "fired", "target",
        "circular", "options_removed", "problem", "token_change_fraction", "answer_status",
        "answer_generation_id", "answer"])
    verdict_rows = []
    judge = f"llm_judge:{audit['config'].get('judge')}|"
    for role, kind in KIND_OF_ROLE.items():
        if role == RobustnessRole.JUDGE_CFV:
            found = db.execute(_CFV_VERDICTS_SQL, [kind, aid, role])
        else:
            found = db.execute(_ANSWER_VERDICTS_SQL, [RobustnessRole.DEMOGRAPHIC, kind, aid, role])
        for r in found:
            if not str(r[8]).startswith(judge):
                continue  # another judge name over the same file: not this run's verdict
            verdict_rows.append({"role": r[0], "arm_id": r[1], "item_id": r[2],
                                 "variant_id": r[3], "judge_generation_id": r[4],
                                 "subject_generation_id": r[5], "verdict": r[6],
                                 "evidence": json.loads(r[7]) if r[7] else {}})
    verdicts = pd.DataFrame(verdict_rows, columns=[
        "role", "arm_id", "item_id", "variant_id", "judge_generation_id",
        "subject_generation_id", "verdict", "evidence"])
    # How many of the run's units each judge generation serves (1: its own).
    verdicts["n_sharing"] = verdicts.groupby("judge_generation_id")["role"].transform("size")
    embedder = audit["config"].get("embedder")
    ids = [int(g) for g in answers["generation_id"].dropna()]
    vectors = load_vectors(db, explanation_embedder(embedder, aid), ids) if embedder else {}
    judge_jobs = pd.DataFrame(
        db.execute("SELECT role, arm_id, item_id, variant_id, status FROM jobs WHERE "
                   "audit_id = ? AND role IN (?, ?, ?) ORDER BY id",
                   [aid, *KIND_OF_ROLE]).fetchall(),
        columns=["role", "arm_id", "item_id", "variant_id", "status"])
    return RobustnessData(audit, arms, items, answers, cfv, verdicts, vectors, embedder,
                          judge_jobs)


def load_vectors(db: sqlite_utils.Database, name: str, generation_ids: list[int]
                 ) -> dict[int, Any]:
    """Stored vectors of these generations under `embeddings.embedder` = `name`."""
    import numpy as np

    out: dict[int, Any] = {}
    for start in range(0, len(generation_ids), 500):
        chunk = generation_ids[start:start + 500]
        marks = ", ".join("?" * len(chunk))
        for gid, dim, blob in db.execute(
                f"SELECT generation_id, dim, vector FROM embeddings WHERE embedder = ? "
                f"AND generation_id IN ({marks})", [name, *chunk]):
            vector = np.frombuffer(blob, dtype="<f4")
            if vector.size == dim:
                out[int(gid)] = vector
    return out


def explanation_embedder(embedder: str, audit_id: int) -> str:
    """`embeddings.embedder` of a run's explanation vectors: `<spec>#explanation@run<id>`.

    The suffix keeps explanation vectors (the output without its final answer line) apart
    from any whole-output vector of the same generation, and one run's vectors apart from
    another's (a TF-IDF vector depends on the texts it was fitted with).
    """
    return f"{embedder}#explanation@run{audit_id}"


# ---------------------------------------------------------------- per-unit frames


def cfv_attempts(data: RobustnessData) -> pd.DataFrame:
    """One row per CFV attempt with its outcome.

    Columns: arm_id, item_id, target, outcome (one of `CFV_OUTCOMES`; None = unjudged),
    state ('scored', 'unjudged', 'incomplete'), judge (the judge's verdict or None),
    circular, token_change_fraction, baseline_answer, moved_elsewhere (same direction, the
    re-answer went to a third option), baseline_unknown (same direction, but the baseline
    answer did not parse, so whether it stayed or moved is unknown), reanswer_unparsed,
    problem.
    An attempt is incomplete while its proposal or re-answer is not stored yet.
    """
    import pandas as pd

    judge = {(r.arm_id, r.item_id): r.verdict
             for r in data.verdicts[data.verdicts["role"] == RobustnessRole.JUDGE_CFV].itertuples()}
    base = _baseline_answers(data)
    rows = []
    for r in data.cfv.itertuples():
        verdict = judge.get((r.arm_id, r.item_id))
        state, outcome = "scored", None
        if r.propose_status != "done" or r.fired is None:
            state = "incomplete"
        elif r.fired and r.answer_status not in ("done",):
            state = "incomplete"
        else:
            answer = _label(r.answer) if r.fired else None
            outcome = score_cfv(bool(r.fired), bool(r.circular), answer, str(r.target), verdict)
            if outcome is None:
                state = "unjudged"
        baseline = base.get((r.arm_id, r.item_id))
        rows.append({"arm_id": r.arm_id, "item_id": r.item_id, "target": r.target,
                     "outcome": outcome, "state": state, "judge": verdict,
                     "circular": bool(r.circular) if r.fired else None,
                     "token_change_fraction": r.token_change_fraction,
                     "baseline_answer": baseline,
                     # A third option: neither the target nor the answer before the change
                     # (unknowable when the baseline answer did not parse: counted apart).
                     "moved_elsewhere": bool(outcome == "same_direction" and baseline is not None
                                             and _label(r.answer) not in (None, baseline)),
                     "baseline_unknown": bool(outcome == "same_direction" and baseline is None),
                     "reanswer_unparsed": bool(r.fired and r.answer_status == "done"
                                               and _label(r.answer) is None),
                     "problem": r.problem})
    return pd.DataFrame(rows, columns=[
        "arm_id", "item_id", "target", "outcome", "state", "judge", "circular",
        "token_change_fraction", "baseline_answer", "moved_elsewhere", "baseline_unknown",
        "reanswer_unparsed", "problem"])


def _label(value: Any) -> str | None:
    """An answer label, or None for a missing one (NULL read as None or NaN)."""
    return value if isinstance(value, str) else None


def _baseline_answers(data: RobustnessData) -> dict[tuple[int, int], str | None]:
    rows = data.answers[data.answers["role"] == RobustnessRole.BASELINE]
    return {(r.arm_id, r.item_id): _label(r.answer) for r in rows.itertuples()
            if r.status == "done"}


def demographic_pairs(data: RobustnessData) -> pd.DataFrame:
    """One row per (arm, item, prefix) whose two answers are stored.

    Columns: arm_id, item_id, prefix (operator id), mode, demographic (its key, e.g.
    male_black), consistent / conflicts (the edit against the vignette's stated age, sex
    and race: `analysis.robustness.consistency`), variant_id, baseline_answer, answer,
    parsed (both
    answers parsed), changed, direction (judge label, `UNPARSED`, or None when not
    judged), flags_verdict ('none', 'flagged', `UNPARSED`, None), flags_state ('judged';
    'not_judged': no flags job was planned, because the baseline or the prefixed
    explanation is empty; 'pending': planned, no verdict stored yet), flags (list of dicts),
    prefixed_generation_id.
    """
    import pandas as pd

    answers = data.answers[data.answers["status"] == "done"]
    base = answers[answers["role"] == RobustnessRole.BASELINE].set_index(["arm_id", "item_id"])
    verdicts = {(r.role, r.arm_id, r.item_id, r.variant_id): r
                for r in data.verdicts.itertuples()}
    flag_jobs = {(r.arm_id, r.item_id, r.variant_id) for r in data.judge_jobs.itertuples()
                 if r.role == RobustnessRole.JUDGE_FLAGS}
    questions = dict(zip(data.items["item_id"], data.items["question"], strict=True))
    checks: dict[tuple[int, str], Any] = {}
    rows = []
    for r in answers[answers["role"] == RobustnessRole.DEMOGRAPHIC].itertuples():
        if (r.arm_id, r.item_id) not in base.index:
            continue
        b_answer = _label(base.loc[(r.arm_id, r.item_id)]["answer"])
        answer = _label(r.answer)
        parsed = b_answer is not None and answer is not None
        direction = verdicts.get((RobustnessRole.JUDGE_DIRECTION, r.arm_id, r.item_id,
                                  r.variant_id))
        flags = verdicts.get((RobustnessRole.JUDGE_FLAGS, r.arm_id, r.item_id, r.variant_id))
        key = (int(r.item_id), str(r.prefix))
        if key not in checks:
            checks[key] = vignette_consistency(questions.get(r.item_id) or "", str(r.prefix))
        rows.append({"arm_id": r.arm_id, "item_id": r.item_id, "prefix": r.prefix,
                     "mode": r.mode, "demographic": demographic_key(str(r.prefix)),
                     "consistent": checks[key].consistent,
                     "conflicts": checks[key].conflicts,
                     "variant_id": r.variant_id, "baseline_answer": b_answer,
                     "answer": answer, "parsed": parsed,
                     "changed": bool(parsed and b_answer != answer),
                     "direction": None if direction is None else direction.verdict,
                     "flags_verdict": None if flags is None else flags.verdict,
                     "flags_state": ("judged" if flags is not None else "pending"
                                     if (r.arm_id, r.item_id, r.variant_id) in flag_jobs
                                     else "not_judged"),
                     "flags": [] if flags is None or flags.verdict == UNPARSED
                     else list(flags.evidence.get("flags") or []),
                     "prefixed_generation_id": r.generation_id})
    return pd.DataFrame(rows, columns=[
        "arm_id", "item_id", "prefix", "mode", "demographic", "consistent", "conflicts",
        "variant_id", "baseline_answer",
        "answer", "parsed", "changed", "direction", "flags_verdict", "flags_state", "flags",
        "prefixed_generation_id"])


def edd_values(data: RobustnessData) -> pd.DataFrame:
    """EDD per (arm, item, mode) over the baseline and the mode's demographic explanations.

    A question gets an EDD only when all 1 + len(prefixes) explanations have a stored
    vector (an empty explanation is not embedded), as the paper's parser records a metric
    only when its fields are present (§3.5: the baseline and the six prefixes). Columns:
    arm_id, item_id, mode, edd, n_vectors.
    """
    import numpy as np
    import pandas as pd

    wanted = 1 + len(data.prefixes)
    done = data.answers[data.answers["status"] == "done"]
    rows = []
    for mode in data.modes:
        mine = done[(done["role"] == RobustnessRole.BASELINE) | (done["mode"] == mode)]
        for (arm_id, item_id), group in mine.groupby(["arm_id", "item_id"], sort=True):
            vectors = [data.embeddings[int(g)] for g in group["generation_id"].dropna()
                       if int(g) in data.embeddings]
            value = (edd(np.vstack(vectors)) if len(vectors) == wanted and wanted >= 2
                     else np.nan)
            rows.append({"arm_id": arm_id, "item_id": item_id, "mode": mode, "edd": value,
                         "n_vectors": len(vectors)})
    return pd.DataFrame(rows, columns=["arm_id", "item_id", "mode", "edd", "n_vectors"])
