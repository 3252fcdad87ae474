"""A synthetic store at seed 002's scale: 14 models × 4 datasets × 30 operators × 200 items.

Written through the real schema (`store.open_db` migrates it; rows go into the same
tables the planner and runner fill), so `paw report` reads it exactly as a real audit:
four audits (MedQA, MedMCQA, PubMedQA, MMLU-medical; one per dataset, kind 'audit'), each
with the 14 models of seed 002 §5 as arms. Per arm and item: the CoT baseline, the direct
answer, the 13 M-block edits (one variant per item and operator, shared by the arms), the
17 F-block edits of the arm's own chain and (not on PubMedQA) an option shuffle —
≈ 367K jobs, ≈ 300K stored generations after the edits that do not fire.

Rates are plausible, not fitted: accuracy per model from Table 3, a per-model flip rate
scaled per family in the shape of Table 11, firing rates from Appendix G (F4/M1/M3 always;
M4 10%, M5 14%, M6 1%; M2 87% on MedQA, 15% elsewhere; F1/F2/F5 never on the two
chain-compressed models), ≈ 2% unparseable answers, chains of ≈ 160 words (≈ 21 for the
compressed models) that mention the edit's new token ≈ 10% of the time. Everything is
seeded: the same --seed writes the same store.

    .venv/bin/python bench/synthetic_store.py --db /tmp/paw-scale.db
    .venv/bin/python bench/synthetic_store.py --db /tmp/small.db --items 20 --models 4
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import time
from dataclasses import dataclass
from pathlib import Path

from store import open_db
from store.db import utcnow
from workbench.perturb.catalogue import F_BLOCK, M_BLOCK, OPERATORS

DATASETS: tuple[tuple[str, str, str], ...] = (
    ("MedQA", "medqa", "mcq"), ("MedMCQA", "medmcqa", "mcq"),
    ("PubMedQA", "pubmedqa", "binary"), ("MMLU-medical", "mmlu", "mcq"),
)
"""(name, importer format, item kind) of the four benchmarks."""

MODELS: tuple[tuple[str, str, float, float, bool], ...] = (
    # name, tier, accuracy (Table 3), base flip rate, chain-compressed
    ("Mistral-7B", "open", 0.52, 0.20, False), ("Qwen2.5-7B", "open", 0.54, 0.10, False),
    ("Llama-3.1-8B", "open", 0.51, 0.18, False), ("Gemma-2-9B", "open", 0.67, 0.08, False),
    ("Qwen2.5-14B", "open", 0.68, 0.08, False), ("BioMistral-7B", "open", 0.38, 0.06, True),
    ("Meditron-7B", "open", 0.24, 0.55, False), ("Med42-8B", "open", 0.66, 0.12, False),
    ("OpenBioLLM-8B", "open", 0.50, 0.15, True), ("HuatuoGPT-o1", "reasoning", 0.55, 0.12,
                                                   False),
    ("DeepSeek-R1-D", "reasoning", 0.60, 0.20, False), ("GPT-4o-mini", "closed", 0.77, 0.05,
                                                        False),
    ("GPT-4o", "closed", 0.85, 0.06, False), ("Claude-Haiku-4.5", "closed", 0.82, 0.06, False),
)
"""The panel of seed 002 §5 with the figures the generator draws from."""

FAMILY_FLIP: dict[str, float] = {
    "F1": 1.2, "F2": 0.9, "F3": 0.6, "F4": 0.5, "F5": 0.5, "F6": 0.8, "F7": 0.8,
    "M1": 2.2, "M2": 0.7, "M3": 1.3, "M4": 0.9, "M5": 0.6, "M6": 0.5,
}
"""Flip rate of a family relative to the model's base rate (the shape of Table 11)."""

FIRE: dict[str, float] = {
    "F1": 0.97, "F2": 0.97, "F3": 0.6, "F4": 1.0, "F5": 0.95, "F6": 0.7, "F7": 0.6,
    "M1": 0.99, "M2": 0.15, "M3": 1.0, "M4": 0.10, "M5": 0.14, "M6": 0.0125,
}
"""Probability an operator fires (Appendix G firing rates; M2 on MedQA is 0.87)."""

