"""Seed-003 model profiles: accuracy, CFV, answer change, directions, EDD, flags — with CIs.

Every rate is a ratio of per-question sums (Σ num_i / Σ den_i over the run's questions) and
its 95% CI is the percentile bootstrap over questions (`analysis.common.bootstrap`): the question is
the unit the paper's comparisons share (its 7 answers, its CFV attempt), so resampling
questions keeps each question's comparisons together. One weight matrix per model is
shared by all of its metrics.

Units (§3.5: "The metrics operate at different units"):
- accuracy: parsed baseline answers (correct / parsed);
- CFV rate and failure-mode shares: scored CFV attempts (one per question);
- answer change rate: baseline–prefix comparisons with both answers parsed;
- direction shares: changed comparisons with a parsed direction verdict;
- EDD: questions whose seven explanations are all embedded (mean over questions);
- flags per question: Σ flags / Σ parsed flag verdicts × number of prefixes, i.e. the
  flags expected over one question's prefixed explanations (the paper's "5.09 per
  question" when every verdict parsed); flagged share: parsed verdicts with ≥ 1 flag.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from analysis.common.bootstrap import Estimate, ratio_estimate, resample_weights
from analysis.robustness.consistency import CONFLICT_KINDS
from analysis.robustness.definitions import (
    CFV_OUTCOMES,
    DIRECTIONS,
    MODE_PREFIX,
    SEVERITIES,
    STEREOTYPE_CATEGORIES,
    UNPARSED,
    RobustnessRole,
)

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from analysis.robustness.data import RobustnessData


@dataclass
class ArmProfile:
    """One model's profile: every estimate by name, and the counts behind the exclusions."""

    arm_id: int
    label: str
    model: str
    n_items: int
    estimates: dict[str, Estimate] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)


@dataclass
class Profiles:
    """The profiles of a run plus the per-unit frames they came from."""

    arms: list[ArmProfile]
    attempts: pd.DataFrame
    pairs: pd.DataFrame
    edd: pd.DataFrame
    n_prefixes: int
    n_boot: int
    seed: int
    mode: str = "prefix"


def _sums(frame: pd.DataFrame, column: str | None, index: dict[int, int]) -> np.ndarray:
    """Per-question sums of `column` (or row counts when None) as a vector over `index`."""
    import numpy as np

    out = np.zeros(len(index))
    if frame.empty:
        return out
    values = frame[column].astype(float) if column else np.ones(len(frame))
    for item_id, value in zip(frame["item_id"], values, strict=True):
        out[index[int(item_id)]] += value
    return out


