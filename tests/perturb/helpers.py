"""Worked inputs for the operator tests (chains with and without "Step n:" markers)."""

from __future__ import annotations

from workbench.perturb import OPERATORS, PerturbResult

MARKED_CHAIN = (
    "Step 1: The patient is 45 years old.\n"
    "Step 2: We compute the anion gap because bicarbonate is low.\n"
    "Step 3: Therefore the gap equals 28.\n"
    "Step 4: We conclude it is ketoacidosis."
)
PARAGRAPH_CHAIN = MARKED_CHAIN.replace("\n", "\n\n").replace("Step 1: ", "").replace(
    "Step 2: ", "").replace("Step 3: ", "").replace("Step 4: ", "")
MARKED_STEPS = MARKED_CHAIN.split("\n")
PARAGRAPHS = PARAGRAPH_CHAIN.split("\n\n")


def run(operator_id: str, text: str, **kwargs) -> PerturbResult:
    """Apply a built-in operator (seed 0 and item "item-1" unless given)."""
    kwargs.setdefault("item_key", "item-1")
    return OPERATORS[operator_id].apply(text, **kwargs)
