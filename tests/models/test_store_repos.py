"""The model, generation and job repositories: idempotent, no duplicates, errors retried."""

from __future__ import annotations

import pytest

from store.errors import NotFound, UserError
from store.generations import NewGeneration, get_generation, insert_generation, stored_keys
from store.jobs import (
    JobSpec,
    add_arm,
    add_jobs,
    create_audit,
    finish_session,
    job_counts,
    list_jobs,
    pending_jobs,
    start_session,
    sync_done,
)
from store.models import add_model, get_model, list_models
from tests.models.conftest import add_vignettes


def _model(db, name="m", sha="aa"):
    return add_model(db, name=name, path=f"/x/{name}.gguf", sha256=sha, size_bytes=3)


def test_models_register_idempotently_and_refuse_name_reuse(db) -> None:
    first = _model(db)
    assert _model(db).id == first.id and len(list_models(db)) == 1
    with pytest.raises(UserError, match="already registered"):
        _model(db, sha="bb")
    with pytest.raises(NotFound, match="known models: m"):
        get_model(db, "other")


def _gen(model_id: int, key: str, status: str = "ok", output: str = "x") -> NewGeneration:
    return NewGeneration(key=key, model_id=model_id, mode="cot", template="t@1", prompt="p",
                         sampler={"seed": 0}, parse_status=status, output=output,
                         output_token_ids=(1, 2), option_probs={"A": 1.0})


def test_generation_key_is_unique_and_errors_are_replaced(db) -> None:
    model = _model(db)
    first = insert_generation(db, _gen(model.id, "k1"))
    assert insert_generation(db, _gen(model.id, "k1", output="other")) == first
    assert get_generation(db, "k1").output == "x"  # the stored one is kept
    failed = insert_generation(db, _gen(model.id, "k2", status="error", output=""))
    assert stored_keys(db, ["k1", "k2", "k3"]) == {"k1"}  # error rows do not count as done
    assert stored_keys(db, ["k2"], include_errors=True) == {"k2"}
    assert insert_generation(db, _gen(model.id, "k2", output="retried")) == failed
    row = get_generation(db, "k2")
    assert (row.parse_status, row.output, row.output_token_ids) == ("ok", "retried", (1, 2))
    assert db.execute("SELECT COUNT(*) FROM generations").fetchone()[0] == 2


def test_jobs_are_idempotent_even_with_null_variant(db) -> None:
    items = add_vignettes(db)
    model = _model(db)
    audit = create_audit(db, "a", "run", items[0].dataset_id, {"x": 1})
    assert create_audit(db, "a", "run", items[0].dataset_id, {"x": 1}).id == audit.id
    with pytest.raises(UserError, match="different settings"):
        create_audit(db, "a", "run", items[0].dataset_id, {"x": 2})
    arm = add_arm(db, audit.id, "m", model.id, "t@1")
    specs = [JobSpec(arm_id=arm.id, item_id=i.id, role="baseline", generation_key=f"k{i.id}")
             for i in items]
    assert add_jobs(db, audit.id, specs) == 3
    # SQLite's UNIQUE lets NULL variant_ids repeat; add_jobs must not.
    assert add_jobs(db, audit.id, specs) == 0
    assert len(list_jobs(db, audit.id)) == 3
    insert_generation(db, _gen(model.id, f"k{items[0].id}"))
    insert_generation(db, _gen(model.id, f"k{items[1].id}", status="error"))
    assert sync_done(db, audit.id) == 1  # the error generation leaves its job pending
    assert job_counts(db, audit.id) == {"done": 1, "pending": 2}
    assert [j.item_id for j in pending_jobs(db, audit.id)] == [items[1].id, items[2].id]
    session = start_session(db, "run", audit_id=audit.id, settings={"a": 1})
    finish_session(db, session, "finished", 1)
    row = db.execute("SELECT status, n_generated, finished_at FROM sessions").fetchone()
    assert row[0] == "finished" and row[1] == 1 and row[2]
