"""Audits, arms, jobs and run sessions in the store: the plan a runner works through.

An audit (kind 'run' for `paw run`, 'audit' for `paw audit`) has arms (model × template);
each arm has jobs, one per (item, role, variant, sample_index). A job points at the
generation that answers it through `generation_key`; it is 'done' once that key is stored.
Everything here is idempotent, so re-planning the same audit adds nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import sqlite_utils

from store.db import dumps, inserted_id, loads, transaction, utcnow
from store.errors import NotFound, UserError

JOB_STATUSES = ("pending", "done", "not_fired", "error")
"""Values of `jobs.status`; 'not_fired' jobs have no generation and count in no rate."""


@dataclass(frozen=True)
class Audit:
    """One planned audit or `paw run` (an `audits` row)."""

    id: int
    name: str
    kind: str
    dataset_id: int
    config: dict[str, Any]
    status: str
    created_at: str


@dataclass(frozen=True)
class Arm:
    """One model × prompt template of an audit (an `arms` row)."""

    id: int
    audit_id: int
    label: str
    model_id: int
    template: str


@dataclass(frozen=True)
class JobSpec:
    """A job to plan: what to generate for one arm and item."""

    arm_id: int
    item_id: int
    role: str
    stage: int = 1
    variant_id: int | None = None
    sample_index: int = 0
    seed: int | None = None
    generation_key: str | None = None


@dataclass(frozen=True)
class Job:
    """A planned job (a `jobs` row)."""

    id: int
    audit_id: int
    arm_id: int
    item_id: int
    variant_id: int | None
    role: str
    stage: int
    sample_index: int
    seed: int | None
    generation_key: str | None
    status: str


# ---------------------------------------------------------------- audits


def _audit(row: tuple) -> Audit:
    return Audit(id=row[0], name=row[1], kind=row[2], dataset_id=row[3],
                 config=loads(row[4]), status=row[5], created_at=row[6])


_AUDIT_COLUMNS = "id, name, kind, dataset_id, config_json, status, created_at"


def create_audit(
    db: sqlite_utils.Database, name: str, kind: str, dataset_id: int, config: dict[str, Any]
) -> Audit:
    """The audit called `name`, created if new.

    Args:
        db: the store.
        name: unique name; `paw run` derives it from its settings so a re-run finds it.
        kind: 'audit' or 'run'.
        dataset_id: the dataset the audit draws items from.
        config: the settings that define the plan (stored as canonical JSON).

    Raises:
        UserError: an audit of that name exists with another kind, dataset or config.
    """
    row = db.execute(f"SELECT {_AUDIT_COLUMNS} FROM audits WHERE name = ?", [name]).fetchone()
    if row is not None:
        audit = _audit(row)
        if (audit.kind, audit.dataset_id, dumps(audit.config)) != (kind, dataset_id,
                                                                     dumps(config)):
            raise UserError(
                f"audit {name!r} already exists with different settings; choose another name"
            )
        return audit
    db.execute(
        "INSERT INTO audits (name, kind, dataset_id, config_json, status, created_at) "
        "VALUES (?, ?, ?, ?, 'planned', ?)",
        [name, kind, dataset_id, dumps(config), utcnow()],
    )
    return get_audit(db, name)


def get_audit(db: sqlite_utils.Database, name: str) -> Audit:
    """The audit called `name`.

    Raises:
        NotFound: no such audit (the message lists the known names).
    """
    row = db.execute(f"SELECT {_AUDIT_COLUMNS} FROM audits WHERE name = ?", [name]).fetchone()
    if row is None:
        names = [r[0] for r in db.execute("SELECT name FROM audits ORDER BY name")]
        raise NotFound(f"no audit named {name!r}; known audits: {', '.join(names) or 'none'}")
    return _audit(row)


def list_audits(db: sqlite_utils.Database, kind: str | None = None) -> list[Audit]:
    """Every audit (of one kind if given), oldest first."""
    sql = f"SELECT {_AUDIT_COLUMNS} FROM audits"
    params: list = []
    if kind is not None:
        sql += " WHERE kind = ?"
        params.append(kind)
    return [_audit(r) for r in db.execute(sql + " ORDER BY id", params)]


def set_audit_status(db: sqlite_utils.Database, audit_id: int, status: str) -> None:
    """Record an audit's status ('planned', 'running', 'finished', 'stopped', …)."""
    db.execute("UPDATE audits SET status = ? WHERE id = ?", [status, audit_id])