NEW_TOKEN = {"M2": "72", "M4": "does not", "M5": "chronic", "M6": "two years"}
OPTIONS_POOL = ("Septic shock", "Viral gastroenteritis", "Migraine", "Tension headache",
                "Acute appendicitis", "Iron deficiency anaemia", "Ectopic pregnancy",
                "Gastro-oesophageal reflux", "Pulmonary embolism", "Costochondritis",
                "Bacterial meningitis", "Otitis media")
WORDS = ("patient", "presents", "with", "fever", "the", "most", "likely", "diagnosis", "is",
         "because", "therefore", "history", "of", "sudden", "pain", "and", "we", "consider",
         "step", "labs", "show", "elevated", "normal", "imaging", "treatment", "first",
         "line", "option", "rules", "out", "symptoms", "suggest", "infection", "recent",
         "exam", "reveals", "tenderness", "management", "includes", "given", "findings")


def _key(*parts: object) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()


class Writer:
    """Buffers rows with explicit ids and writes them with executemany."""

    def __init__(self, db) -> None:
        self.conn = db.conn
        self.now = utcnow()
        self.rows: dict[str, list[tuple]] = {"variants": [], "generations": [], "jobs": []}
        self.next_id = {"variants": 1, "generations": 1}

    def add(self, table: str, row: tuple) -> int:
        new_id = self.next_id.get(table)
        if new_id is not None:
            self.next_id[table] = new_id + 1
            row = (new_id, *row)
        self.rows[table].append(row)
        return new_id or 0

    def flush(self) -> None:
        sql = {
            "variants": "INSERT INTO variants (id, key, item_id, operator_id, family, intent, "
                        "locus, target, seed, source_generation_id, fired, reason, text, "
                        "options_json, gold, old, new, created_at) VALUES "
                        "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            "generations": "INSERT INTO generations (id, key, model_id, item_id, variant_id, "
                           "mode, template, prompt, sampler_json, seed, output, answer, "
                           "parse_status, option_probs_json, created_at) VALUES "
                           "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            "jobs": "INSERT INTO jobs (audit_id, arm_id, item_id, variant_id, role, stage, "
                    "sample_index, seed, generation_key, status) VALUES (?,?,?,?,?,?,?,?,?,?)",
        }
        # Parents before children, so every foreign key holds at each insert: baselines
        # (no variant) before the F-block variants that point at them, variants before the
        # generations that point at them. (Deferring the checks instead makes SQLite scan
        # unindexed child columns on every parent insert: quadratic.)
        generations = self.rows["generations"]
        first = [row for row in generations if row[4] is None]
        later = [row for row in generations if row[4] is not None]
        for table, rows in (("generations", first), ("variants", self.rows["variants"]),
                            ("generations", later), ("jobs", self.rows["jobs"])):
            self.conn.executemany(sql[table], rows)
        for rows in self.rows.values():
            rows.clear()


@dataclass
class _Cell:
    """What every row of one arm on one item shares, and the writer's helpers for it."""

    w: Writer
    rng: random.Random
    now: str
    sampler: str
    prompt: str
    labels: tuple[str, ...]
    d_index: int
    audit_id: int
    arm_id: int
    model_id: int
    item_id: int
    base: str = ""

    def generate(self, role: str, mode: str, answer: str | None, chain_words: int,
                 variant_id: int | None, mention: str | None = None) -> str:
        """A generations row (≈ 2% unparseable); returns its key."""
        text = " ".join(self.rng.choices(WORDS, k=chain_words))
        if mention:
            text += f" {mention}"
        status = "ok"
        if self.rng.random() < 0.02:
            answer, status = None, "no_answer"
        key = _key(self.d_index, self.arm_id, self.item_id, role, variant_id)
        probs = json.dumps({lab: round(1 / len(self.labels), 3) for lab in self.labels})
        self.w.add("generations", (key, self.model_id, self.item_id, variant_id, mode,
                                   "neutral_cot@1", self.prompt, self.sampler, 0,
                                   text + f"\nAnswer: {answer}", answer, status, probs,
                                   self.now))
        return key

    def job(self, role: str, variant_id: int | None, key: str | None, stage: int = 1) -> None:
        """A jobs row: done with `key`, or not fired without one."""
        self.w.add("jobs", (self.audit_id, self.arm_id, self.item_id, variant_id, role, stage,
                            0, 0, key, "done" if key else "not_fired"))

    def answer_after(self, flip: float, family: str) -> str:
        """The answer to an edit of `family`: another label with the family's flip rate."""
        if self.rng.random() < min(0.95, flip * FAMILY_FLIP[family]):
            return self.rng.choice([lab for lab in self.labels if lab != self.base])
        return self.base


def _write_arm(cell: _Cell, gold: str, acc: float, flip: float, compressed: bool,
               m_variants: list, shuffle_vid: int | None) -> None:
    """Baseline, direct, M-block, F-block and shuffle rows of one arm on one item."""
    rng, w = cell.rng, cell.w
    words = 21 if compressed else rng.randint(120, 200)
    cell.base = gold if rng.random() < acc else rng.choice(
        [lab for lab in cell.labels if lab != gold])
    cell.job("baseline", None, cell.generate("baseline", "cot", cell.base, words, None))
    base_gen_id = w.next_id["generations"] - 1
    direct = gold if rng.random() < acc + 0.02 else rng.choice(cell.labels)
    cell.job("direct", None, cell.generate("direct", "direct", direct, 0, None))
    for op, meta, vid, fired in m_variants:
        if not fired:
            cell.job("m_block", vid, None)
            continue
        mention = NEW_TOKEN.get(meta.family) if rng.random() < 0.10 else None
        cell.job("m_block", vid, cell.generate(op, "cot", cell.answer_after(flip, meta.family),
                                               words, vid, mention))
    for op in F_BLOCK:
        meta = OPERATORS[op]
        # Chain-compressed models write one step: truncation, deletion, reordering need two.
        fired = not (compressed and meta.family in ("F1", "F2", "F5")) and (
            rng.random() < FIRE[meta.family])
        vid = w.add("variants", (
            _key(base_gen_id, op), cell.item_id, op, meta.family, meta.intent, meta.locus,
            "chain", 0, base_gen_id, int(fired), None if fired else "no match", None, None,
            None, None, None, cell.now))
        key = cell.generate(op, "continue", cell.answer_after(flip, meta.family), words // 2,
                            vid) if fired else None
        cell.job("f_block", vid, key, stage=2)
    if shuffle_vid is not None:
        # Answers under shuffled options are uniform over the labels: accuracy and the
        # same-content rate near 1/k, the collapse Table 8 reports for GPT-4o-mini.
        cell.job("shuffle", shuffle_vid, cell.generate("shuffle", "cot", rng.choice(cell.labels),
                                                       words, shuffle_vid))


def build(path: str, n_items: int = 200, n_models: int = 14, seed: int = 0) -> dict[str, int]:
    """Write the synthetic store to `path` (which must not exist); returns row counts."""
    if Path(path).exists():
        raise SystemExit(f"{path} exists: remove it first (the generator never overwrites)")
    rng = random.Random(seed)
    db = open_db(path)
    conn = db.conn
    # Bulk load: one transaction, no fsync until the end (the file is scratch until done).
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("BEGIN")
    now = utcnow()
    w = Writer(db)
    models = MODELS[:n_models]
    model_ids = []
    for name, tier, *_ in models:
        model_ids.append(conn.execute(
            "INSERT INTO models (name, backend, path, sha256, metadata_json, created_at) "
            "VALUES (?, 'fake', ?, ?, ?, ?)",
            [name, f"/synthetic/{name}.gguf", _key(name), json.dumps({"tier": tier}), now],
        ).lastrowid)
    sampler = json.dumps({"max_tokens": 512, "temperature": 0})
    for d_index, (d_name, d_format, kind) in enumerate(DATASETS):
        dataset_id = conn.execute(
            "INSERT INTO datasets (name, format, created_at) VALUES (?, ?, ?)",
            [d_name, d_format, now]).lastrowid
        audit_id = conn.execute(
            "INSERT INTO audits (name, kind, dataset_id, config_json, status, created_at) "
            "VALUES (?, 'audit', ?, '{}', 'finished', ?)",
            [f"scale-{d_format}", dataset_id, now]).lastrowid
        arm_ids = [conn.execute(
            "INSERT INTO arms (audit_id, label, model_id, template) VALUES (?, ?, ?, ?)",
            [audit_id, f"{name}/neutral_cot@1", mid, "neutral_cot@1"]).lastrowid
            for (name, *_), mid in zip(models, model_ids)]
        labels = ("yes", "no", "maybe") if kind == "binary" else ("A", "B", "C", "D")
        for i in range(n_items):
            if kind == "binary":
                options = {"yes": "yes", "no": "no", "maybe": "maybe"}
            else:
                options = dict(zip(labels, rng.sample(OPTIONS_POOL, 4)))
            gold = rng.choice(labels)
            stem = " ".join(rng.choices(WORDS, k=60)) + "?"
            item_id = conn.execute(
                "INSERT INTO items (dataset_id, source_id, kind, question, options_json, "
                "gold) VALUES (?, ?, ?, ?, ?, ?)",
                [dataset_id, f"{d_format}-{i}", kind, stem, json.dumps(options), gold],
            ).lastrowid
            prompt = f"System: careful medical reasoner.\nQuestion: {stem}\n" + "\n".join(
                f"{k}. {v}" for k, v in options.items()) + "\nReason step by step."
            m_variants = []
            for op in M_BLOCK:
                meta = OPERATORS[op]
                fire = 0.87 if (meta.family == "M2" and d_format == "medqa") else FIRE[meta.family]
                fired = rng.random() < fire
                vid = w.add("variants", (
                    _key(item_id, op), item_id, op, meta.family, meta.intent, meta.locus,
                    "question", 0, None, int(fired), None if fired else "no match",
                    stem if fired else None, None, None, None,
                    NEW_TOKEN.get(meta.family), now))
                m_variants.append((op, meta, vid, fired))
            shuffle_vid = None
            if kind != "binary":
                perm = rng.sample(labels, len(labels))
                shuffled = {new: options[old] for new, old in zip(labels, perm)}
                shuffle_vid = w.add("variants", (
                    _key(item_id, "option_shuffle"), item_id, "option_shuffle", "shuffle",
                    None, None, "options", 0, None, 1, None, stem, json.dumps(shuffled),
                    labels[perm.index(gold)], None, None, now))
            for (_, _, acc, flip, compressed), mid, arm_id in zip(models, model_ids, arm_ids):
                cell = _Cell(w, rng, now, sampler, prompt, labels, d_index, audit_id, arm_id,
                             mid, item_id)
                _write_arm(cell, gold, acc, flip, compressed, m_variants, shuffle_vid)
            if len(w.rows["generations"]) > 20000:
                w.flush()
    w.flush()
    conn.execute("COMMIT")
    conn.execute("PRAGMA synchronous = FULL")
    counts = {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
              for t in ("items", "arms", "variants", "jobs", "generations")}
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", required=True, help="new SQLite file to write")
    parser.add_argument("--items", type=int, default=200, help="items per dataset")
    parser.add_argument("--models", type=int, default=14, help="models (≤ 14)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.perf_counter()
    counts = build(args.db, args.items, args.models, args.seed)
    size = Path(args.db).stat().st_size / 2**20
    print(f"wrote {args.db} in {time.perf_counter() - started:.1f} s ({size:.0f} MiB): "
          + ", ".join(f"{n} {t}" for t, n in counts.items()))


if __name__ == "__main__":
    main()