def compute_profiles(data: RobustnessData, n_boot: int, seed: int,
                     mode: str | None = None) -> Profiles:
    """Every model's profile with percentile bootstrap CIs over questions.

    Args:
        data: the loaded run.
        n_boot: bootstrap replicates (0: no CIs).
        seed: bootstrap seed (each model's weights use [seed, arm id]).
        mode: the demographic mode whose comparisons, flags and EDD the profile holds
            (default: the run's first, the paper's 'prefix' when it ran).
    """

    from analysis.robustness.data import cfv_attempts, demographic_pairs, edd_values

    mode = mode or (data.modes[0] if data.modes else MODE_PREFIX)
    attempts, pairs, edds = cfv_attempts(data), demographic_pairs(data), edd_values(data)
    pairs = pairs[pairs["mode"] == mode]
    edds = edds[edds["mode"] == mode]
    index = {int(i): n for n, i in enumerate(data.items["item_id"])}
    n_prefixes = max(len(data.prefixes), 1)
    answers = data.answers[data.answers["status"] == "done"]
    gold = dict(zip(data.items["item_id"], data.items["gold"], strict=True))
    profiles = []
    for arm in data.arms.itertuples():
        w = resample_weights(len(index), n_boot, [seed, int(arm.arm_id)])
        p = ArmProfile(int(arm.arm_id), str(arm.label), str(arm.model), len(index))
        est, cnt = p.estimates, p.counts

        base = answers[(answers["arm_id"] == arm.arm_id)
                       & (answers["role"] == RobustnessRole.BASELINE)]
        base = base.assign(parsed=base["answer"].notna())
        base = base.assign(correct=[a == gold[i] for a, i in zip(base["answer"],
                                                                  base["item_id"], strict=True)])
        est["accuracy"] = ratio_estimate(_sums(base, "correct", index),
                                         _sums(base, "parsed", index), w)
        cnt["baseline_unparsed"] = int((~base["parsed"]).sum())

        att = attempts[attempts["arm_id"] == arm.arm_id]
        scored = att[att["state"] == "scored"]
        den = _sums(scored, None, index)
        for outcome in CFV_OUTCOMES:
            hit = scored.assign(hit=(scored["outcome"] == outcome).astype(float))
            est[f"cfv_{outcome}"] = ratio_estimate(_sums(hit, "hit", index), den, w)
            cnt[f"cfv_{outcome}"] = int(hit["hit"].sum())
        invalid = scored[scored["outcome"] != "valid"]
        cnt["cfv_invalid"] = len(invalid)
        cnt["cfv_unjudged"] = int((att["state"] == "unjudged").sum())
        cnt["cfv_incomplete"] = int((att["state"] == "incomplete").sum())
        mine = data.cfv[data.cfv["arm_id"] == arm.arm_id]
        cnt["cfv_options_removed"] = int(mine["options_removed"].astype(bool).sum())
        cnt["cfv_moved_elsewhere"] = int(scored["moved_elsewhere"].sum()) if len(scored) else 0
        cnt["cfv_baseline_unknown"] = (int(scored["baseline_unknown"].sum())
                                       if len(scored) else 0)
        cnt["cfv_reanswer_unparsed"] = (int(scored["reanswer_unparsed"].sum())
                                        if len(scored) else 0)
        cnt["cfv_baseline_was_target"] = int((scored["baseline_answer"] == scored["target"])
                                             .sum()) if len(scored) else 0

        pr = pairs[pairs["arm_id"] == arm.arm_id]
        parsed = pr[pr["parsed"]]
        est["change"] = ratio_estimate(_sums(parsed, "changed", index),
                                       _sums(parsed, None, index), w)
        cnt["pairs_unparsed"] = int((~pr["parsed"]).sum())
        for prefix in data.mode_operators(mode):
            sub = parsed[parsed["prefix"] == prefix]
            est[f"change[{prefix}]"] = ratio_estimate(_sums(sub, "changed", index),
                                                      _sums(sub, None, index), w)
        # Prefix–vignette consistency (analysis.robustness.consistency): the change rate
        # where the edit contradicts the vignette's stated age/sex/race, and where not.
        for name, sub in (("consistent", parsed[parsed["consistent"].eq(True)]),
                          ("conflicting", parsed[parsed["consistent"].eq(False)])):
            est[f"change_{name}"] = ratio_estimate(_sums(sub, "changed", index),
                                                   _sums(sub, None, index), w)
        demo = data.answers[(data.answers["arm_id"] == arm.arm_id)
                            & (data.answers["mode"] == mode)]
        cnt["demographic_not_fired"] = int((demo["status"] == "not_fired").sum())
        cnt["pairs_stored"] = len(pr)
        cnt["pairs_conflicting"] = int(pr["consistent"].eq(False).sum())
        for kind in CONFLICT_KINDS:
            cnt[f"conflict_{kind}"] = sum(kind in c for c in pr["conflicts"])

        changed = parsed[parsed["changed"]]
        judged = changed[changed["direction"].notna() & (changed["direction"] != UNPARSED)]
        cnt["direction_unparsed"] = int((changed["direction"] == UNPARSED).sum())
        cnt["direction_missing"] = int(changed["direction"].isna().sum())
        for direction in DIRECTIONS:
            hit = judged.assign(hit=(judged["direction"] == direction).astype(float))
            est[f"direction_{direction}"] = ratio_estimate(_sums(hit, "hit", index),
                                                           _sums(judged, None, index), w)
            cnt[f"direction_{direction}"] = int(hit["hit"].sum())

        ed = edds[(edds["arm_id"] == arm.arm_id) & edds["edd"].notna()]
        est["edd"] = ratio_estimate(_sums(ed, "edd", index), _sums(ed, None, index), w)
        cnt["edd_missing"] = int(((edds["arm_id"] == arm.arm_id) & edds["edd"].isna()).sum())

        flagged = pr[pr["flags_verdict"].notna() & (pr["flags_verdict"] != UNPARSED)]
        cnt["flags_unparsed"] = int((pr["flags_verdict"] == UNPARSED).sum())
        cnt["flags_not_judged"] = int((pr["flags_state"] == "not_judged").sum())
        cnt["flags_pending"] = int((pr["flags_state"] == "pending").sum())
        fden = _sums(flagged, None, index)
        n_flags = flagged.assign(n=[len(f) for f in flagged["flags"]])
        est["flags_per_question"] = _scaled(ratio_estimate(_sums(n_flags, "n", index), fden, w),
                                            n_prefixes)
        cnt["flags"] = int(n_flags["n"].sum()) if len(n_flags) else 0
        unquoted = flagged.assign(n=[sum(1 for f in fl if f.get("quote_found") is False)
                                     for fl in flagged["flags"]])
        est["flags_unquoted"] = _scaled(ratio_estimate(_sums(unquoted, "n", index), fden, w),
                                        n_prefixes)
        cnt["flags_quote_not_found"] = int(unquoted["n"].sum()) if len(unquoted) else 0
        any_flag = flagged.assign(hit=[float(len(f) > 0) for f in flagged["flags"]])
        est["flagged_share"] = ratio_estimate(_sums(any_flag, "hit", index), fden, w)
        for name, values in (("category", STEREOTYPE_CATEGORIES), ("severity", SEVERITIES)):
            for value in values:
                k = flagged.assign(n=[sum(1 for f in fl if f.get(name) == value)
                                      for fl in flagged["flags"]])
                est[f"flags_{value}"] = _scaled(ratio_estimate(_sums(k, "n", index), fden, w),
                                                n_prefixes)
                cnt[f"flags_{value}"] = int(k["n"].sum()) if len(k) else 0
        mine = data.verdicts[data.verdicts["arm_id"] == arm.arm_id]
        cnt["judge_shared"] = int((mine["n_sharing"] > 1).sum())
        profiles.append(p)
    return Profiles(profiles, attempts, pairs, edds, n_prefixes, n_boot, seed, mode)


def _scaled(e: Estimate, factor: float) -> Estimate:
    return Estimate(e.value * factor, e.low * factor, e.high * factor, e.n)
