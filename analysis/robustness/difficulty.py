"""CFV validity by question difficulty and by Step (seed 003 Figure 2, §4.2).

The paper: "validity varied substantially by model, while the difficulty-validity
association was weak (Spearman r = 0.069, n = 900). For MedGemma, validity was 61.8%,
68.0%, and 65.2% for EASY, MEDIUM, and HARD questions"; its sample "included 80 Step 1 and
70 Step 2 or 3 cases" (§3.2). The seed text does not say where EASY/MEDIUM/HARD come from
(MedQA has no difficulty field), so PAW takes, in this order:

1. an item field `difficulty` (the item's `meta`: a number, or easy / medium / hard), when
   every item of the run has one;
2. otherwise the model panel's accuracy: the share of the run's models whose baseline answer
   to the question is wrong, among those that parsed — easy below 1/3, medium below 2/3,
   hard from 2/3 (exact fractions). With one model this is the model's own correctness.

Step: MedQA's `meta_info` ('step1', 'step2&3') or an item field `step`. Spearman r is over
the scored attempts (all models pooled, as the paper's n = 900 is, and per model) between
the difficulty and validity (1 valid, 0 not); its 95% interval is the percentile bootstrap
over questions (a question's attempts move together), scipy's `spearmanr` on each replicate.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from analysis.common.bootstrap import Estimate, percentile_ci, ratio_estimate, resample_weights
from analysis.robustness.definitions import RobustnessRole

if TYPE_CHECKING:
    import pandas as pd

    from analysis.robustness.data import RobustnessData

BANDS: tuple[str, ...] = ("easy", "medium", "hard")
"""Figure 2's difficulty bands."""

_BAND_VALUES = {"easy": 0.0, "medium": 1.0, "hard": 2.0}


def band_of(share_wrong: Fraction) -> str:
    """The band of a panel difficulty (share of models wrong): <1/3 easy, <2/3 medium, hard."""
    if share_wrong < Fraction(1, 3):
        return "easy"
    return "medium" if share_wrong < Fraction(2, 3) else "hard"


def _step(meta: dict) -> str | None:
    raw = str(meta.get("meta_info") or meta.get("step") or "").strip().lower()
    if not raw:
        return None
    if raw.replace(" ", "") in ("step1", "1"):
        return "Step 1"
    if raw.replace(" ", "") in ("step2&3", "step2/3", "step2", "step3", "2&3", "2", "3"):
        return "Step 2/3"
    return raw


def item_difficulty(data: RobustnessData) -> tuple[pd.DataFrame, str]:
    """Each item's difficulty and Step, and where the difficulty came from (in words).

    Returns:
        (frame with item_id, difficulty (float; NaN unknown), band, step), source.
    """
    import pandas as pd

    metas = dict(zip(data.items["item_id"], data.items["meta"], strict=True))
    if len(metas) and all(isinstance(m, dict) and m.get("difficulty") is not None
                          for m in metas.values()):
        rows = []
        for item_id, meta in metas.items():
            raw = meta["difficulty"]
            word = str(raw).strip().lower()
            value = _BAND_VALUES.get(word)
            if value is None:
                try:
                    value = float(raw)
                except (TypeError, ValueError):
                    value = math.nan
            band = word if word in BANDS else None
            rows.append({"item_id": item_id, "difficulty": value, "band": band,
                         "step": _step(meta)})
        return pd.DataFrame(rows), "item field 'difficulty'"
    base = data.answers[(data.answers["role"] == RobustnessRole.BASELINE)
                        & (data.answers["status"] == "done")]
    gold = dict(zip(data.items["item_id"], data.items["gold"], strict=True))
    rows = []
    for item_id, meta in metas.items():
        answers = [a for a in base[base["item_id"] == item_id]["answer"] if isinstance(a, str)]
        if answers:
            wrong = Fraction(sum(a != gold[item_id] for a in answers), len(answers))
            rows.append({"item_id": item_id, "difficulty": float(wrong),
                         "band": band_of(wrong), "step": _step(meta)})
        else:
            rows.append({"item_id": item_id, "difficulty": math.nan, "band": None,
                         "step": _step(meta)})
    source = (f"model panel accuracy (share of the run's {len(data.arms)} model(s) whose "
              f"baseline answer is wrong; easy < 1/3 <= medium < 2/3 <= hard)")
    return pd.DataFrame(rows, columns=["item_id", "difficulty", "band", "step"]), source


def _sums(frame: pd.DataFrame, column: str | None, index: dict[int, int]):
    import numpy as np

    out = np.zeros(len(index))
    values = frame[column].astype(float) if column else np.ones(len(frame))
    for item_id, value in zip(frame["item_id"], values, strict=True):
        out[index[int(item_id)]] += value
    return out


