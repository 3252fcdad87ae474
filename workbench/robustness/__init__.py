"""Seed 003: counterfactual validity and demographic robustness of clinical answers."""

from workbench.robustness.execute import run_robustness, store_judgements
from workbench.robustness.spec import (
    PREFIX_OPERATORS,
    TESTS,
    RobustnessSpec,
    resolve_modes,
    resolve_prefixes,
    resolve_tests,
)

__all__ = [
    "PREFIX_OPERATORS",
    "TESTS",
    "RobustnessSpec",
    "resolve_modes",
    "resolve_prefixes",
    "resolve_tests",
    "run_robustness",
    "store_judgements",
]
