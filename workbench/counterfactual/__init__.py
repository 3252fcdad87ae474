"""Seed 000, counterfactual prompting against baselines: the study's plan, paraphrases and run."""

from workbench.counterfactual.execute import StudyOutcome, run_study, study_stages
from workbench.counterfactual.plan import StudyPlan, Unit, create_study, unit_of
from workbench.counterfactual.spec import (
    BASELINES,
    DEFAULT_SEEDS,
    ROLES,
    StudySpec,
    default_seeds,
    resolve_baselines,
    resolve_targets,
)

__all__ = [
    "BASELINES",
    "DEFAULT_SEEDS",
    "ROLES",
    "StudyOutcome",
    "StudyPlan",
    "StudySpec",
    "Unit",
    "create_study",
    "default_seeds",
    "resolve_baselines",
    "resolve_targets",
    "run_study",
    "study_stages",
    "unit_of",
]
