"""Load one audit from the store into pandas DataFrames, and derive the per-edit observations.

`load_audit` reads what the planner and runner stored (arms, items, jobs joined to their
variants and generations, chain-registration judgements). `observations` turns the perturbed
jobs into one row per edit with the exclusion reason, flip and correctness that every metric
reads, so exclusion rules live here once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import sqlite_utils

from analysis.audit.definitions import AuditRole
from store.db import loads
from store.errors import NotFound

if TYPE_CHECKING:
    import pandas as pd

EXCLUDED_NOT_FIRED = "not_fired"
EXCLUDED_NOT_GENERATED = "not_generated"
EXCLUDED_UNPARSED = "unparsed"
EXCLUDED_BASELINE_UNPARSED = "baseline_unparsed"
EXCLUDED_STATED_ANSWER = "stated_answer"
"""An F-block continuation whose kept chain still states the baseline answer, excluded only
with `--strip-stated-answer` (`analysis.audit.reading`)."""


@dataclass(frozen=True)
class AuditFrames:
    """An audit as DataFrames.

    Attributes:
        audit: the audits row (id, name, kind, dataset, status, created_at, config).
        arms: one row per arm: arm_id, label, model, template (audit order), tier and
            n_params (the model's `tier` and GGUF parameter count from its stored metadata,
            None when not recorded).
        items: one row per item with jobs in the audit: item_id, gold, options (dict).
        jobs: one row per job, joined to its variant (operator_id, family, intent, locus,
            fired, old, new, v_gold, v_options) and generation (generation_id, answer,
            parse_status, output). `output` (the generated text) is loaded for the rows the
            metrics read it from — baselines (chain length) and M2/M4/M5 edits (the token
            rule) — and None elsewhere unless `load_audit(..., outputs="all")`.
        judgements: chain-registration LLM-judge verdicts: generation_id, method, verdict.
        reading: how answers were read ('paper', or PAW's 'lenient' extension:
            `analysis.audit.reading`).
        strip_stated: exclude F-block continuations whose kept chain states the baseline
            answer (they are counted either way: `observations`' `stated_answer`).
    """

    audit: dict[str, Any]
    arms: pd.DataFrame
    items: pd.DataFrame
    jobs: pd.DataFrame
    judgements: pd.DataFrame
    _cache: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    reading: str = "paper"
    strip_stated: bool = False


def resolve_audit(db: sqlite_utils.Database, name_or_id: str | int | None = None) -> dict:
    """The audits row named (or numbered) `name_or_id`; the latest audit when None.

    'Latest' prefers kind 'audit' (a `paw audit`) over kind 'run' (a plain `paw run`).

    Raises:
        NotFound: no such audit, or the store holds none.
    """
    if name_or_id is None:
        rows = list(db.query(
            "SELECT * FROM audits ORDER BY (kind = 'audit') DESC, id DESC LIMIT 1"))
        if not rows:
            raise NotFound("no audits in this database yet (try `paw audit` or `paw demo`)")
        return rows[0]
    text = str(name_or_id)
    rows = list(db.query("SELECT * FROM audits WHERE name = ?", [text]))
    if not rows and text.isdigit():
        rows = list(db.query("SELECT * FROM audits WHERE id = ?", [int(text)]))
    if not rows:
        names = [r["name"] for r in db.query("SELECT name FROM audits ORDER BY id")]
        known = ", ".join(names) if names else "none yet"
        raise NotFound(f"no audit named or numbered {text!r}; known audits: {known}")
    return rows[0]


_JOBS_SQL = """
SELECT j.id AS job_id, j.arm_id, j.item_id, j.role, j.variant_id, j.status, j.sample_index,
       v.operator_id, v.family, v.intent, v.locus, v.fired, v.old, v.new,
       v.gold AS v_gold, v.options_json AS v_options_json, v.text AS v_text,
       g.id AS generation_id, g.answer, g.parse_status
FROM jobs j
LEFT JOIN variants v ON v.id = j.variant_id
LEFT JOIN generations g ON g.key = j.generation_key
WHERE j.audit_id = ?
ORDER BY j.id
"""

_JOBS_COLUMNS: tuple[str, ...] = (
    "job_id", "arm_id", "item_id", "role", "variant_id", "status", "sample_index",
    "operator_id", "family", "intent", "locus", "fired", "old", "new", "v_gold",
    "v_options_json", "v_text", "generation_id", "answer", "parse_status")
_TEXT_COLUMNS = frozenset({"role", "status", "operator_id", "family", "intent", "locus", "old",
                           "new", "v_gold", "v_options_json", "v_text", "answer",
                           "parse_status"})

# The generated texts are most of the file's bytes; the metrics read only these.
_OUTPUTS_SQL = """
SELECT g.id, g.output
FROM jobs j
JOIN generations g ON g.key = j.generation_key
LEFT JOIN variants v ON v.id = j.variant_id
WHERE j.audit_id = ? AND (j.role = 'baseline' OR (j.role = 'm_block' AND v.family IN ({})))
"""

_JUDGE_SQL = """
SELECT ju.subject_generation_id AS generation_id, ju.method, ju.verdict
FROM judgements ju
WHERE ju.kind = 'chain_registration' AND ju.method LIKE 'llm_judge:%'
  AND ju.subject_generation_id IN (
    SELECT g.id FROM jobs j JOIN generations g ON g.key = j.generation_key
    WHERE j.audit_id = ?)
ORDER BY ju.id
"""


def load_audit(db: sqlite_utils.Database, name_or_id: str | int | None = None, *,
               outputs: str = "needed", reading: str = "paper",
               strip_stated: bool = False) -> AuditFrames:
    """Read one audit (default: the latest) into `AuditFrames`.

    Args:
        db: the store.
        name_or_id: audit name or id; None = the latest audit.
        outputs: 'needed' loads the generated text only for baselines and M2/M4/M5 edits
            (what the metrics read; at the paper's scale the other texts are most of the
            bytes), 'all' for every job.
        reading: 'paper' (the stored parse) or 'lenient' (`analysis.audit.reading`: an
            unparsed answer re-read; loads every output).
        strip_stated: exclude F-block continuations whose kept chain states the baseline
            answer.

    Raises:
        NotFound: the audit does not exist.
        ValueError: an unknown reading.
    """
    import pandas as pd

    from analysis.audit.reading import READINGS

    from analysis.audit.definitions import JOINT_FAMILIES

    if reading not in READINGS:
        raise ValueError(f"reading must be one of {READINGS}, got {reading!r}")
    if reading == "lenient":
        outputs = "all"
    audit = resolve_audit(db, name_or_id)
    dataset = db.execute("SELECT name FROM datasets WHERE id = ?",
                         [audit["dataset_id"]]).fetchone()
    audit_info = {
        "id": audit["id"], "name": audit["name"], "kind": audit["kind"],
        "dataset": dataset[0] if dataset else None, "status": audit["status"],
        "created_at": audit["created_at"], "config": loads(audit["config_json"]) or {},
    }
    arm_rows = []
    for row in db.query(
            "SELECT a.id AS arm_id, a.label, m.name AS model, a.template, m.metadata_json "
            "FROM arms a JOIN models m ON m.id = a.model_id WHERE a.audit_id = ? "
            "ORDER BY a.id", [audit["id"]]):
        meta = _json(row.pop("metadata_json")) or {}
        tier, n_params = meta.get("tier"), meta.get("n_params")
        row["tier"] = tier if isinstance(tier, str) and tier.strip() else None
        row["n_params"] = int(n_params) if isinstance(n_params, int) and n_params > 0 else None
        arm_rows.append(row)
    arms = pd.DataFrame(arm_rows, columns=["arm_id", "label", "model", "template", "tier",
                                           "n_params"])
    jobs = _columns(db.execute(_JOBS_SQL, [audit["id"]]).fetchall(), _JOBS_COLUMNS)
    jobs["v_options"] = [_json(text) for text in jobs.pop("v_options_json")]
    if outputs == "all":
        sql = ("SELECT g.id, g.output FROM jobs j JOIN generations g ON g.key = "
               "j.generation_key WHERE j.audit_id = ?")
    elif outputs == "needed":
        sql = _OUTPUTS_SQL.format(", ".join(f"'{f}'" for f in JOINT_FAMILIES))
    else:
        raise ValueError(f"outputs must be 'needed' or 'all', got {outputs!r}")
    texts = dict(db.execute(sql, [audit["id"]]).fetchall())
    jobs["output"] = pd.Series([texts.get(g) for g in jobs["generation_id"]], dtype=object,
                               index=jobs.index)
    item_rows = list(db.query(
        "SELECT id AS item_id, source_id, kind, gold, options_json FROM items WHERE id IN "
        "(SELECT DISTINCT item_id FROM jobs WHERE audit_id = ?) ORDER BY id", [audit["id"]]))
    items = pd.DataFrame(item_rows, columns=["item_id", "source_id", "kind", "gold",
                                             "options_json"])
    items["options"] = [_json(text) for text in items.pop("options_json")]
    judgements = pd.DataFrame(list(db.query(_JUDGE_SQL, [audit["id"]])),
                              columns=["generation_id", "method", "verdict"])
    jobs["read_leniently"] = False
    if reading == "lenient":
        _read_leniently(jobs, items)
    return AuditFrames(audit=audit_info, arms=arms, items=items, jobs=jobs,
                       judgements=judgements, reading=reading, strip_stated=strip_stated)


def _read_leniently(jobs: pd.DataFrame, items: pd.DataFrame) -> None:
    """Re-read every 'no_answer' output with the lenient reading (in place)."""
    from analysis.audit.reading import lenient_answer

    options_of = dict(zip(items["item_id"], items["options"], strict=True))
    for index in jobs.index[jobs["parse_status"] == "no_answer"]:
        v_options = jobs.at[index, "v_options"]
        options = v_options if isinstance(v_options, dict) else \
            options_of.get(jobs.at[index, "item_id"])
        answer = lenient_answer(jobs.at[index, "output"], options)
        if answer is not None:
            jobs.at[index, "answer"], jobs.at[index, "parse_status"] = answer, "ok"
            jobs.at[index, "read_leniently"] = True


def _columns(rows: list[tuple], names: tuple[str, ...]) -> pd.DataFrame:
    """A DataFrame from row tuples, column by column: text as plain object arrays (pandas'
    own string dtype is several times slower to filter and iterate without pyarrow),
    numbers inferred (NULL → NaN)."""
    import numpy as np
    import pandas as pd

    columns = list(zip(*rows, strict=True)) if rows else [() for _ in names]
    data = {}
    for name, values in zip(names, columns, strict=True):
        if name in _TEXT_COLUMNS:
            array = np.empty(len(values), dtype=object)
            array[:] = values
            data[name] = pd.Series(array, dtype=object)
        else:
            data[name] = pd.Series(list(values), dtype=None if values else object)
    return pd.DataFrame(data, columns=list(names))


def _parsed(frame: pd.DataFrame) -> pd.Series:
    return frame["generation_id"].notna() & frame["answer"].notna() & (
        frame["parse_status"] == "ok")


def baselines(frames: AuditFrames, role: str = AuditRole.BASELINE) -> pd.DataFrame:
    """One row per (arm, item) of `role` ('baseline' or 'direct', sample 0).

    Columns: arm_id, item_id, answer, parsed, correct (NaN when unparsed), output.
    """
    jobs = frames.jobs
    rows = jobs[(jobs["role"] == role) & (jobs["sample_index"] == 0)].copy()
    rows = rows.drop_duplicates(["arm_id", "item_id"], keep="first")
    rows = rows.merge(frames.items[["item_id", "gold"]], on="item_id", how="left")
    rows["parsed"] = _parsed(rows)
    rows["generated"] = rows["generation_id"].notna()
    rows["correct"] = (rows["answer"] == rows["gold"]).astype(float).where(rows["parsed"])
    return rows[["arm_id", "item_id", "answer", "parsed", "generated", "correct", "output",
                 "generation_id"]].reset_index(drop=True)


def observations(frames: AuditFrames) -> pd.DataFrame:
    """One row per perturbed job (m_block, f_block, shuffle) with what every metric needs.

    Columns added to the job's own: base_answer, excluded (None when usable, else one of
    'not_fired', 'not_generated', 'unparsed', 'baseline_unparsed'), usable, flip (answer
    differs from the arm's baseline answer; for shuffle, the chosen option's content
    differs), correct (answer equals the variant's gold, else the item's gold),
    answer_text and base_text (the chosen options' texts).
    """
    if "observations" in frames._cache:
        return frames._cache["observations"]
    jobs = frames.jobs
    perturbed = jobs[jobs["role"].isin(
        [AuditRole.M_BLOCK, AuditRole.F_BLOCK, AuditRole.SHUFFLE])].copy()
    base = baselines(frames).rename(columns={"answer": "base_answer", "parsed": "base_parsed"})
    perturbed = perturbed.merge(base[["arm_id", "item_id", "base_answer", "base_parsed"]],
                                on=["arm_id", "item_id"], how="left")
    perturbed = perturbed.merge(frames.items[["item_id", "gold", "options"]], on="item_id",
                                how="left")
    import numpy as np

    not_fired = ((perturbed["status"] == "not_fired") | (perturbed["fired"] == 0)).to_numpy()
    parsed = _parsed(perturbed).to_numpy()
    base_parsed = perturbed["base_parsed"].fillna(False).astype(bool).to_numpy()
    # A generation stored with parse_status 'error' is a backend failure the runner retries:
    # it is not an answer yet, so it counts as not generated rather than unparsed.
    missing = (perturbed["generation_id"].isna()
               | (perturbed["parse_status"] == "error")).to_numpy()
    from analysis.audit.reading import states_answer

    # F-block continuations whose kept chain still states the baseline answer (the paper
    # strips it): counted always, excluded with `strip_stated`.
    stated = np.array([
        role == AuditRole.F_BLOCK and states_answer(text, base, opts)
        for role, text, base, opts in zip(perturbed["role"], perturbed["v_text"],
                                          perturbed["base_answer"], perturbed["options"],
                                          strict=True)], dtype=bool)
    perturbed["stated_answer"] = stated & ~not_fired
    strip = stated if frames.strip_stated else np.zeros(len(stated), dtype=bool)
    excluded = np.select(
        [not_fired, missing, ~parsed, ~base_parsed, strip],
        [EXCLUDED_NOT_FIRED, EXCLUDED_NOT_GENERATED, EXCLUDED_UNPARSED,
         EXCLUDED_BASELINE_UNPARSED, EXCLUDED_STATED_ANSWER], default="").astype(object)
    excluded[excluded == ""] = None
    usable = excluded == None  # noqa: E711 (elementwise on an object array)
    perturbed["excluded"] = excluded
    perturbed["usable"] = usable
    # Plain object arrays: iterating pandas columns row by row is the slow part at scale.
    answers = perturbed["answer"].to_numpy(dtype=object)
    base_answers = perturbed["base_answer"].to_numpy(dtype=object)
    options = perturbed["options"].to_numpy(dtype=object)
    v_options = perturbed["v_options"].to_numpy(dtype=object)
    answer_texts = [_option_text(v if isinstance(v, dict) else o, a)
                    for v, o, a in zip(v_options, options, answers, strict=True)]
    base_texts = [_option_text(o, b) for o, b in zip(options, base_answers, strict=True)]
    v_gold = perturbed["v_gold"].to_numpy(dtype=object)
    gold = perturbed["gold"].to_numpy(dtype=object)
    target = np.where([isinstance(g, str) and bool(g) for g in v_gold], v_gold, gold)
    flips = (answers != base_answers).astype(float)
    shuffle = (perturbed["role"] == AuditRole.SHUFFLE).to_numpy()
    for i in np.flatnonzero(shuffle & usable):
        flips[i] = float(_norm(answer_texts[i]) != _norm(base_texts[i]))
    correct = (answers == target).astype(float)
    flips[~usable] = np.nan
    correct[~usable] = np.nan
    perturbed["answer_text"] = answer_texts
    perturbed["base_text"] = base_texts
    perturbed["flip"] = flips
    perturbed["correct"] = correct
    frames._cache["observations"] = perturbed
    return perturbed


def _json(text: Any) -> Any:
    # pandas stores a SQL NULL in a text column as None or NaN depending on the column.
    return loads(text) if isinstance(text, str) else None


def _option_text(options: Any, label: Any) -> str | None:
    if not isinstance(options, dict) or not isinstance(label, str):
        return None
    return options.get(label)


def _norm(text: str | None) -> str | None:
    return None if text is None else " ".join(text.split()).casefold()
