"""The operator catalogue: the one place that lists every operator, its tags and worked example.

Paper order (seed 002 Tables 1 and 11): 17 F variants, 13 M variants; then the seed-000
baselines and controls, the seed-003 demographic prefixes, the Appendix D option
shuffle; user-defined operators come from `load_catalogue()` (see workbench.perturb.user).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from store.errors import UserError
from workbench.perturb import baselines, chain, coherent, question, shuffle
from workbench.perturb.base import EditFn, Operator, PerturbResult
from workbench.perturb.paraphrase import paraphrase_operator

EXAMPLE_CHAIN = (
    "Step 1: First, we compute the anion gap because the bicarbonate is low.\n"
    "Step 2: Sodium 140 minus chloride 100 and bicarbonate 12 gives 28, which is high.\n"
    "Step 3: Key findings: polyuria and polydipsia.\n"
    "Step 4: Therefore, we conclude this is diabetic ketoacidosis."
)
EXAMPLE_STEM = (
    "A 45-year-old man presents with severe abdominal pain for the past 3 days. "
    "He has a history of chronic alcohol use. His temperature is 38.5 C. "
    "Which of the following is the most likely diagnosis?"
)
EXAMPLE_OPTIONS = {
    "A": "Acute pancreatitis", "B": "Appendicitis", "C": "Cholecystitis", "D": "Gastritis",
}

_BUILTIN: list[Operator] = []


def _add(
    id: str,
    family: str,
    variant: str,
    name: str,
    intent: str | None,
    locus: str | None,
    target: str,
    fn: EditFn,
    description: str,
    example: str,
    **extra: Any,
) -> None:
    block = family[0] if family[:1] in ("F", "M") and family[1:].isdigit() else family
    extra.setdefault("params", ())  # a built-in declares every setting it reads
    _BUILTIN.append(
        Operator(id, family, variant, name, intent, locus, target, block, description, example,
                 fn, **extra)
    )


# ---- F-block (chain; model continues from the edited chain) -------------------------------
for _pct in (25, 50, 75):
    _add(f"F1_truncate_{_pct}", "F1", str(_pct), f"truncate to {_pct}% of steps", "D", "Str",
         "chain", chain.truncate(_pct),
         f"Keep the first {_pct}% of the steps (max(1, floor(n*{_pct}/100))); split at 'Step n:' "
         "markers, else at blank lines. Not fired when every step would be kept.",
         EXAMPLE_CHAIN)
for _v in "abc":
    _add(f"F2_delete_{_v}", "F2", _v, f"delete one step ({_v})", "D", "Str", "chain",
         chain.delete_step,
         "Drop one randomly chosen step; independent seed offset per variant. Not fired on a "
         "one-step chain.", EXAMPLE_CHAIN)
for _v in "abc":
    _add(f"F3_substitute_{_v}", "F3", _v, f"substitute a number ({_v})", "D", "Str", "chain",
         chain.substitute_number,
         r"Shift one random numeric literal (regex \d+(?:\.\d+)?, reconstructed) by an offset "
         "from {-3,-1,+1,+2,+7}; results below 0 clamp to 0 and a no-op is not fired.",
         EXAMPLE_CHAIN, params=("skip_step_numbers",))
for _v in "ab":
    _add(f"F4_insert_{_v}", "F4", _v, f"insert a filler note ({_v})", "P", "Sur", "chain",
         chain.insert_note,
         "Insert one of the four generic notes at a random step boundary (0..n).",
         EXAMPLE_CHAIN)
for _v in "ab":
    _add(f"F5_reorder_{_v}", "F5", _v, f"swap adjacent steps ({_v})", "D", "Str", "chain",
         chain.swap_adjacent,
         "Swap one randomly chosen pair of adjacent steps (a step's 'Step n:' marker moves "
         "with it). Not fired under two steps.", EXAMPLE_CHAIN)
for _v in "ab":
    _add(f"F6_paraphrase_{_v}", "F6", _v, f"synonym map ({_v})", "P", "Sur", "chain",
         chain.synonym_map(_v),
         f"Apply synonym map ({_v}) of six entries to every whole-word, case-insensitive "
         "occurrence, keeping capitalisation.", EXAMPLE_CHAIN)
for _v in "ab":
    _add(f"F7_commute_{_v}", "F7", _v, f"commute 'X and Y' ({_v})", "P", "Str", "chain",
         chain.commute_and,
         r"Swap the operands of one match of (\w+[\w \-]{0,30})\s+and\s+(\w+[\w \-]{0,30}) "
         "(class reconstructed) whose operands have at most 5 words and differ.",
         EXAMPLE_CHAIN)

# ---- M-block (question; model re-solves) ---------------------------------------------------
for _v in "ab":
    _add(f"M1_ablation_{_v}", "M1", _v, f"fact ablation ({_v})", "D", "Str", "question",
         question.ablate_sentence,
         "Drop one random non-terminal sentence; the final two sentences are protected. Not "
         "fired under three sentences.", EXAMPLE_STEM)
for _v in "ab":
    _add(f"M2_age_{_v}", "M2", f"age-{_v}", f"age swap ({_v})", "D", "Sur", "question",
         question.swap_age,
         r"First (\d{1,3})[- ]*year[- ]*old (reconstructed): <18 -> one of 55/65/72, >60 -> "
         "one of 8/14/17, else one of 5/12/75/85.", EXAMPLE_STEM)
_add("M2_sex", "M2", "sex", "sex swap", "D", "Sur", "question", question.swap_sex,
     "Flip man<->woman, male<->female, boy<->girl (every whole-word occurrence; pronouns are "
     "not in the paper's table and stay).", EXAMPLE_STEM)
for _v in "ab":
    _add(f"M3_distractor_{_v}", "M3", _v, f"distractor ({_v})", "P", "Str", "question",
         question.prepend_distractor,
         "Prepend one of the five non-decisive sentences (always fires).", EXAMPLE_STEM)
for _v, _order in (("a", "table order"), ("b", "reverse order")):
    _add(f"M4_negation_{_v}", "M4", _v, f"negation ({_v})", "D", "Sur", "question",
         question.negate(_v),
         f"Negate the first hinge phrase, scanning in {_order}: presents with / reports / has "
         "a history of / complains of.",
         "A 30-year-old woman presents with fever and reports a productive cough.")
for _v in "ab":
    _add(f"M5_severity_{_v}", "M5", _v, f"severity inversion ({_v})", "D", "Sur", "question",
         question.invert_severity(_v),
         "Invert the first severity qualifier in the variant's scan order (targets "
         f"reconstructed; 'moderate' -> {'severe' if _v == 'a' else 'mild'}).",
         "A 60-year-old woman with moderate persistent asthma has a severe exacerbation.")
for _v, _n in (("a", "five"), ("b", "seven")):
    _add(f"M6_temporal_{_v}", "M6", _v, f"temporal shift ({_v})", "P", "Sur", "question",
         question.shift_time(_v),
         f"Rewrite the first of {_n} time phrases (paper's scan order) to another scale.",
         "She has had a cough for the past 5 days and a fever since yesterday.")

F_BLOCK: list[str] = [op.id for op in _BUILTIN if op.block == "F"]
M_BLOCK: list[str] = [op.id for op in _BUILTIN if op.block == "M"]

# ---- Coherent variants of M2/M4/M5 (PAW's extension; not in the battery) -------------------
_add("M2_sex_coherent", "M2", "sex-coherent", "sex swap, pronouns follow", "D", "Sur",
     "question", coherent.swap_sex,
     "PAW's extension of M2 sex: the marker flips and the patient's own pronouns follow it "
     "(relatives keep theirs). Not in the battery: name it in --operators.", EXAMPLE_STEM)
for _v in "ab":
    _add(f"M2_age_{_v}_coherent", "M2", f"age-{_v}-coherent", f"age swap ({_v}), noun-aware",
         "D", "Sur", "question", coherent.swap_age,
         "PAW's extension of M2 age: a target of the bracket that fits the age noun (boy/girl "
         "under 18, man/woman from 18, G/P notation 14-55), else the noun follows the age "
         "(boy -> man), else not fired. Not in the battery.", EXAMPLE_STEM)
for _v in "ab":
    _add(f"M4_negation_{_v}_coherent", "M4", f"{_v}-coherent",
         f"negation ({_v}), no double negative", "D", "Sur", "question", coherent.negate(_v),
         "PAW's extension of M4: a hinge phrase already followed by a negation is skipped. "
         "Not in the battery.", "A 30-year-old woman reports no fever and has a history of asthma.")
for _v in "ab":
    _add(f"M5_severity_{_v}_coherent", "M5", f"{_v}-coherent",
         f"severity inversion ({_v}), names kept", "D", "Sur", "question",
         coherent.invert_severity(_v),
         "PAW's extension of M5: severity words inside a named condition or stock phrase "
         "(COPD, 'in no acute distress', ...) stay; the first other one is inverted. Not in "
         "the battery.",
         "A 60-year-old man with chronic obstructive pulmonary disease has a severe cough.")
COHERENT: list[str] = [op.id for op in _BUILTIN if op.id.endswith("_coherent")]
"""The coherent variants (docs/operators.md), by id; each names its literal operator."""

# ---- Baselines, controls, demographic prefixes, option shuffle -----------------------------
_add("fixed_sentence", "baseline", "fixed", "fixed sentence (configurable)", None, None,
     "question", baselines.fixed_sentence,
     "Prepend a fixed, topically irrelevant sentence (seed 000). params: sentence = "
     "family_member | profile_viewed | record_reviewed (default) | any text.", EXAMPLE_STEM,
     params=("sentence",))
for _name, _sentence in baselines.FIXED_SENTENCES.items():
    _add(f"fixed_sentence_{_name}", "baseline", _name, f"fixed sentence: {_name}", None, None,
         "question", baselines.prepend(_sentence), f"Prepend seed 000's '{_sentence}'.",
         EXAMPLE_STEM)
_add("paraphrase_token_adjusted", "baseline", "table", "token-adjusted paraphrase", None, None,
     "question", paraphrase_operator(),
     "Deterministic table paraphrase whose token-change fraction matches params "
     "target_fraction (default 0.10) within tolerance (default 0.03); reports the fraction.",
     EXAMPLE_STEM, params=("target_fraction", "tolerance", "strict", "paraphraser"))
for _key, _prefix in baselines.DEMOGRAPHIC_PREFIXES.items():
    _add(f"demo_prefix_{_key}", "demographic", _key, f"demographic prefix {_key}", None, None,
         "question", baselines.prepend(_prefix),
         f"Prepend '{_prefix}' (seed 003); compare with the unprefixed baseline.", EXAMPLE_STEM)
_add("gender_swap", "demographic", "gender_swap", "gender swap (every gendered term)", None,
     None, "question", baselines.swap_gender,
     "Swap every gendered term (he<->she, man<->woman, his/him -> her, ...), the targeted "
     "edit of seed 000; details.direction = +1 to female, -1 to male (§4.3).", EXAMPLE_STEM)
_add("option_shuffle", "shuffle", "permute", "option shuffle", None, None, "options",
     shuffle.option_shuffle,
     "One fixed non-identity permutation of the options per item (seed 002 App. D); gold "
     "remapped.", EXAMPLE_STEM, example_options=EXAMPLE_OPTIONS, example_gold="A")
_add("control_recall", "control", "recall", "recall control (gender swap)", None, None,
     "question", baselines.control_recall,
     "Gender-swap every gendered term, replace the final question with 'Is this patient "
     "male?' (options Yes/No). Reference text in details.", EXAMPLE_STEM)
_add("control_precision", "control", "precision", "precision control (age + 1)", None, None,
     "question", baselines.control_precision,
     "Add one year to the first age, replace the final question with 'Is this patient "
     "male?' (options Yes/No). Reference text in details.", EXAMPLE_STEM)

OPERATORS: dict[str, Operator] = {op.id: op for op in _BUILTIN}
"""The built-in catalogue in paper order; `load_catalogue()` adds user-defined operators."""


def load_catalogue() -> dict[str, Operator]:
    """Built-in operators followed by user-defined ones (rules files and entry points).

    Raises:
        UserError: a rules file is malformed or a user id collides with another id.
    """
    from workbench.perturb.user import load_user_operators

    catalogue = dict(OPERATORS)
    for op in load_user_operators():
        if op.id in catalogue:
            raise UserError(f"{op.source}: id: expected a new operator id, got {op.id!r} (taken)")
        catalogue[op.id] = op
    return catalogue


def get_operator(operator_id: str) -> Operator:
    """Look up an operator by id (built-in first, then user-defined).

    Raises:
        UserError: no such operator; the message names the known ids.
    """
    if operator_id in OPERATORS:
        return OPERATORS[operator_id]
    catalogue = load_catalogue()
    if operator_id in catalogue:
        return catalogue[operator_id]
    raise UserError(
        f"operator: expected one of {', '.join(catalogue)}, got {operator_id!r}"
    )


def apply(operator_id: str, text: str, **kwargs: Any) -> PerturbResult:
    """Apply the operator `operator_id` to `text` (keyword arguments as `Operator.apply`)."""
    return get_operator(operator_id).apply(text, **kwargs)


def example_result(op: Operator, params: Mapping[str, Any] | None = None) -> PerturbResult:
    """The operator's worked example, applied with seed 0 and item key "example"."""
    return op.apply(
        op.example_input,
        seed=0,
        item_key="example",
        options=op.example_options,
        gold=op.example_gold,
        params=params,
    )
