"""Seed 001 (DBPA): the test's constants, read by the statistics, the planner and the report."""

from __future__ import annotations

import math
from enum import StrEnum


class Distance(StrEnum):
    """Discrepancies ω a test may use (`--distance`, docs/dbpa.md)."""

    JSD = "jsd"
    """The paper's default."""
    ENERGY = "energy"
    """Its Table 4 alternative, on P0/P1."""
    ENERGY_EMB = "energy_emb"
    """The authors' released-code variant, on the embeddings."""


DISTANCES: tuple[str, ...] = tuple(d.value for d in Distance)
"""The values of `Distance`."""


class Correction(StrEnum):
    """`--correction`: the family-wise correction whose p decides each test."""

    HOLM = "holm"
    BONFERRONI = "bonferroni"
    NONE = "none"
    """The raw p."""

IDENTICAL_PAIRS_WARN: float = 0.5
"""The report warns when at least this share of a run's shared-seed pairs are identical texts.
A swap within an identical pair changes nothing, so a paired test with m identical pairs of
k has 2^(k − m) re-splits: valid, nearly powerless. Measured by
`bench/dbpa_identical_pairs.py --reps 200` (k = 10, coupled pairs ρ = 0.7, 384-d, shift
0.2, B = 199; docs/dbpa.md): power jsd / energy / energy_emb 0.77 / 0.76 / 1.00 with no
identical pair, 0.42 / 0.11 / 0.21 at 5 of 10, 0 at 7 of 10 (p floor 0.13); null rejection
0.050 / 0.040 / 0.055, then 0.025 / 0.025 / 0.000, then 0."""

IDENTICAL_PAIRS_POWER: str = ("k = 10, shift 0.2: power jsd/energy/energy_emb 0.77/0.76/1.00 "
                              "with no identical pair, 0.42/0.11/0.21 at 5 of 10, 0 at 7 of 10")
"""The measured power the warning quotes (`IDENTICAL_PAIRS_WARN`)."""

JSD_BINS = 30
"""Histogram bins of the JSD (the authors' released code's default)."""

SIMILARITY_DECIMALS = 6
"""Cosine similarities are rounded to this many decimals: float32 embeddings carry about
seven significant digits, and rounding makes equal texts exactly equal (identical outputs
then give ω = 0 on every split instead of noise in the last bits)."""

SCALE = 10 ** SIMILARITY_DECIMALS
"""Similarities are held as integers s·SCALE, so bins, sorting and ties are exact."""

TEST_VERSION = 2
"""Bumped when a stored test's numbers would come out differently (2: ties decided on exact
keys, the paired design, the permutation-null mean and SD); older rows are recomputed."""

OMEGA_MAX: dict[str, float] = {"jsd": math.sqrt(math.log(2)), "energy": 2.0, "energy_emb": 4.0}
"""The largest value each ω can take, the top of the standardised effect's scale:
`jsd` √(ln 2) = 0.8326 (SciPy's JS distance, natural log; reached when the two histograms
share no bin); `energy` 2 (√(2∫(F0 − F1)²) with |F0 − F1| ≤ 1 over similarities in
[−1, 1]); `energy_emb` 4 (‖x̄ − ȳ‖² for means of unit vectors, which lie in the unit ball)."""


def standardised_effect(omega: float, null_mean: float, distance: str) -> float:
    """ω* = (ω − ω₀)/(ω_max − ω₀): the effect size comparable across k.

    ω₀ is ω's mean over the test's re-splits (what ω is when nothing differs, which falls
    with k: JSD 0.64 at k = 5, 0.08 at k = 50), ω_max = `OMEGA_MAX`. ω* is 0 in
    expectation under H0 at every k (T_obs is one exchangeable draw of the re-splits), 1
    at the largest ω possible, negative when ω is below its null level; the chance
    correction of Cohen's kappa, applied to ω (bench/dbpa_effect_k.py measures it).
    """
    room = OMEGA_MAX[distance] - null_mean
    return (omega - null_mean) / room if room > 0 else 0.0


# ---------------------------------------------------------------- job roles


class DbpaRole(StrEnum):
    """Job roles of a DBPA analysis (`jobs.role`), each sampled k times; members compare
    equal to the stored strings (docs/dbpa.md)."""

    BASELINE = "baseline"
    """The original question."""
    PERTURBED = "perturbed"
    """The question edited by one operator (`variant_id` set)."""
    IDENTITY = "identity"
    """The original question again with independent seeds (the identity control)."""