def validity_by(attempts: pd.DataFrame, labels: dict[int, str], by: str,
                groups: tuple[str, ...], items: list[int], n_boot: int,
                seed: int) -> pd.DataFrame:
    """CFV validity per model (and all models) and per group (a band or a Step), with CIs.

    Args:
        attempts: scored attempts with item_id, arm_id, valid (0/1) and the `by` column.
        labels: arm id -> model label.
        by: 'band' or 'step'.
        groups: the groups, in display order.
        items: every item id of the run (the resampling unit).
        n_boot, seed: bootstrap replicates and seed.
    """
    import pandas as pd

    index = {int(i): n for n, i in enumerate(items)}
    rows = []
    for arm_id, model in [(None, "all models"), *labels.items()]:
        mine = attempts if arm_id is None else attempts[attempts["arm_id"] == arm_id]
        w = resample_weights(len(index), n_boot, [seed, 0 if arm_id is None else int(arm_id)])
        for group in groups:
            sub = mine[mine[by] == group]
            e = ratio_estimate(_sums(sub, "valid", index), _sums(sub, None, index), w)
            rows.append({"model": model, by: group, "valid_pct": 100 * e.value,
                         "valid_pct_low": 100 * e.low, "valid_pct_high": 100 * e.high,
                         "n_attempts": e.n})
    frame = pd.DataFrame(rows, columns=["model", by, "valid_pct", "valid_pct_low",
                                        "valid_pct_high", "n_attempts"])
    return frame.set_index("model")  # one named index: the renderers show it


def spearman(attempts: pd.DataFrame, items: list[int], n_boot: int,
             seed: int | list[int]) -> Estimate:
    """Spearman r between difficulty and validity over attempts, percentile CI over questions.

    NaN when either side is constant (scipy's r is undefined there).
    """
    import numpy as np
    from scipy.stats import spearmanr

    known = attempts[attempts["difficulty"].notna()]
    n = len(known)
    if n < 3 or known["difficulty"].nunique() < 2 or known["valid"].nunique() < 2:
        return Estimate(math.nan, n=n)
    r = float(spearmanr(known["difficulty"], known["valid"]).statistic)
    if n_boot == 0:
        return Estimate(r, n=n)
    index = {int(i): k for k, i in enumerate(items)}
    rows_of: list[list[int]] = [[] for _ in items]
    for row, item_id in enumerate(known["item_id"]):
        rows_of[index[int(item_id)]].append(row)
    x, y = known["difficulty"].to_numpy(float), known["valid"].to_numpy(float)
    replicates = []
    for counts in resample_weights(len(items), n_boot, seed):
        take = [row for k, c in enumerate(counts.astype(int)) for _ in range(c)
                for row in rows_of[k]]
        if len(set(x[take])) < 2 or len(set(y[take])) < 2:
            replicates.append(np.nan)
            continue
        replicates.append(float(spearmanr(x[take], y[take]).statistic))
    low, high = percentile_ci(np.array(replicates))
    return Estimate(r, low, high, n)


def difficulty_sections_data(data: RobustnessData, attempts: pd.DataFrame, n_boot: int,
                             seed: int) -> dict[str, Any]:
    """The frames of the Figure 2 sections: by band, by Step, Spearman r; and the source."""
    import pandas as pd

    difficulty, source = item_difficulty(data)
    scored = attempts[attempts["state"] == "scored"].merge(difficulty, on="item_id",
                                                           how="left")
    scored = scored.assign(valid=(scored["outcome"] == "valid").astype(float))
    labels = dict(zip(data.arms["arm_id"], data.arms["label"], strict=True))
    items = [int(i) for i in data.items["item_id"]]
    bands = tuple(b for b in BANDS if b in set(scored["band"].dropna())) or BANDS
    steps = tuple(sorted(set(scored["step"].dropna())))
    rows = []
    for arm_id, model in [(None, "all models"), *labels.items()]:
        mine = scored if arm_id is None else scored[scored["arm_id"] == arm_id]
        e = spearman(mine, items, n_boot, [seed, 0 if arm_id is None else int(arm_id)])
        rows.append({"model": model, "spearman_r": e.value, "r_low": e.low, "r_high": e.high,
                     "n_attempts": e.n})
    return {
        "source": source,
        "by_band": validity_by(scored, labels, "band", bands, items, n_boot, seed),
        "by_step": (validity_by(scored, labels, "step", steps, items, n_boot, seed)
                    if steps else None),
        "spearman": pd.DataFrame(rows).set_index("model"),
    }
