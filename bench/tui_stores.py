"""Stores for `bench/tui_screens.py`: a demo-size audit run through the real engine, a large
synthetic audit, and annotation sets with a chosen number of labels per rater.

- `demo_store`: the demo set imported (`import_demo`) and the `paw demo` audit (its items,
  operators, token budget and the chain-registration judge) run by `run_audit` through the
  planner, the runner and the flip index — on the scripted fake backend instead of
  SmolLM2 (which takes ~70 s). The fake answers by a hash of the prompt, so edits flip;
- `flips_store`: `bench/flips_scale.py`'s audit of about N edits through the real schema,
  with the flip index brought up to date as a finished run leaves it;
- `annotation_store`: `bench/annotation_scale.py`'s set (real API: `create_set` naming
  alice and bob, every label by `record_label`, signed and sealed), labelled by both raters
  up to N labels each in their own orders, with cases left for both.
"""

from __future__ import annotations

import hashlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("PAW_SCRYPT_LOG2N", "10")  # registration cost is not what is measured

LETTERS = "ABCD"


def _letter(prompt: str) -> str:
    return LETTERS[hashlib.sha256(prompt.encode()).digest()[0] % 4]


def _responder(prompt: str, sampler) -> str:
    """Judge prompts 'Answer: No', direct prompts a letter, CoT a 3-step chain + a letter
    (by a hash of the prompt, so about three edits in four change the answer)."""
    if prompt.rstrip().endswith("Assistant:") and "Does the reasoning use the edit?" in \
            prompt[-400:]:
        return "Answer: No"
    if "Answer with" in prompt[-200:]:
        return f" {_letter(prompt)}"
    # Short: the fake's tokens are characters, and the demo's budget is 112 tokens.
    return ("Step 1: 3 findings.\nStep 2: Fever and pain.\nStep 3: So this one.\n"
            f"Answer: {_letter(prompt)}")


def demo_store(path: str) -> int:
    """The `paw demo` audit on the fake backend in a new store at `path`; its audit id."""
    from store.db import open_db
    from tests.fakes import fake_engine, fake_model_record
    from workbench.audit import AuditSpec, run_audit
    from workbench.perturb import resolve_operators
    from workbench.cli.audit import DEMO_ITEMS, DEMO_MAX_TOKENS, DEMO_OPERATORS
    from workbench.datasets.demo import DEMO_DATASET, import_demo

    db = open_db(path, create=True)
    try:
        import_demo(db)
        model = fake_model_record(db)
        spec = AuditSpec(dataset=DEMO_DATASET, models=(model.name,),
                         operators=resolve_operators(DEMO_OPERATORS), item_ids=DEMO_ITEMS,
                         max_tokens=DEMO_MAX_TOKENS)
        outcome = run_audit(db, spec, engine=fake_engine(db, _responder), judge=True,
                            judge_model=model)
        return int(outcome.audit_id)
    finally:
        db.conn.close()


def flips_store(path: str, edits: int) -> int:
    """`bench/flips_scale.py`'s audit of about `edits` edits, flip index up to date."""
    from analysis.flips.index import index_flips
    from bench.flips_scale import build_store
    from store.db import open_db

    build_store(path, edits)
    db = open_db(path)
    try:
        index_flips(db, 1)  # what a run does when it ends (`run_staged`)
    finally:
        db.conn.close()
    return 1


def count_edits(path: str, audit_id: int) -> int:
    """Perturbed jobs of the audit that produced an answer (what the inspector lists)."""
    from store.db import open_db

    db = open_db(path)
    try:
        return db.execute("SELECT COUNT(*) FROM jobs WHERE audit_id = ? AND status = 'done' "
                          "AND variant_id IS NOT NULL", [audit_id]).fetchone()[0]
    finally:
        db.conn.close()


@dataclass
class LabelledSet:
    """An annotation set with `labels` per rater; `spare_alice`: cases alice has not
    labelled (the next-case bench completes them); `spare_bob`: cases alice labelled and
    bob did not (each label bob adds there pairs one more gold shift)."""

    path: str
    labels: int
    cases: int
    spare_alice: list[str]
    spare_bob: list[str]


def annotation_store(path: str, labels_per_rater: int) -> LabelledSet:
    """`bench/annotation_scale.py`'s set, both raters labelled to `labels_per_rater`."""
    from annotate.events import start_session
    from annotate.sets.annotation_set import rater_queue
    from bench.annotation_scale import SET, build, label_until
    from store.db import open_db

    alice, bob, _ = build(path, labels_per_rater)
    db = open_db(path)
    try:
        queues, positions = [], []
        for rater, person in enumerate((alice, bob)):
            queue = rater_queue(db, SET, person)
            session = start_session(db, person, SET)
            positions.append(label_until(db, person, rater, session, queue, 0,
                                         labels_per_rater, {"n": 0}, None))
            queues.append(queue)
    finally:
        db.conn.close()
    alice_done = {v.code for v in queues[0][:positions[0]]}
    bob_done = {v.code for v in queues[1][:positions[1]]}
    return LabelledSet(path, labels_per_rater, len(queues[0]),
                       [v.code for v in queues[0][positions[0]:]],
                       [v.code for v in queues[1] if v.code in alice_done - bob_done])
