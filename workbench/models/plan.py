"""`paw run` as a degenerate audit: one arm, one job per (item, seed), run through the Runner."""

from __future__ import annotations

import hashlib
import platform
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sqlite_utils

from store.db import dumps
from store.jobs import (
    JobSpec,
    add_arm,
    add_jobs,
    create_audit,
    finish_session,
    set_audit_status,
    start_session,
    sync_done,
)
from store.records import Item
from workbench.models.events import RunSummary
from workbench.models.request import GenerationRequest, Sampler
from workbench.models.runner import Runner

DEFAULT_MAX_TOKENS = {"cot": 384, "direct": 8}


@dataclass
class RunPlan:
    """The planned audit of a `paw run` and the requests that answer its jobs."""

    db: sqlite_utils.Database
    runner: Runner
    audit_id: int
    requests: list[GenerationRequest]

    def execute(self, settings: dict[str, Any],
                on_event: Callable[[Any], None] | None = None, *,
                allow_mixed_engines: bool = False) -> RunSummary:
        """Run the requests in a recorded session; job statuses follow the stored generations.

        Raises:
            UserError: the run's stored generations came from another engine (unless
                `allow_mixed_engines`).
        """
        from store.runs import find_run
        from workbench.models.engine_check import check_one_engine

        check_one_engine(self.db, find_run(self.db, self.audit_id), self.runner.model,
                         self.runner.engine, allow_mixed_engines)
        session = start_session(self.db, "run", audit_id=self.audit_id, settings=settings,
                                versions=_versions())
        set_audit_status(self.db, self.audit_id, "running")
        status = "failed"
        summary: RunSummary | None = None
        try:
            summary = self.runner.run(self.requests, on_event=on_event)
            status = "stopped" if summary.stopped else "finished"
        except KeyboardInterrupt:
            status = "stopped"
            raise
        finally:
            sync_done(self.db, self.audit_id)
            generated = summary.generated if summary is not None else 0
            finish_session(self.db, session, status, generated)
            set_audit_status(self.db, self.audit_id, status)
            self.runner.close()
        return summary


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {"python": platform.python_version()}
    for package in ("llama-cpp-python", "paw-workbench"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            pass
    return found


def plan_run(db: sqlite_utils.Database, runner: Runner, dataset_id: int, items: list[Item], *,
             mode: str, template: str, temperature: float, seeds: list[int],
             max_tokens: int | None, role: str) -> RunPlan:
    """Record the audit, arm and jobs of a `paw run` (idempotent) and build its requests.

    The audit's name is derived from everything that defines its generations except
    the item limit, so `paw run` with a larger `--limit` extends the same audit.
    """
    limit_tokens = max_tokens or DEFAULT_MAX_TOKENS[mode]
    samplers = [Sampler(temperature=temperature, max_tokens=limit_tokens, seed=s) for s in seeds]
    config = {"model_sha256": runner.model.sha256, "model": runner.model.name,
              "dataset_id": dataset_id, "mode": mode, "template": template,
              "temperature": temperature, "max_tokens": limit_tokens, "seeds": seeds}
    digest = hashlib.sha256(dumps(config).encode()).hexdigest()[:10]
    name = f"run:{runner.model.name}:{mode}:{template}:{digest}"
    audit = create_audit(db, name, "run", dataset_id, config)
    arm = add_arm(db, audit.id, runner.model.name, runner.model.id, template)
    requests: list[GenerationRequest] = []
    specs: list[JobSpec] = []
    for item in items:
        for index, sampler in enumerate(samplers):
            request = GenerationRequest(item=item, mode=mode, template=template, sampler=sampler)
            requests.append(request)
            specs.append(JobSpec(arm_id=arm.id, item_id=int(item.id or 0), role=role,
                                 sample_index=index, seed=sampler.seed,
                                 generation_key=runner.key(request)))
    add_jobs(db, audit.id, specs)
    return RunPlan(db=db, runner=runner, audit_id=audit.id, requests=requests)