# ---------------------------------------------------------------- arms


def add_arm(
    db: sqlite_utils.Database, audit_id: int, label: str, model_id: int, template: str
) -> Arm:
    """The arm `label` of an audit, created if new.

    Raises:
        UserError: the label exists with another model or template.
    """
    row = db.execute(
        "SELECT id, audit_id, label, model_id, template FROM arms "
        "WHERE audit_id = ? AND label = ?", [audit_id, label],
    ).fetchone()
    if row is None:
        db.execute(
            "INSERT INTO arms (audit_id, label, model_id, template) VALUES (?, ?, ?, ?)",
            [audit_id, label, model_id, template],
        )
        return add_arm(db, audit_id, label, model_id, template)
    arm = Arm(*row)
    if (arm.model_id, arm.template) != (model_id, template):
        raise UserError(f"arm {label!r} already exists with another model or template")
    return arm


def list_arms(db: sqlite_utils.Database, audit_id: int) -> list[Arm]:
    """The arms of an audit, in creation order."""
    return [Arm(*r) for r in db.execute(
        "SELECT id, audit_id, label, model_id, template FROM arms WHERE audit_id = ? "
        "ORDER BY id", [audit_id])]


# ---------------------------------------------------------------- jobs

_JOB_COLUMNS = (
    "id, audit_id, arm_id, item_id, variant_id, role, stage, sample_index, seed, "
    "generation_key, status"
)


def add_jobs(db: sqlite_utils.Database, audit_id: int, specs: Iterable[JobSpec]) -> int:
    """Plan jobs, skipping any already planned; one transaction.

    A job is identified by (audit, arm, item, role, variant, sample_index). SQLite's
    UNIQUE constraint treats NULL variants as distinct, so the existence check here
    (`variant_id IS ?`) is what prevents duplicates; BEGIN IMMEDIATE serialises it
    against other writers. An existing job with no key gets the spec's key.

    Returns:
        How many jobs were new.
    """
    added = 0
    with transaction(db) as conn:
        for spec in specs:
            row = conn.execute(
                "SELECT id, generation_key FROM jobs WHERE audit_id = ? AND arm_id = ? "
                "AND item_id = ? AND role = ? AND variant_id IS ? AND sample_index = ?",
                [audit_id, spec.arm_id, spec.item_id, spec.role, spec.variant_id,
                 spec.sample_index],
            ).fetchone()
            if row is not None:
                if row[1] is None and spec.generation_key is not None:
                    conn.execute("UPDATE jobs SET generation_key = ? WHERE id = ?",
                                 [spec.generation_key, row[0]])
                continue
            conn.execute(
                "INSERT INTO jobs (audit_id, arm_id, item_id, variant_id, role, stage, "
                "sample_index, seed, generation_key, status) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending')",
                [audit_id, spec.arm_id, spec.item_id, spec.variant_id, spec.role, spec.stage,
                 spec.sample_index, spec.seed, spec.generation_key],
            )
            added += 1
    return added


def list_jobs(
    db: sqlite_utils.Database, audit_id: int, *, status: str | None = None,
    stage: int | None = None, role: str | None = None, arm_id: int | None = None,
) -> list[Job]:
    """Jobs of an audit in plan order, optionally filtered."""
    sql = f"SELECT {_JOB_COLUMNS} FROM jobs WHERE audit_id = ?"
    params: list = [audit_id]
    for column, value in (("status", status), ("stage", stage), ("role", role),
                          ("arm_id", arm_id)):
        if value is not None:
            sql += f" AND {column} = ?"
            params.append(value)
    return [Job(*r) for r in db.execute(sql + " ORDER BY id", params)]


