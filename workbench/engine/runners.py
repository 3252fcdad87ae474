"""The runners of a piece of work: one per model, loaded lazily, freed on request.

Every kind of run gets its models through `AuditEngine` (tests pass a fake backend factory;
`PAW_SERVERS` sends every model to a server pool), so which backend decodes is decided here
once and never by a planner.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlite_utils

from store.records import ModelRecord
from workbench.models import Runner
from workbench.models.backend import Backend

BackendFactory = Callable[[ModelRecord], Backend]
"""Builds a ready backend for a model (tests: a fake one)."""


class AuditEngine:
    """The runners of a piece of work, one per model, created on first use and freed on request.

    Args:
        db: the store.
        threads: CPU threads per model (default: the runner's, idle cores).
        gpu_layers: layers offloaded to a GPU.
        ctx: context size in tokens (default: the runner's).
        backend_factory: builds a ready backend for a model (tests pass a fake one);
            by default the runner loads llama.cpp lazily, only if something is generated.
        batch_size: sequences per llama.cpp batch (default: the runner's; 1: one at a
            time); batching needs the runner's bit-exactness self-check to pass.
        servers: a server pool (`PoolSettings`, or its base URLs; default: `PAW_SERVERS`);
            every model decodes there, and a model the pool does not serve is a
            `UserError` (never a silent in-process run).
        allow_mixed_engines: let a run go on on another engine than the one that made its
            stored generations (`--allow-mixed-engines`; its reports then state the mix).
    """

    def __init__(self, db: sqlite_utils.Database, *, threads: int | None = None,
                 gpu_layers: int = 0, ctx: int | None = None,
                 backend_factory: BackendFactory | None = None,
                 batch_size: int | None = None, servers: Any = None,
                 allow_mixed_engines: bool = False) -> None:
        from workbench.models.pool_settings import PoolSettings, servers_from_env

        self.db = db
        if servers is None:
            servers = servers_from_env()
        if servers and not isinstance(servers, PoolSettings):
            servers = PoolSettings(tuple(servers), ctx=ctx)
        self.servers = servers or None
        self.threads = threads
        self.gpu_layers = gpu_layers
        self.ctx = ctx
        self.backend_factory = backend_factory
        self.batch_size = batch_size
        self.allow_mixed_engines = allow_mixed_engines
        self._runners: dict[int, Runner] = {}

    def runner(self, model: ModelRecord) -> Runner:
        """The runner of `model` (created once; its backend loads on first generation)."""
        runner = self._runners.get(model.id)
        if runner is None:
            backend = self.backend_factory(model) if self.backend_factory else None
            if backend is None and self.servers:
                from workbench.models.server import ServerPoolBackend

                # The pool decodes through its own `run_pool` (the runner looks for it) and
                # has no one-sequence `generate`: the runner takes it by duck typing, not
                # as a `Backend`.
                pool: Any = ServerPoolBackend(model, self.servers)
                backend = pool
            runner = Runner(self.db, model, threads=self.threads, gpu_layers=self.gpu_layers,
                            ctx=self.ctx, backend=backend, batch_size=self.batch_size)
            self._runners[model.id] = runner
        return runner

    def release(self, model: ModelRecord) -> None:
        """Free a model's backend (the runner is rebuilt if needed again)."""
        runner = self._runners.pop(model.id, None)
        if runner is not None:
            runner.close()

    def close(self) -> None:
        """Free every loaded model."""
        for runner in self._runners.values():
            runner.close()
        self._runners.clear()


def live_sessions(db: sqlite_utils.Database, audit_id: int) -> list[dict[str, Any]]:
    """Sessions of a run that another live process holds (`running`, its process alive by
    `store.runs.process_alive`: its pid on this host, a fresh heartbeat elsewhere)."""
    import os
    import socket

    from store.runs import process_alive

    rows = db.query("SELECT id, pid, host, heartbeat_at, started_at FROM sessions "
                    "WHERE audit_id = ? AND status = 'running'", [audit_id])
    me = (os.getpid(), socket.gethostname())
    return [row for row in rows if (row["pid"], row["host"]) != me
            and process_alive(row["pid"], row["host"], row["heartbeat_at"])]
