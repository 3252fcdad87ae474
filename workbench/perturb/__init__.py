"""Perturbation operators: seed 002's 30-variant battery, seed 000/003 baselines, the catalogue."""

from workbench.perturb.base import Operator, PerturbResult, seeded_rng
from workbench.perturb.battery import SHUFFLE_OPERATOR, auditable, resolve_operators
from workbench.perturb.catalogue import (
    F_BLOCK,
    M_BLOCK,
    OPERATORS,
    apply,
    example_result,
    get_operator,
    load_catalogue,
)
from workbench.perturb.paraphrase import Paraphrase, Paraphraser, TableParaphraser
from workbench.perturb.segments import split_steps, strip_final_answer
from workbench.perturb.tokenize import (
    CallableTokenizer,
    Tokenizer,
    WordTokenizer,
    token_change_fraction,
)

__all__ = [
    "CallableTokenizer",
    "F_BLOCK",
    "M_BLOCK",
    "OPERATORS",
    "Operator",
    "Paraphrase",
    "Paraphraser",
    "PerturbResult",
    "SHUFFLE_OPERATOR",
    "TableParaphraser",
    "Tokenizer",
    "WordTokenizer",
    "apply",
    "auditable",
    "example_result",
    "get_operator",
    "load_catalogue",
    "resolve_operators",
    "seeded_rng",
    "split_steps",
    "strip_final_answer",
    "token_change_fraction",
]
