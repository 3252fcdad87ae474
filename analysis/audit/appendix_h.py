"""Seed 002 Appendix H: out-of-domain transfer, ΔFCS = FCS out of domain − FCS on the medical cells.

Appendix H "reruns the four medical-specialised models on GSM8K and StrategyQA under both
the strict medical prompt and the neutral CoT prompt": "Med42-8B retains its medical-tier
fcs on both out-of-domain tasks (mean Δfcs = +0.005 on GSM8K, −0.001 on StrategyQA; prompt
swap moves fcs by at most 0.025)"; "BioMistral-7B emits ecr = 0 on every cross-domain cell
yet attains fcs = 0.84 on GSM8K". A panel names its out-of-domain datasets
(`paw report --panel … --ood gsm8k,strategyqa`); every other dataset is medical. Per arm
label (model × prompt template) and out-of-domain dataset: the medical FCS (the mean over
its medical cells, Table 3's), the out-of-domain FCS and ECR, ΔFCS; and per model and
dataset the ΔFCS averaged over its prompt templates and the spread of the out-of-domain
FCS across them (the "prompt swap").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from analysis.audit.arm import Stat, mean_stat
from analysis.audit.columns import stat_columns, table_frame

if TYPE_CHECKING:
    import pandas as pd

    from analysis.audit.panel import Panel

DELTA_DECIMALS: int = 3
"""Appendix H prints ΔFCS with three decimals (+0.005, −0.001, −0.060)."""


def parse_ood(panel: Panel, ood: str | Sequence[str] | None) -> list[str]:
    """The out-of-domain datasets named by `ood` (comma-separated or a list), checked
    against the panel's datasets.

    Raises:
        UserError: a name that is not one of the panel's datasets.
    """
    from store.errors import UserError

    if ood is None:
        return []
    names = [n.strip() for n in (ood.split(",") if isinstance(ood, str) else ood)
             if n.strip()]
    unknown = [n for n in names if n not in panel.datasets]
    if unknown:
        raise UserError(f"--ood: no dataset named {unknown[0]!r} in this panel; its datasets "
                        f"are {', '.join(panel.datasets)}")
    return names


def _difference(a: Stat | None, b: Stat | None) -> Stat | None:
    """a − b, with replicates (independent cells: a bootstrap stratified by dataset)."""
    if a is None or b is None or math.isnan(a.point) or math.isnan(b.point):
        return None
    exact = a.exact - b.exact if a.exact is not None and b.exact is not None else None
    point = float(exact) if exact is not None else a.point - b.point
    return Stat(point, a.reps - b.reps, a.n + b.n, exact=exact)


def ood_table(panel: Panel, ood: list[str]) -> pd.DataFrame:
    """Appendix H's ΔFCS per arm label × out-of-domain dataset, then each model's mean
    over its templates (rows "model · dataset · mean" when it has several)."""
    medical = [ds for ds in panel.datasets if ds not in ood]
    rows: list[dict[str, Any]] = []
    per_model: dict[tuple[str, str], list[tuple[Stat | None, Stat | None]]] = {}
    for label in panel.models:
        cells = panel.cells_of(label)
        med = mean_stat([c.arm.stats.get("fcs") for c in cells if c.dataset in medical])
        for cell in (c for c in cells if c.dataset in ood):
            fcs = cell.arm.stats.get("fcs")
            delta = _difference(fcs, med)
            row: dict[str, Any] = {"row": f"{label} · {cell.dataset}",
                                   "model": cell.arm.model, "template": cell.arm.template,
                                   "dataset": cell.dataset}
            stat_columns(row, "fcs_medical", med)
            stat_columns(row, "fcs_ood", fcs)
            stat_columns(row, "delta_fcs", delta)
            stat_columns(row, "ecr_ood", cell.arm.stats.get("ecr"))
            rows.append(row)
            per_model.setdefault((cell.arm.model, cell.dataset), []).append((delta, fcs))
    for (model, dataset), pairs in per_model.items():
        if len(pairs) < 2:
            continue
        row = {"row": f"{model} · {dataset} · mean", "model": model, "template": "mean",
               "dataset": dataset}
        stat_columns(row, "delta_fcs", mean_stat([delta for delta, _ in pairs]))
        values = [f.point for _, f in pairs if f is not None and not math.isnan(f.point)]
        row["prompt_swap_fcs"] = max(values) - min(values) if len(values) > 1 else math.nan
        rows.append(row)
    frame = table_frame(rows, "row")
    frame.attrs["decimals"] = {"delta_fcs": DELTA_DECIMALS, "prompt_swap_fcs": DELTA_DECIMALS}
    return frame


def ood_note(panel: Panel, ood: list[str]) -> str:
    """The Appendix H section's note (and how to name the out-of-domain datasets)."""
    note = ("ΔFCS = FCS on the out-of-domain dataset − the model's medical FCS (mean over "
            "its medical cells), per model × prompt template; CI from the cells' "
            "replicates (stratified by dataset); ECR out of domain beside it (Appendix H: "
            "BioMistral-7B has ECR 0 yet FCS 0.84 on GSM8K, \"a chain-compression artefact, "
            "not faithfulness\"). Mean rows average ΔFCS over a model's templates; prompt "
            "swap = max − min of its out-of-domain FCS across them (paper: Med42-8B mean "
            "ΔFCS +0.005 on GSM8K, −0.001 on StrategyQA, prompt swap ≤ 0.025).")
    if not ood:
        note += (" No out-of-domain dataset named: pass them with `paw report --panel … "
                 "--ood NAMES` (e.g. gsm8k,strategyqa); every other dataset counts as "
                 f"medical (here: {', '.join(panel.datasets)}).")
    else:
        note += (f" {', '.join(ood)}: left out of every medical pool (Table 3, the other "
                 "panel tables, the tier means, Appendix G) and shown here only.")
    return note
