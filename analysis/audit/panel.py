"""A cross-dataset panel: several audits (typically one per dataset) as one model × dataset view.

Seed 002 reports its panel at the model level: Table 3 is the 4-dataset mean per model,
Table 5 the per-cell FCS (model × dataset), Tables 6 and 11 pool the four datasets, Table 4
averages ΔAcc over them, and §6 summarises the panel (median ΔAcc, how many models lie
within ±1.6 pp, the CoT − direct gap, median per-cell CI half-widths). An audit covers one
dataset (`audits.dataset_id`), so a panel is a list of audits: each (arm label, dataset) is a
*cell*, and a *model* row gathers the cells that share an arm label across audits.

Means over cells average each cell's bootstrap replicates (`mean_stat`); pooled
rates add each cell's replicate numerators and denominators (`pooled_stat`). Each
cell resamples its own items, so both are bootstraps stratified by dataset.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sqlite_utils

from analysis.common.bootstrap import DEFAULT_SEED, N_BOOT
from analysis.audit.arm import Stat, mean_stat, pooled_stat
from analysis.audit.appendix_g import Unit
from analysis.audit.tables import ArmResult, AuditResult



@dataclass(frozen=True)
class Cell:
    """One model on one dataset: an arm of one audit."""

    model: str
    dataset: str
    audit: str
    arm: ArmResult


@dataclass(frozen=True)
class Panel:
    """Several audits' results arranged as models × datasets.

    Attributes:
        results: each audit's `compute_audit` result, in the order given.
        cells: every (model, dataset) cell.
        models: arm labels in first-seen order (the panel's rows).
        datasets: dataset names in first-seen order (Table 5's columns).
        n_boot: bootstrap replicates of every cell.
        seed: bootstrap seed.
    """

    results: list[AuditResult]
    cells: list[Cell]
    models: list[str]
    datasets: list[str]
    n_boot: int
    seed: int

    def cells_of(self, model: str) -> list[Cell]:
        """The model's cells, in dataset order."""
        order = {name: i for i, name in enumerate(self.datasets)}
        return sorted((c for c in self.cells if c.model == model),
                      key=lambda c: order[c.dataset])

    def cell(self, model: str, dataset: str) -> Cell | None:
        """The cell of `model` on `dataset`, if the panel has it."""
        return next((c for c in self.cells if c.model == model and c.dataset == dataset),
                    None)


def resolve_panel(db: sqlite_utils.Database, refs: str | Sequence[str | int]) -> list[dict]:
    """The audits rows of a panel: comma-separated names/ids, or 'all' (every audit of kind
    'audit', oldest first).

    Raises:
        NotFound: an unknown audit.
        UserError: fewer than one audit, or the same audit twice.
    """
    from analysis.audit.frames import resolve_audit
    from store.errors import UserError

    if isinstance(refs, str):
        refs = [r.strip() for r in refs.split(",") if r.strip()]
    refs = list(refs)
    if refs == ["all"]:
        rows = list(db.query("SELECT * FROM audits WHERE kind = 'audit' ORDER BY id"))
        if not rows:
            raise UserError("panel: no audits of kind 'audit' in this database yet")
        return rows
    if not refs:
        raise UserError("panel: expected audit names or ids separated by commas, or 'all'")
    rows = [resolve_audit(db, ref) for ref in refs]
    ids = [r["id"] for r in rows]
    if len(set(ids)) != len(ids):
        raise UserError(f"panel: an audit is listed twice in {', '.join(map(str, refs))}")
    return rows


def compute_panel(db: sqlite_utils.Database, refs: str | Sequence[str | int],
                  n_boot: int = N_BOOT, seed: int = DEFAULT_SEED) -> Panel:
    """Compute every audit of the panel and arrange the arms as model × dataset cells.

    Raises:
        UserError: two audits give the same arm label on the same dataset (which cell
            would be the model's on that dataset is ambiguous).
    """
    from analysis.audit.frames import load_audit
    from analysis.audit.tables import compute_audit

    results = [compute_audit(load_audit(db, row["id"]), n_boot, seed)
               for row in resolve_panel(db, refs)]
    return arrange(results, n_boot, seed)


def arrange(results: list[AuditResult], n_boot: int, seed: int) -> Panel:
    """Lay computed audits out as model × dataset cells (see `compute_panel`).

    Raises:
        UserError: the same arm label on the same dataset in two audits.
    """
    from store.errors import UserError

    cells: list[Cell] = []
    seen: dict[tuple[str, str], str] = {}
    models: list[str] = []
    datasets: list[str] = []
    for result in results:
        info = result.frames.audit
        dataset = str(info["dataset"])
        if dataset not in datasets:
            datasets.append(dataset)
        for arm in result.arms:
            key = (arm.label, dataset)
            if key in seen:
                raise UserError(
                    f"panel: arm {arm.label!r} on dataset {dataset!r} is in both audit "
                    f"{seen[key]!r} and audit {info['name']!r}; list only one of them")
            seen[key] = str(info["name"])
            if arm.label not in models:
                models.append(arm.label)
            cells.append(Cell(arm.label, dataset, str(info["name"]), arm))
    return Panel(results, cells, models, datasets, n_boot, seed)


def medical_panel(panel: Panel, ood: Sequence[str]) -> Panel:
    """The panel without its out-of-domain datasets: the pool of Table 3, the other panel
    tables, the tier means and Appendix G (the paper's are its four medical benchmarks);
    Appendix H alone reads the out-of-domain cells (`analysis.audit.appendix_h`).

    Raises:
        UserError: `ood` names every dataset of the panel (no medical pool is left).
    """
    from store.errors import UserError

    if not ood:
        return panel
    datasets = [ds for ds in panel.datasets if ds not in ood]
    if not datasets:
        raise UserError(f"--ood: names every dataset of the panel ({', '.join(panel.datasets)});"
                        " expected at least one medical dataset to compare with")
    cells = [c for c in panel.cells if c.dataset in datasets]
    models = [m for m in panel.models if any(c.model == m for c in cells)]
    results = [r for r in panel.results if str(r.frames.audit["dataset"]) in datasets]
    return Panel(results, cells, models, datasets, panel.n_boot, panel.seed)


# ---- per-model combinations ---------------------------------------------------------------

def model_mean(panel: Panel, model: str, name: str) -> Stat | None:
    """Mean of stat `name` over the model's cells where it is defined."""
    return mean_stat([c.arm.stats.get(name) for c in panel.cells_of(model)])


def model_pooled_cell(panel: Panel, model: str, cell: str) -> Stat | None:
    """Share of joint-table cell `cell` pooled over the model's datasets (Table 6 rows)."""
    return pooled_stat([c.arm.joint_token.shares[cell] for c in panel.cells_of(model)
                                if c.arm.joint_token is not None])


def units_of_panel(panel: Panel) -> list[Unit]:
    """The Appendix G units of a panel: one per model, holding its cells."""
    return [Unit(model, tuple(c.arm for c in panel.cells_of(model))) for model in panel.models]