def pending_jobs(db: sqlite_utils.Database, audit_id: int, stage: int | None = None) -> list[Job]:
    """Jobs of an audit still waiting for their generation."""
    return list_jobs(db, audit_id, status="pending", stage=stage)


def set_job_keys(db: sqlite_utils.Database, keys: Sequence[tuple[int, str]]) -> None:
    """Record each job's generation key: pairs of (job id, key); one transaction."""
    with transaction(db) as conn:
        conn.executemany("UPDATE jobs SET generation_key = ? WHERE id = ?",
                         [(key, job_id) for job_id, key in keys])


def mark_status(db: sqlite_utils.Database, job_ids: Iterable[int], status: str) -> None:
    """Set the status of the given jobs; one transaction."""
    if status not in JOB_STATUSES:
        raise ValueError(f"job status must be one of {JOB_STATUSES}, got {status!r}")
    with transaction(db) as conn:
        conn.executemany("UPDATE jobs SET status = ? WHERE id = ?",
                         [(status, job_id) for job_id in job_ids])


def mark_done(db: sqlite_utils.Database, job_ids: Iterable[int]) -> None:
    """Mark the given jobs done."""
    mark_status(db, job_ids, "done")


def sync_done(db: sqlite_utils.Database, audit_id: int) -> int:
    """Mark done every pending job of the audit whose generation is stored (not as error).

    This is how a killed run's jobs catch up: generations are stored first, job
    statuses follow, and this one statement reconciles them.

    Returns:
        How many jobs changed to 'done'.
    """
    cursor = db.execute(
        "UPDATE jobs SET status = 'done' WHERE audit_id = ? AND status = 'pending' "
        "AND generation_key IN (SELECT key FROM generations WHERE parse_status != 'error')",
        [audit_id],
    )
    return int(cursor.rowcount)


def job_counts(db: sqlite_utils.Database, audit_id: int) -> dict[str, int]:
    """Number of jobs of the audit per status."""
    return {r[0]: r[1] for r in db.execute(
        "SELECT status, COUNT(*) FROM jobs WHERE audit_id = ? GROUP BY status", [audit_id])}


# ---------------------------------------------------------------- sessions


def start_session(
    db: sqlite_utils.Database, command: str, *, audit_id: int | None = None,
    settings: dict[str, Any] | None = None, versions: dict[str, Any] | None = None,
) -> int:
    """Record that a command started working (a `sessions` row, status 'running').

    Returns:
        The session id, for `finish_session`.
    """
    import os
    import socket

    now = utcnow()
    cursor = db.execute(
        "INSERT INTO sessions (audit_id, command, settings_json, versions_json, started_at, "
        "status, n_generated, pid, host, heartbeat_at) "
        "VALUES (?, ?, ?, ?, ?, 'running', 0, ?, ?, ?)",
        [audit_id, command, dumps(settings or {}), dumps(versions or {}), now, os.getpid(),
         socket.gethostname(), now],
    )
    return inserted_id(cursor)


def heartbeat(db: sqlite_utils.Database, session_id: int) -> None:
    """Record that a session's process is still working (see `store.runs.run_status`)."""
    db.execute("UPDATE sessions SET heartbeat_at = ? WHERE id = ?", [utcnow(), session_id])


def finish_session(
    db: sqlite_utils.Database, session_id: int, status: str, n_generated: int
) -> None:
    """Record how a session ended ('finished', 'stopped', 'failed') and what it generated.

    A session left 'running' with no `finished_at` was killed.
    """
    db.execute(
        "UPDATE sessions SET status = ?, n_generated = ?, finished_at = ? WHERE id = ?",
        [status, n_generated, utcnow(), session_id],
    )
