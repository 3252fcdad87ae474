"""Generations in the store: content-addressed by key, inserted one per transaction, looked up."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import sqlite_utils

from store.db import dumps, loads, transaction, utcnow

PARSE_STATUSES = ("ok", "no_answer", "empty", "garbage", "error")
"""Values of `generations.parse_status` (see docs/runner.md for what each means)."""

RETRYABLE_STATUS = "error"
"""A generation stored with this status is generated again on the next run."""

_CHUNK = 500  # keys per IN (...) query; far below SQLite's variable limit


@dataclass(frozen=True)
class NewGeneration:
    """Everything the runner stores about one finished generation."""

    key: str
    model_id: int
    mode: str
    template: str
    prompt: str
    sampler: dict[str, Any]
    parse_status: str
    item_id: int | None = None
    variant_id: int | None = None
    prefix: str | None = None
    prefix_token_ids: tuple[int, ...] | None = None
    seed: int | None = None
    labels: tuple[str, ...] | None = None
    output: str | None = None
    output_token_ids: tuple[int, ...] | None = None
    answer: str | None = None
    option_probs: dict[str, float] | None = None
    option_logits: dict[str, Any] | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    latency_s: float | None = None
    finish_reason: str | None = None
    error: str | None = None
    engine: str | None = None


@dataclass(frozen=True)
class Generation(NewGeneration):
    """A stored generation (a `generations` row)."""

    id: int = 0
    created_at: str = ""


def _json_or_none(value: Any) -> str | None:
    return None if value is None else dumps(list(value) if isinstance(value, tuple) else value)


def insert_generation(db: sqlite_utils.Database, gen: NewGeneration) -> int:
    """Store one generation in its own transaction; durable when this returns.

    The key is UNIQUE, so storing the same key twice never makes a duplicate: if a
    generation with this key exists the existing id is returned, except that a stored
    `error` row is replaced (errors are retried, not cached).

    Returns:
        The row id of the stored generation.
    """
    values = [
        gen.key, gen.model_id, gen.item_id, gen.variant_id, gen.mode, gen.template,
        gen.prompt, gen.prefix, _json_or_none(gen.prefix_token_ids), dumps(gen.sampler),
        gen.seed, _json_or_none(gen.labels), gen.output, _json_or_none(gen.output_token_ids),
        gen.answer, gen.parse_status, _json_or_none(gen.option_probs),
        _json_or_none(gen.option_logits), gen.tokens_in, gen.tokens_out, gen.latency_s,
        gen.finish_reason, gen.error, utcnow(), gen.engine,
    ]
    columns = (
        "key, model_id, item_id, variant_id, mode, template, prompt, prefix, "
        "prefix_token_ids_json, sampler_json, seed, labels_json, output, output_token_ids_json, "
        "answer, parse_status, option_probs_json, option_logits_json, tokens_in, tokens_out, "
        "latency_s, finish_reason, error, created_at, engine"
    )
    assignments = ", ".join(
        f"{c.strip()} = excluded.{c.strip()}" for c in columns.split(",") if c.strip() != "key"
    )
    with transaction(db) as conn:
        conn.execute(
            f"INSERT INTO generations ({columns}) VALUES ({', '.join('?' * len(values))}) "
            f"ON CONFLICT(key) DO UPDATE SET {assignments} "
            f"WHERE generations.parse_status = '{RETRYABLE_STATUS}'",
            values,
        )
        row = conn.execute("SELECT id FROM generations WHERE key = ?", [gen.key]).fetchone()
    return int(row[0])


def _chunks(keys: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(keys), _CHUNK):
        yield keys[start:start + _CHUNK]


def stored_keys(
    db: sqlite_utils.Database, keys: Iterable[str], *, include_errors: bool = False
) -> set[str]:
    """Which of `keys` are stored (by default not counting `error` rows, which are retried)."""
    wanted = list(dict.fromkeys(keys))
    found: set[str] = set()
    status_filter = "" if include_errors else f" AND parse_status != '{RETRYABLE_STATUS}'"
    for chunk in _chunks(wanted):
        marks = ", ".join("?" * len(chunk))
        found.update(
            r[0] for r in db.execute(
                f"SELECT key FROM generations WHERE key IN ({marks}){status_filter}", chunk
            )
        )
    return found


def _from_row(row: dict) -> Generation:
    prefix_ids = loads(row["prefix_token_ids_json"])
    output_ids = loads(row["output_token_ids_json"])
    labels = loads(row["labels_json"])
    return Generation(
        id=row["id"], key=row["key"], model_id=row["model_id"], item_id=row["item_id"],
        variant_id=row["variant_id"], mode=row["mode"], template=row["template"],
        prompt=row["prompt"], prefix=row["prefix"],
        prefix_token_ids=None if prefix_ids is None else tuple(prefix_ids),
        sampler=loads(row["sampler_json"]), seed=row["seed"],
        labels=None if labels is None else tuple(labels), output=row["output"],
        output_token_ids=None if output_ids is None else tuple(output_ids),
        answer=row["answer"], parse_status=row["parse_status"],
        option_probs=loads(row["option_probs_json"]),
        option_logits=loads(row["option_logits_json"]), tokens_in=row["tokens_in"],
        tokens_out=row["tokens_out"], latency_s=row["latency_s"],
        finish_reason=row["finish_reason"], error=row["error"], created_at=row["created_at"],
        engine=row.get("engine"),
    )


def get_generation(db: sqlite_utils.Database, key: str) -> Generation | None:
    """The generation stored under `key`, or None."""
    rows = list(db.query("SELECT * FROM generations WHERE key = ?", [key]))
    return _from_row(rows[0]) if rows else None


def get_generation_by_id(db: sqlite_utils.Database, generation_id: int) -> Generation | None:
    """The generation with row id `generation_id`, or None."""
    rows = list(db.query("SELECT * FROM generations WHERE id = ?", [generation_id]))
    return _from_row(rows[0]) if rows else None


def get_generations(db: sqlite_utils.Database, keys: Iterable[str]) -> dict[str, Generation]:
    """The stored generations among `keys`, by key (missing keys are absent)."""
    found: dict[str, Generation] = {}
    for chunk in _chunks(list(dict.fromkeys(keys))):
        marks = ", ".join("?" * len(chunk))
        for row in db.query(f"SELECT * FROM generations WHERE key IN ({marks})", chunk):
            gen = _from_row(row)
            found[gen.key] = gen
    return found
