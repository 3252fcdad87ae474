"""Test helper: write a synthetic audit (items, arms, variants, jobs, generations) into a store.

Tests of metrics, reports and annotation need audits whose every answer is chosen by hand.
`AuditBuilder` writes such an audit straight into the tables of `store/migrations/`,
following the job model of `docs/design.md`, so the code under test reads exactly what the
real planner and runner would have stored.

Example::

    b = AuditBuilder(db)                       # dataset 'synthetic', audit 'audit-1'
    q1 = b.item("q1", gold="A")                # options A..D by default
    arm = b.arm("smollm2/cot")                 # model 'smollm2', template 'cot'
    b.baseline(arm, q1, answer="A", output="... so the answer is A")
    ids = b.perturbed(arm, q1, operator_id="M5_severity_a", family="M5", intent="D",
                      answer="B", output="chronic pain ...", old="acute", new="chronic")
    b.perturbed(arm, q1, operator_id="M2_sex", family="M2", intent="P", fired=False)
    b.judge(ids.generation_id, "yes")          # a chain-registration LLM-judge verdict

Every method returns the ids it created (ints, or `Perturbed` for `perturbed`), never the
builder, so tests can refer to rows later. Roles are inferred from the family: 'F*' ->
`f_block` (variant target 'chain', source = the arm's baseline generation), 'M*' ->
`m_block` (target 'question', one variant per item/operator/seed shared by all arms),
'shuffle' -> `shuffle` (target 'options'); pass `role=` to override.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass
from typing import Any

import sqlite_utils

from store.db import dumps, utcnow

DEFAULT_OPTIONS: dict[str, str] = {
    "A": "option A", "B": "option B", "C": "option C", "D": "option D",
}
"""Options used when an item is built without `options=`."""

_ROLE_BY_FAMILY_PREFIX = {"F": "f_block", "M": "m_block"}
_TARGET_BY_ROLE = {"f_block": "chain", "m_block": "question", "shuffle": "options",
                   "baseline": "question", "direct": "question"}
_MODE_BY_ROLE = {"baseline": "cot", "direct": "direct", "m_block": "cot", "shuffle": "cot",
                 "f_block": "continue", "sample": "cot"}
_STAGE_BY_ROLE = {"f_block": 2}


@dataclass(frozen=True)
class Perturbed:
    """Ids written by `AuditBuilder.perturbed`; `generation_id` is None when not fired."""

    variant_id: int
    job_id: int
    generation_id: int | None


class AuditBuilder:
    """Writes one synthetic audit into a migrated store (see the module docstring).

    Args:
        db: a migrated store (e.g. the `db` fixture).
        dataset: dataset name (created if missing, reused otherwise).
        audit: audit name (must be new in this store).
        kind: audit kind, 'audit' or 'run'.
        config: stored as the audit's `config_json`.
    """

    def __init__(self, db: sqlite_utils.Database, *, dataset: str = "synthetic",
                 audit: str = "audit-1", kind: str = "audit",
                 config: dict[str, Any] | None = None) -> None:
        self.db = db
        self._counter = itertools.count(1)
        row = db.execute("SELECT id FROM datasets WHERE name = ?", [dataset]).fetchone()
        if row is None:
            self.dataset_id = db["datasets"].insert(
                {"name": dataset, "format": "synthetic", "created_at": utcnow()}).last_pk
        else:
            self.dataset_id = int(row[0])
        self.audit_id: int = db["audits"].insert({
            "name": audit, "kind": kind, "dataset_id": self.dataset_id,
            "config_json": dumps(config or {}), "status": "done", "created_at": utcnow(),
        }).last_pk
        self._arm_model: dict[int, int] = {}
        self._baseline: dict[tuple[int, int], int] = {}

    # ---- rows without generations -------------------------------------------------------

    def item(self, source_id: str | None = None, *, gold: str = "A",
             options: dict[str, str] | None = None, question: str = "Which is right?",
             kind: str = "mcq", context: str | None = None) -> int:
        """Add an item to the dataset; returns its id (the existing one if `source_id` is
        already in the dataset, e.g. when a second audit of the same dataset is built).

        Args:
            source_id: the dataset's own id (default 'itemN').
            gold: the correct label.
            options: label -> text, display order (default A..D, "option A".."option D").
            question: the stem.
            kind: 'mcq' or 'binary'.
            context: optional passage.
        """
        n = next(self._counter)
        source_id = source_id or f"item{n}"
        existing = self.db.execute(
            "SELECT id FROM items WHERE dataset_id = ? AND source_id = ?",
            [self.dataset_id, source_id]).fetchone()
        if existing is not None:  # a second audit of the same dataset reuses its items
            return int(existing[0])
        return self.db["items"].insert({
            "dataset_id": self.dataset_id, "source_id": source_id, "kind": kind,
            "question": question, "context": context,
            "options_json": dumps(options or DEFAULT_OPTIONS), "gold": gold,
            "meta_json": dumps({}),
        }).last_pk

    def model(self, name: str) -> int:
        """Id of the model called `name`, registering a fake GGUF record if new."""
        row = self.db.execute("SELECT id FROM models WHERE name = ?", [name]).fetchone()
        if row is not None:
            return int(row[0])
        return self.db["models"].insert({
            "name": name, "backend": "fake", "path": f"/nonexistent/{name}.gguf",
            "sha256": hashlib.sha256(name.encode()).hexdigest(), "created_at": utcnow(),
        }).last_pk

    def arm(self, label: str, *, model: str | None = None, template: str | None = None) -> int:
        """Add an arm (model × template) to the audit; returns its id.

        Args:
            label: display name, e.g. 'smollm2/cot'.
            model: model name (default: the part of `label` before '/').
            template: prompt template (default: the part after '/', else 'cot').
        """
        head, _, tail = label.partition("/")
        model_id = self.model(model or head)
        arm_id = self.db["arms"].insert({
            "audit_id": self.audit_id, "label": label, "model_id": model_id,
            "template": template or tail or "cot",
        }).last_pk
        self._arm_model[arm_id] = model_id
        return arm_id

    def variant(self, item_id: int, *, operator_id: str, family: str, intent: str | None = None,
                locus: str | None = None, target: str = "question", fired: bool = True,
                old: str | None = None, new: str | None = None, text: str | None = None,
                options: dict[str, str] | None = None, gold: str | None = None,
                seed: int = 0, source_generation_id: int | None = None,
                reason: str | None = None) -> int:
        """A variant row, reused when the same (item, operator, seed, source) exists."""
        key = hashlib.sha256(dumps(
            [item_id, operator_id, seed, source_generation_id]).encode()).hexdigest()
        row = self.db.execute("SELECT id FROM variants WHERE key = ?", [key]).fetchone()
        if row is not None:
            return int(row[0])
        return self.db["variants"].insert({
            "key": key, "item_id": item_id, "operator_id": operator_id, "family": family,
            "intent": intent, "locus": locus, "target": target, "seed": seed,
            "source_generation_id": source_generation_id, "fired": int(fired),
            "reason": reason if reason is not None else (None if fired else "no match"),
            "text": text if text is not None else (f"edited by {operator_id}" if fired else None),
            "options_json": dumps(options) if options is not None else None,
            "gold": gold, "old": old, "new": new, "created_at": utcnow(),
        }).last_pk

    # ---- generations and jobs -----------------------------------------------------------

    def generation(self, arm_id: int, item_id: int, *, answer: str | None,
                   output: str = "", mode: str = "cot", variant_id: int | None = None,
                   parse_status: str | None = None,
                   option_probs: dict[str, float] | None = None) -> tuple[int, str]:
        """A generations row for the arm's model; returns (id, key).

        `parse_status` defaults to 'ok' when `answer` is given, else 'no_answer'.
        """
        n = next(self._counter)
        key = hashlib.sha256(f"{self.audit_id}:{arm_id}:{item_id}:{n}".encode()).hexdigest()
        gen_id = self.db["generations"].insert({
            "key": key, "model_id": self._arm_model[arm_id], "item_id": item_id,
            "variant_id": variant_id, "mode": mode, "template": "synthetic",
            "prompt": f"prompt {n}", "sampler_json": dumps({"temperature": 0}), "seed": 0,
            "output": output, "answer": answer,
            "parse_status": parse_status or ("ok" if answer is not None else "no_answer"),
            "option_probs_json": dumps(option_probs) if option_probs is not None else None,
            "created_at": utcnow(),
        }).last_pk
        return gen_id, key

    def job(self, arm_id: int, item_id: int, role: str, *, variant_id: int | None = None,
            generation_key: str | None = None, status: str = "done",
            sample_index: int = 0) -> int:
        """A jobs row; returns its id."""
        return self.db["jobs"].insert({
            "audit_id": self.audit_id, "arm_id": arm_id, "item_id": item_id,
            "variant_id": variant_id, "role": role, "stage": _STAGE_BY_ROLE.get(role, 1),
            "sample_index": sample_index, "seed": 0, "generation_key": generation_key,
            "status": status,
        }).last_pk

    def baseline(self, arm_id: int, item_id: int, *, answer: str | None, output: str = "",
                 parse_status: str | None = None,
                 option_probs: dict[str, float] | None = None) -> int:
        """The arm's CoT answer to the original item; returns the generation id."""
        gen_id, key = self.generation(arm_id, item_id, answer=answer, output=output,
                                      parse_status=parse_status, option_probs=option_probs)
        self.job(arm_id, item_id, "baseline", generation_key=key)
        self._baseline[(arm_id, item_id)] = gen_id
        return gen_id

    def direct(self, arm_id: int, item_id: int, *, answer: str | None, output: str = "",
               parse_status: str | None = None) -> int:
        """The arm's no-CoT answer; returns the generation id."""
        gen_id, key = self.generation(arm_id, item_id, answer=answer, output=output,
                                      mode="direct", parse_status=parse_status)
        self.job(arm_id, item_id, "direct", generation_key=key)
        return gen_id

    def perturbed(self, arm_id: int, item_id: int, *, operator_id: str, family: str | None = None,
                  intent: str | None = None, answer: str | None = None, output: str = "",
                  old: str | None = None, new: str | None = None, fired: bool = True,
                  parse_status: str | None = None, locus: str | None = None,
                  role: str | None = None, options: dict[str, str] | None = None,
                  gold: str | None = None, seed: int = 0,
                  option_probs: dict[str, float] | None = None) -> Perturbed:
        """A perturbed variant, its job and (when fired) its generation.

        Args:
            arm_id: the arm.
            item_id: the item.
            operator_id: e.g. 'M5_severity_a', 'F1_truncate_50'.
            family: e.g. 'M5' (default: `operator_id` up to the first '_').
            intent: 'D' (destructive) or 'P' (preserving).
            answer: parsed answer label (None -> parse_status 'no_answer').
            output: the perturbed chain text.
            old: the operator's removed token(s).
            new: the operator's inserted token(s).
            fired: False writes a not-fired variant and a 'not_fired' job, no generation.
            parse_status: override (default 'ok' if `answer` else 'no_answer').
            locus: operator locus tag.
            role: job role (default inferred from the family).
            options: permuted options (shuffle variants).
            gold: remapped gold label (shuffle variants).
            seed: variant seed.
            option_probs: stored option distribution.
        """
        family = family or operator_id.split("_")[0]
        role = role or _ROLE_BY_FAMILY_PREFIX.get(family[:1], "shuffle")
        if family == "shuffle":
            role = "shuffle"
        source = self._baseline.get((arm_id, item_id)) if role == "f_block" else None
        variant_id = self.variant(
            item_id, operator_id=operator_id, family=family, intent=intent, locus=locus,
            target=_TARGET_BY_ROLE.get(role, "question"), fired=fired, old=old, new=new,
            options=options, gold=gold, seed=seed, source_generation_id=source)
        if not fired:
            job_id = self.job(arm_id, item_id, role, variant_id=variant_id, status="not_fired")
            return Perturbed(variant_id, job_id, None)
        gen_id, key = self.generation(arm_id, item_id, answer=answer, output=output,
                                      mode=_MODE_BY_ROLE.get(role, "cot"),
                                      variant_id=variant_id, parse_status=parse_status,
                                      option_probs=option_probs)
        job_id = self.job(arm_id, item_id, role, variant_id=variant_id, generation_key=key)
        return Perturbed(variant_id, job_id, gen_id)

    def judge(self, generation_id: int, verdict: str, *, method: str = "llm_judge:synthetic",
              kind: str = "chain_registration", evidence: str | None = None) -> int:
        """A judgement about a generation (default: LLM-judge chain registration)."""
        variant = self.db.execute("SELECT variant_id FROM generations WHERE id = ?",
                                  [generation_id]).fetchone()
        return self.db["judgements"].insert({
            "kind": kind, "method": method, "subject_generation_id": generation_id,
            "variant_id": variant[0] if variant else None, "verdict": verdict,
            "evidence": evidence, "created_at": utcnow(),
        }).last_pk
