"""What is stored, as a list of runs: every audit/study with its status, counts and duration.

One query module for `paw audits` and the UI's Runs screen. The status shown to a user is
derived, not trusted from `audits.status` alone, because a killed process cannot write
"interrupted" on its way out:

- **running**: a session of the audit is `running` and its process is alive — on this host
  its pid exists (`os.kill(pid, 0)`); on another host (a shared file) its heartbeat is
  younger than `STALE_AFTER_S`;
- **interrupted**: a session was left `running` by a process that is gone, or the last
  session ended `stopped` (cancelled) or `failed`: resumable, what finished is stored;
- **finished** / **planned**: as recorded.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import datetime, timezone

import sqlite_utils

from store.db import loads
from store.errors import NotFound

STALE_AFTER_S = 120.0
"""A session on another host with no heartbeat for this long counts as gone."""

STATUSES: tuple[str, ...] = ("planned", "running", "finished", "interrupted")
"""The statuses a user sees (`run_status`)."""


@dataclass(frozen=True)
class RunInfo:
    """One audit, run or study as listed by `paw audits` and the Runs screen.

    Attributes:
        id, name, kind: the `audits` row.
        dataset: dataset name.
        models: model names of its arms, in arm order (distinct).
        status: 'planned', 'running', 'finished' or 'interrupted' (see module doc).
        jobs_done: jobs with their generation stored.
        jobs_total: jobs that need a generation (not-fired ones excluded).
        not_fired: jobs whose edit did not fire.
        generations: distinct generations its done jobs point at.
        wall_s: seconds spent in its sessions (a killed session counts to its heartbeat).
        created_at: when it was planned.
        last_session: command, status, pid and host of its latest session (or None).
    """

    id: int
    name: str
    kind: str
    dataset: str
    models: tuple[str, ...]
    status: str
    jobs_done: int
    jobs_total: int
    not_fired: int
    generations: int
    wall_s: float
    created_at: str
    last_session: dict | None

    def as_dict(self) -> dict:
        """JSON-ready form (`paw audits --json`)."""
        return {"id": self.id, "name": self.name, "kind": self.kind, "dataset": self.dataset,
                "models": list(self.models), "status": self.status,
                "jobs_done": self.jobs_done, "jobs_total": self.jobs_total,
                "not_fired": self.not_fired, "generations": self.generations,
                "wall_s": round(self.wall_s, 1), "created_at": self.created_at,
                "last_session": self.last_session}


def _parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def process_alive(pid: int | None, host: str | None, heartbeat_at: str | None,
                  now: datetime | None = None) -> bool:
    """Whether the process of a session still runs (see the module doc for the rule).

    Args:
        pid, host, heartbeat_at: the session's columns (NULL for sessions older than m004:
            then only the heartbeat-free rule applies and the session counts as gone).
        now: the current time (tests pass one).
    """
    if pid is None:
        return False
    if host == socket.gethostname():
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # alive, owned by someone else
            return True
        except OSError:
            return False
        return True
    beat = _parse_time(heartbeat_at)
    now = now or datetime.now(timezone.utc)
    return beat is not None and (now - beat).total_seconds() < STALE_AFTER_S


def run_status(recorded: str, sessions: list[dict], complete: bool = False) -> str:
    """The status a user sees, from `audits.status` and the audit's sessions (newest last).

    Args:
        recorded: `audits.status` ('planned', 'running', 'finished', 'stopped', 'failed').
        sessions: rows with `status`, `pid`, `host`, `heartbeat_at`.
        complete: every job that needs a generation has one (used only when no session
            was ever recorded, e.g. a store written by another tool).
    """
    live = [s for s in sessions if s["status"] == "running"
            and process_alive(s.get("pid"), s.get("host"), s.get("heartbeat_at"))]
    if live:
        return "running"
    if sessions:
        return "finished" if sessions[-1]["status"] == "finished" else "interrupted"
    if recorded == "finished" or complete:
        return "finished"
    return "planned" if recorded == "planned" else "interrupted"


def _wall_seconds(session: dict) -> float:
    start = _parse_time(session["started_at"])
    end = _parse_time(session["finished_at"]) or _parse_time(session.get("heartbeat_at"))
    if start is None or end is None:
        return 0.0
    return max(0.0, (end - start).total_seconds())


_RUN_SQL = """
SELECT a.id, a.name, a.kind, d.name AS dataset, a.status, a.created_at,
       (SELECT COUNT(*) FROM jobs j WHERE j.audit_id = a.id AND j.status = 'done') AS done,
       (SELECT COUNT(*) FROM jobs j WHERE j.audit_id = a.id AND j.status != 'not_fired')
           AS total,
       (SELECT COUNT(*) FROM jobs j WHERE j.audit_id = a.id AND j.status = 'not_fired')
           AS not_fired,
       (SELECT COUNT(DISTINCT j.generation_key) FROM jobs j
            WHERE j.audit_id = a.id AND j.status = 'done') AS generations
