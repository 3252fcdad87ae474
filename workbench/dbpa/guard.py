"""Refuse a DBPA plan whose k (or B) is too small for its families to reject at α.

A family of m tests can reject only if m × the smallest p a test can reach is ≤ α (Holm's
and Bonferroni's smallest adjusted p are both m·p_min); the smallest p is set by the
number of distinct re-splits (k) and by B (`analysis.dbpa.design.smallest_p`). At k = 2
no DBPA test can reject (N = C(4, 2) = 6: p ≥ 0.17), at k = 3 unpaired not at 0.05
(p ≥ 0.051), and a paired design at k = 5 not with energy_emb (p ≥ 0.063). Such a plan is
refused before any sample is drawn, naming the smallest k (or B) that works; with
`--allow-small-k` it runs and the report warns on every test that cannot reject.
"""

from __future__ import annotations

from dataclasses import dataclass

from store.errors import UserError


@dataclass(frozen=True)
class Family:
    """One family of a plan: its case study, its size m and its re-split design."""

    case_study: str
    size: int
    design: str


def plan_families(config: dict, fired: int, items: int) -> list[Family]:
    """The families each arm pair of a plan will have (their sizes before any output is
    excluded).

    Args:
        config: the analysis config (`DbpaSpec.config()`).
        fired: (item, operator) edits that fired, per arm.
        items: the plan's items.
    """
    design = "paired" if config["seeds"] == "shared" else "unpaired"
    families = []
    if fired:
        families.append(Family("perturbation", fired, design))
    if config.get("model_swap"):
        families.append(Family("model_swap", items, design))
    if config.get("identity_control"):
        families.append(Family("identity", items, "unpaired"))  # independent seeds always
    return families


def check_resolution(config: dict, families: list[Family]) -> list[str]:
    """Every (family, distance) whose best corrected p exceeds α, as one line each.

    Raises:
        UserError: when some family cannot reject and `allow_small_k` is off; the message
            names the smallest --k (or --perms) that lets every family reject.
    """
    from analysis.dbpa.design import minimum_k, minimum_permutations, smallest_p

    k, b, alpha = int(config["k"]), int(config["permutations"]), float(config["alpha"])
    correction = config["correction"]
    shapes = [(family, 1 if correction == "none" else family.size, distance)
              for family in families for distance in config["distances"]]
    problems = []
    for family, m, distance in shapes:
        floor = smallest_p(k, k, b, distance, family.design)
        if m * floor > alpha:
            problems.append(f"{family.case_study} ({family.design}, {m} test(s), {distance}): "
                            f"best adjusted p {m} × {floor:.4f} = {m * floor:.4f} > α = "
                            f"{alpha}")
    # What to suggest: B first (m/(1 + B) = α would need an endless k, so leave half of α
    # to k), then the smallest k that every family reaches under that B.
    needed_b = max([b] + [minimum_permutations(2 * m, alpha) for _, m, _ in shapes
                          if m / (1 + b) > alpha])
    needed_k = max([k] + [minimum_k(needed_b, distance, family.design, m, alpha) or k
                          for family, m, distance in shapes])
    if problems and not config.get("allow_small_k"):
        fix = " and ".join(([f"--perms {needed_b} or more"] if needed_b > b else [])
                           + ([f"--k {needed_k} or more"] if needed_k > k else []))
        fix = f"use {fix}"
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        paired = any(family.design == "paired" for family, _, _ in shapes)
        same = (" A shared-seed pair whose two texts come out identical adds no re-split "
                "(m identical pairs of k leave 2^(k − m)), so a paired test needs more k than "
                "this; the report warns when half the pairs or more are identical."
                if paired else "")
        raise UserError(f"--k {k}: these tests could not reject at α = {alpha} after "
                        f"{correction} — {problems[0]}{more}; {fix} (or --allow-small-k to "
                        f"run anyway, with a warning in the report).{same}")
    return problems
