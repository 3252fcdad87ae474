"""Seed 001 (DBPA): the constants of the test, read by the statistics, the planner and the report."""

from __future__ import annotations

DISTANCES: tuple[str, ...] = ("jsd", "energy", "energy_emb")
"""Discrepancies ω a test may use (docs/dbpa.md: `jsd` is the paper's default, `energy` its
Table 4 alternative on P0/P1, `energy_emb` the authors' released-code variant)."""

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
