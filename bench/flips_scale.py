"""Benchmark: the flip queries (`analysis.flips.listing`) on an audit with 50,000 edits.

The TUI's flip inspector (and `paw flips`) must paint its first page within 300 ms and
answer a filter change within 100 ms on an audit of 50,000 edits. This script builds such
an audit through the real schema (`store.open_db` migrations; rows written with the same
columns the planner and runner fill: items, arms, variants, jobs, generations with option
distributions, LLM-judge verdicts), then times, each the median of several repeats:

- first page: `list_flips` with the default filter (flipped edits, newest first), page of
  50, with its total count — what the inspector shows first;
- filter changes: family, intent, arm, chain not updated (token rule), judge verdict,
  free text, all edits (flipped or not), a deep page;
- one case: `flip_case` (everything `paw flips show` prints).

    .venv/bin/python bench/flips_scale.py --edits 50000
    .venv/bin/python bench/flips_scale.py --edits 50000 --db /tmp/flips50k.db --keep

The first run builds the store (about a minute); `--keep` leaves it for a second run.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from store import open_db
from store.db import dumps, utcnow

M_OPERATORS = [  # (id, family, intent, old, new)
    ("M1_ablation_a", "M1", "D", "with fever", ""), ("M1_ablation_b", "M1", "D", "3 days", ""),
    ("M2_age_a", "M2", "D", "45-year-old", "82-year-old"),
    ("M2_age_b", "M2", "D", "45-year-old", "7-year-old"), ("M2_sex", "M2", "D", "man", "woman"),
    ("M3_distractor_a", "M3", "P", "", "He has a cat."),
    ("M3_distractor_b", "M3", "P", "", "His brother has asthma."),
    ("M4_negation_a", "M4", "D", "presents with", "denies"),
    ("M4_negation_b", "M4", "D", "reports", "does not report"),
    ("M5_severity_a", "M5", "D", "mild", "severe"), ("M5_severity_b", "M5", "D", "acute", "chronic"),
    ("M6_temporal_a", "M6", "P", "3 days", "72 hours"),
    ("M6_temporal_b", "M6", "P", "yesterday", "the day before"),
]
F_OPERATORS = [(f"F{f}_{v}", f"F{f}", "D" if f in (1, 2, 3, 5) else "P")
               for f, vs in ((1, ("truncate_25", "truncate_50", "truncate_75")),
                             (2, ("delete_a", "delete_b", "delete_c")),
                             (3, ("substitute_a", "substitute_b", "substitute_c")),
                             (4, ("insert_a", "insert_b")), (5, ("reorder_a", "reorder_b")),
                             (6, ("paraphrase_a", "paraphrase_b")),
                             (7, ("commute_a", "commute_b")))
               for v in vs]
LABELS = ("A", "B", "C", "D")
STEM = ("A 45-year-old man presents with fever and mild abdominal pain for 3 days. He reports "
        "nausea since yesterday. His temperature is 38.9 C, pulse 112/min, blood pressure "
        "104/66 mm Hg. Examination shows tenderness in the right lower quadrant with guarding. "
        "Laboratory studies show a leukocyte count of 16,500/mm3. Which of the following is "
        "the most appropriate next step in management?")
CHAIN = ("Step 1: The patient has fever, right lower quadrant pain and leukocytosis, which "
         "suggests acute appendicitis. Step 2: He is tachycardic but normotensive, so he is "
         "stable enough for imaging. Step 3: A CT scan of the abdomen confirms the diagnosis "
         "before surgery; antibiotics alone are not first line here. Step 4: Therefore the "
         "best next step is imaging followed by appendectomy. Answer: {a}")

PROMPT = ("<|im_start|>system\nYou are a careful clinician. Think step by step, then give "
          "the final answer as 'Answer: X'.<|im_end|>\n<|im_start|>user\n" + STEM
          + "\nA. option A\nB. option B\nC. option C\nD. option D<|im_end|>\n"
          "<|im_start|>assistant\n")
"""A rendered prompt of realistic length: generation rows are as large as real ones."""
TOKEN_IDS = dumps(list(range(1000, 1160)))
"""160 output token ids, as the runner stores them."""


def _probs(rng: random.Random, top: str) -> str:
    weights = [rng.random() * 0.3 for _ in LABELS]
    weights[LABELS.index(top)] += 1.0
    total = sum(weights)
    return dumps({label: w / total for label, w in zip(LABELS, weights)})


def build_store(path: str, n_edits: int, seed: int = 0, arms: int = 2) -> dict:
    """Write one audit with about `n_edits` fired perturbed jobs into a new store at `path`.

    Per arm and item: a CoT baseline and a direct answer; 13 M-block edits (variants shared
    by the arms), 17 F-block continuations of the arm's own chain (variants per arm) and the
    option shuffle; one edit in eight did not fire. A quarter of the answers flip, 3% are
    unparsed; destructive M2/M4/M5 edits get an LLM-judge verdict.

    Returns:
        What was written: audit name, items, edits (fired, generated), flips.
    """
    rng = random.Random(seed)
    per_item = arms * (len(M_OPERATORS) + len(F_OPERATORS) + 1)
    n_items = max(1, round(n_edits / per_item / 0.875))
    db = open_db(path)
    conn = db.conn
    now = utcnow()
    conn.execute("BEGIN IMMEDIATE")
    # Variants point at their source generation and generations at their variant: checked
    # at COMMIT, when both are written.
    conn.execute("PRAGMA defer_foreign_keys = ON")
    dataset_id = conn.execute(
        "INSERT INTO datasets (name, format, created_at) VALUES ('scale', 'medqa', ?)",
        [now]).lastrowid
    audit_id = conn.execute(
        "INSERT INTO audits (name, kind, dataset_id, config_json, status, created_at) "
        "VALUES ('scale-audit', 'audit', ?, '{}', 'finished', ?)", [dataset_id, now]).lastrowid
    arm_ids, model_ids = [], []
    for a in range(arms):
        model_id = conn.execute(
            "INSERT INTO models (name, backend, path, sha256, created_at) VALUES (?, 'fake', ?, "
            "?, ?)", [f"model{a}", f"/nowhere/model{a}.gguf",
                      hashlib.sha256(f"m{a}".encode()).hexdigest(), now]).lastrowid
        model_ids.append(model_id)
        arm_ids.append(conn.execute(
            "INSERT INTO arms (audit_id, label, model_id, template) VALUES (?, ?, ?, "
            "'neutral_cot@1')", [audit_id, f"model{a}/neutral_cot@1", model_id]).lastrowid)
    counter = iter(range(10**9))
    generations, jobs, judgements = [], [], []
    next_gen = [conn.execute("SELECT COALESCE(MAX(id), 0) FROM generations").fetchone()[0] + 1]
    next_var = [conn.execute("SELECT COALESCE(MAX(id), 0) FROM variants").fetchone()[0] + 1]
    variants = []
    fired_edits = flips = 0

    def generation(model_id: int, item_id: int, variant_id: int | None, mode: str,
                   answer: str | None, output: str) -> tuple[int, str]:
        gid = next_gen[0]
        next_gen[0] += 1
        key = hashlib.sha256(f"g{next(counter)}".encode()).hexdigest()
        generations.append((gid, key, model_id, item_id, variant_id, mode, "neutral_cot@1",
                            PROMPT, '{"temperature":0}', 0, dumps(list(LABELS)), output,
                            TOKEN_IDS,
                            answer, "ok" if answer else "no_answer",
                            _probs(rng, answer or "A"), 120, 90, 1.0, now))
        return gid, key

    def variant(item_id: int, op: str, family: str, intent: str, target: str, text: str,
                old: str | None, new: str | None, fired: bool, source: int | None,
                options: str | None = None, gold: str | None = None) -> int:
        vid = next_var[0]
        next_var[0] += 1
        key = hashlib.sha256(f"v{vid}".encode()).hexdigest()
        variants.append((vid, key, item_id, op, family, intent, "Sur", target, 0, source,
                         int(fired), None if fired else "no match", text if fired else None,
                         options, gold, old, new, now))
        return vid

    for n in range(n_items):
        gold = LABELS[n % 4]
        options = {label: f"option {label} for item {n}" for label in LABELS}
        item_id = conn.execute(
            "INSERT INTO items (dataset_id, source_id, kind, question, options_json, gold, "
            "meta_json) VALUES (?, ?, 'mcq', ?, ?, ?, '{}')",
            [dataset_id, f"q{n}", STEM, dumps(options), gold]).lastrowid
        m_variants = []
        for op, family, intent, old, new in M_OPERATORS:
            fired = rng.random() > 0.125
            text = STEM.replace(old, new, 1) if old else STEM + " " + new
            m_variants.append((variant(item_id, op, family, intent, "question", text,
                                       old or None, new or None, fired, None), family, intent,
                               fired, new))
        perm = LABELS[1:] + LABELS[:1]
        shuffled = dumps({label: options[p] for label, p in zip(LABELS, perm)})
        s_variant = variant(item_id, "option_shuffle", "shuffle", None, "options", STEM, None,
                            None, True, None, shuffled, LABELS[perm.index(gold)])
        for arm_id, model_id in zip(arm_ids, model_ids):
            base_answer = gold if rng.random() < 0.6 else rng.choice(LABELS)
            base_id, base_key = generation(model_id, item_id, None, "cot", base_answer,
                                           CHAIN.format(a=base_answer))
            jobs.append((audit_id, arm_id, item_id, None, "baseline", 1, base_key, "done"))
            _, direct_key = generation(model_id, item_id, None, "direct", base_answer, "A")
            jobs.append((audit_id, arm_id, item_id, None, "direct", 1, direct_key, "done"))
            edits = [(v, "m_block", 1, fam, intent, fired, new)
                     for v, fam, intent, fired, new in m_variants]
            for op, family, intent in F_OPERATORS:
                fired = rng.random() > 0.125
                edits.append((variant(item_id, op, family, intent, "chain", CHAIN[:200],
                                      "Step 2", "Step 3", fired, base_id),
                              "f_block", 2, family, intent, fired, None))
            edits.append((s_variant, "shuffle", 1, "shuffle", None, True, None))
            for vid, role, stage, family, intent, fired, new in edits:
                if not fired:
                    jobs.append((audit_id, arm_id, item_id, vid, role, stage, None,
                                 "not_fired"))
                    continue
                fired_edits += 1
                roll = rng.random()
                answer = (None if roll < 0.03 else
                          rng.choice([x for x in LABELS if x != base_answer]) if roll < 0.28
                          else base_answer)
                flips += answer is not None and answer != base_answer
                if role == "shuffle" and answer is not None:
                    answer = LABELS[perm.index(answer)]  # same content: flip as decided
                output = CHAIN.format(a=answer or "?")
                if new and rng.random() < 0.5:
                    output = output.replace("Step 2:", f"Step 2: Given {new},", 1)
                gid, key = generation(model_id, item_id, vid, "continue" if role == "f_block"
                                      else "cot", answer, output)
                jobs.append((audit_id, arm_id, item_id, vid, role, stage, key, "done"))
                if family in ("M2", "M4", "M5") and intent == "D":
                    judgements.append(("chain_registration", "llm_judge:model0/judge@1", gid,
                                       vid, rng.choice(["yes", "no"]), now))
    # Generations before variants: a variant insert finds the generations waiting for it
    # through idx_generations_variant, while the reverse order would scan every variant
    # (variants.source_generation_id has no index) for each generation.
    conn.executemany(
        "INSERT INTO generations (id, key, model_id, item_id, variant_id, mode, template, "
        "prompt, sampler_json, seed, labels_json, output, output_token_ids_json, answer, "
        "parse_status, option_probs_json, tokens_in, tokens_out, latency_s, created_at) "
        "VALUES (" + ", ".join("?" * 20) + ")", generations)
    conn.executemany(
        "INSERT INTO variants (id, key, item_id, operator_id, family, intent, locus, target, "
        "seed, source_generation_id, fired, reason, text, options_json, gold, old, new, "
        "created_at) VALUES (" + ", ".join("?" * 18) + ")", variants)
    conn.executemany(
        "INSERT INTO jobs (audit_id, arm_id, item_id, variant_id, role, stage, "
        "generation_key, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", jobs)
    conn.executemany(
        "INSERT INTO judgements (kind, method, subject_generation_id, variant_id, verdict, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?)", judgements)
    conn.execute("COMMIT")
    conn.close()
    return {"audit": "scale-audit", "items": n_items, "edits": fired_edits, "flips": flips}


def timed(fn, repeats: int) -> tuple[float, object]:
    """Median wall time of `fn()` in ms over `repeats` calls, and its last result."""
    times, result = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), result


def main() -> None:
    """Build (or reuse) the store, then time the inspector's queries."""
    from analysis.flips.case import flip_case
    from analysis.flips.index import index_flips
    from analysis.flips.listing import FlipFilter, list_flips

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--edits", type=int, default=50_000, help="perturbed jobs to write")
    parser.add_argument("--db", default="/tmp/paw-flips-scale.db", help="store file")
    parser.add_argument("--keep", action="store_true", help="reuse the store if it exists")
    parser.add_argument("--repeats", type=int, default=7, help="timed calls per figure")
    args = parser.parse_args()
    path = Path(args.db)
    if not (args.keep and path.exists()):
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        started = time.perf_counter()
        built = build_store(str(path), args.edits)
        print(f"built {path}: {built} in {time.perf_counter() - started:.1f} s")
    db = open_db(path)
    audit = "scale-audit"
    audit_id = db.execute("SELECT id FROM audits WHERE name = ?", [audit]).fetchone()[0]
    edits = db.execute("SELECT COUNT(*) FROM jobs WHERE audit_id = ? AND status = 'done' AND "
                       "role IN ('m_block', 'f_block', 'shuffle')", [audit_id]).fetchone()[0]
    print(f"audit {audit}: {edits} answered edits")
    indexed = db.execute("SELECT COUNT(*) FROM flip_index").fetchone()[0]
    if indexed == 0:
        started = time.perf_counter()
        added = index_flips(db, audit_id)
        print(f"one-time index of the audit (flip_index, what the first list after the "
              f"audit pays): {added} rows in {(time.perf_counter() - started) * 1000:.0f} ms")
    db.conn.close()

    # A fresh connection, as a UI opening the store would have (cold statement cache).
    db = open_db(path)
    started = time.perf_counter()
    first = list_flips(db, audit, FlipFilter(), limit=50)
    print(f"first page, new connection: {(time.perf_counter() - started) * 1000:.1f} ms "
          f"({first.total} flips)")
    cases = [
        ("first page (flips)", FlipFilter(), 0, "id"),
        ("family M4", FlipFilter(families=("M4",)), 0, "id"),
        ("intent P", FlipFilter(intents=("P",)), 0, "id"),
        ("arm model1", FlipFilter(arms=("model1/neutral_cot@1",)), 0, "id"),
        ("chain not updated", FlipFilter(chain_updated=False), 0, "id"),
        ("judge says no", FlipFilter(judge="no"), 0, "id"),
        ("no judge verdict", FlipFilter(judge="none"), 0, "id"),
        ("free text 'negation'", FlipFilter(text="negation"), 0, "id"),
        ("free text in question 'guarding'", FlipFilter(text="guarding"), 0, "id"),
        ("all edits, by JSD", FlipFilter(flipped=None), 0, "jsd"),
        ("deep page (offset 10,000)", FlipFilter(flipped=None), 10_000, "id"),
        ("F block, destructive, kept", FlipFilter(flipped=False, blocks=("F",),
                                                   intents=("D",)), 0, "family"),
    ]
    print(f"{'query':<36} {'median ms':>9}  rows/total")
    for label, flt, offset, order in cases:
        ms, page = timed(lambda f=flt, o=offset, s=order: list_flips(
            db, audit, f, limit=50, offset=o, order=s), args.repeats)
        print(f"{label:<36} {ms:9.1f}  {len(page.rows)}/{page.total}")
    case_id = first.rows[0].id
    ms, case = timed(lambda: flip_case(db, case_id), args.repeats)
    print(f"{'flip_case (one case)':<36} {ms:9.1f}  {case.operator_id}")
    f_case = list_flips(db, audit, FlipFilter(blocks=("F",)), limit=1).rows[0].id
    ms, case = timed(lambda: flip_case(db, f_case), args.repeats)
    print(f"{'flip_case (F-block case)':<36} {ms:9.1f}  {case.operator_id}")
    print("targets (issue 12): first paint <= 300 ms, a filter change <= 100 ms")


if __name__ == "__main__":
    main()