FROM audits a JOIN datasets d ON d.id = a.dataset_id
"""


def _info(db: sqlite_utils.Database, row: dict) -> RunInfo:
    models = tuple(dict.fromkeys(r[0] for r in db.execute(
        "SELECT m.name FROM arms r JOIN models m ON m.id = r.model_id WHERE r.audit_id = ? "
        "ORDER BY r.id", [row["id"]])))
    sessions = list(db.query(
        "SELECT command, status, pid, host, heartbeat_at, started_at, finished_at "
        "FROM sessions WHERE audit_id = ? ORDER BY id", [row["id"]]))
    last = None
    if sessions:
        s = sessions[-1]
        last = {"command": s["command"], "status": s["status"], "pid": s["pid"],
                "host": s["host"], "started_at": s["started_at"],
                "finished_at": s["finished_at"]}
    return RunInfo(
        id=row["id"], name=row["name"], kind=row["kind"], dataset=row["dataset"],
        models=models,
        status=run_status(row["status"], sessions,
                          complete=row["total"] > 0 and row["done"] == row["total"]),
        jobs_done=row["done"], jobs_total=row["total"], not_fired=row["not_fired"],
        generations=row["generations"], wall_s=sum(_wall_seconds(s) for s in sessions),
        created_at=row["created_at"], last_session=last)


def list_runs(db: sqlite_utils.Database, kind: str | None = None) -> list[RunInfo]:
    """Every audit, run and study (of one kind if given), oldest first."""
    sql, params = _RUN_SQL, []
    if kind is not None:
        sql += " WHERE a.kind = ?"
        params.append(kind)
    return [_info(db, row) for row in db.query(sql + " ORDER BY a.id", params)]


def find_run(db: sqlite_utils.Database, ref: str | int | None,
             kind: str | tuple[str, ...] | None = None) -> RunInfo:
    """One run by name or id (None: the latest, of `kind` if given; a `paw run` only when
    nothing else is stored).

    Raises:
        NotFound: no such run (the message lists what exists).
    """
    kinds = (kind,) if isinstance(kind, str) else kind
    sql, params = _RUN_SQL, []
    where = []
    if kinds:
        where.append(f"a.kind IN ({', '.join('?' for _ in kinds)})")
        params += list(kinds)
    if ref is not None:
        text = str(ref).strip()
        where.append("(a.name = ? OR CAST(a.id AS TEXT) = ?)")
        params += [text, text]
    if where:
        sql += " WHERE " + " AND ".join(where)
    # By name before by id; with no ref the latest, preferring any study or audit over a
    # plain `paw run`.
    row = next(iter(db.query(
        sql + " ORDER BY (a.name = ?) DESC, (a.kind != 'run') DESC, a.id DESC LIMIT 1",
        params + [str(ref)])), None)
    if row is None:
        known = [f"{r['id']} {r['name']} ({r['kind']})" for r in db.query(
            "SELECT id, name, kind FROM audits ORDER BY id")]
        what = "/".join(kinds) if kinds else "audit, run or study"
        subject = f"no {what} {ref!r}" if ref is not None else f"no {what} stored yet"
        raise NotFound(f"{subject}; stored: {'; '.join(known) or 'none'}")
    return _info(db, row)


def role_counts(db: sqlite_utils.Database, audit_id: int) -> dict[str, dict[str, int]]:
    """Jobs of an audit per role and status: {role: {status: n}} (for per-block views)."""
    counts: dict[str, dict[str, int]] = {}
    for role, status, n in db.execute(
            "SELECT role, status, COUNT(*) FROM jobs WHERE audit_id = ? GROUP BY role, status",
            [audit_id]):
        counts.setdefault(role, {})[status] = n
    return counts


def run_config(db: sqlite_utils.Database, audit_id: int) -> dict:
    """The stored settings of an audit (`config_json`)."""
    row = db.execute("SELECT config_json FROM audits WHERE id = ?", [audit_id]).fetchone()
    if row is None:
        raise NotFound(f"no audit with id {audit_id}")
    return loads(row[0])


@dataclass(frozen=True)
class ArmAnswers:
    """How many of an arm's stored answers parsed (`parse_status` 'ok')."""

    label: str
    answered: int
    """Answer jobs (every mode but 'judge') whose generation is stored and not 'error' (a
    failed generation is not an answer yet; it is generated again)."""
    unparsed: int
    """Of those, answers whose label could not be read ('no_answer', 'empty', 'garbage')."""


def unparsed_by_arm(db: sqlite_utils.Database, audit_id: int) -> list[ArmAnswers]:
    """Per arm of an audit (in arm order): answers stored and how many did not parse.

    A generation shared by two jobs (the same key) counts once per job, as every report
    counts it."""
    rows = db.execute(
        "SELECT r.label, COUNT(g.id), COALESCE(SUM(g.parse_status != 'ok'), 0) "
        "FROM arms r LEFT JOIN jobs j ON j.arm_id = r.id "
        "LEFT JOIN generations g ON g.key = j.generation_key AND g.mode != 'judge' "
        "AND g.parse_status != 'error' "
        "WHERE r.audit_id = ? GROUP BY r.id ORDER BY r.id", [audit_id]).fetchall()
    return [ArmAnswers(label, int(n), int(bad)) for label, n, bad in rows]
