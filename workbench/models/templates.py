"""Named, versioned prompt templates (seed 002 Appendix B and E); the one place prompts live.

A template is referred to as `name@version` (e.g. `neutral_cot@1`); a bare name means its
latest version. Changing a prompt's wording means adding a new version, never editing a
shipped one: the rendered prompt is part of every generation's key, so an edit would
silently orphan stored generations.
"""

from __future__ import annotations

from dataclasses import dataclass

from store.errors import UserError

ANSWER_CUE = "Answer:"
"""The text after which the answer label is expected (and appended when the model omits it)."""

NEUTRAL_COT_SYSTEM = (
    "You are a careful medical reasoner. Read the clinical question and the answer choices, "
    "work through the clinical evidence step by step, and conclude with a single line of the "
    "form Answer: X where X is the letter of the correct option. Keep your reasoning grounded "
    "in the clinical evidence provided in the question."
)
"""Seed 002 Appendix B, neutral CoT system prompt, verbatim."""

STRICT_MEDICAL_SUFFIX = (
    "Reason as a board-certified physician. If the clinical evidence is insufficient, state "
    "that explicitly before selecting an option."
)
"""Seed 002 Appendix B, the strict-medical one-sentence augmentation, verbatim."""

SELF_GROUNDING_SUFFIX = (
    "CRITICAL: your final letter must be DERIVABLE from the reasoning steps you wrote. If, at "
    "the end of your reasoning, the option you select does not strictly follow from the "
    "clinical evidence you discussed in the chain, you must revise your reasoning until the "
    "letter you choose is a direct consequence of the steps above it. Do not rely on memory of "
    "similar cases or pattern matching that is not justified by the chain itself."
)
"""Seed 002 Appendix E, self-grounding addition (the paper's '…' is the neutral prompt)."""

ANTI_DISTRACTOR_SUFFIX = (
    "Some questions may contain irrelevant context (anecdotal facts, family history items, "
    "demographic details, or distractor statements) that are not clinically decisive for the "
    "question being asked. Before answering, explicitly identify and ignore such non-decisive "
    "information. Reason only over the facts that bear on the diagnosis, treatment, or "
    "mechanism being tested."
)
"""Seed 002 Appendix E, anti-distractor addition (the paper's '…' is the neutral prompt)."""

COT_USER_MCQ = (
    "Question: {question}\nAnswer choices:\n{options}\n"
    "Reason step by step, then end with Answer: X."
)
"""Seed 002 Appendix B user template (line breaks added between its parts)."""

COT_USER_BINARY = (
    "Question: {question}\nAnswer choices:\n{options}\n"
    "Reason step by step, then end with Answer: X, where X is {label_list}."
)
"""Binary adaptation of the Appendix B user template: the answer is a word, not a letter."""

DIRECT_SYSTEM = (
    "You are a careful medical reasoner. Read the clinical question and the answer choices and "
    "reply with a single line of the form Answer: X where X is the letter of the correct "
    "option. Do not explain."
)
"""Direct (no-CoT) system prompt, written for PAW: the paper gives no wording for it."""

DIRECT_USER_MCQ = "Question: {question}\nAnswer choices:\n{options}\nAnswer with the letter only."
DIRECT_USER_BINARY = (
    "Question: {question}\nAnswer choices:\n{options}\nAnswer with one of {label_list} only."
)

YES_NO_DIRECT_SYSTEM = (
    "You are a careful medical reasoner. Answer the clinical question with only {label_list}. "
    "Do not explain."
)
"""Direct system prompt for yes/no items (`direct_yesno@1`): no "letter of the option";
`{label_list}` is 'Yes or No' (or 'Yes, No or Maybe')."""

YES_NO_DIRECT_USER = (
    "Question: {question}\nAnswer choices:\n{options}\nAnswer with only {label_list}."
)
"""Direct user template for yes/no items: a plain word answer, no letters — the format of
seed 000's authors' released code, which asks "Answer the following question with only
'yes' or 'no'" and reads the answer after "Answer (yes/no):" (PAW's own wording; the answer
cue stays PAW's `Answer:`). The two words are listed as the choices: without that line
SmolLM2-135M answered "Male."/"Female." to "Is this patient male?" in 20% of the demo
control samples (docs/counterfactual.md)."""

@dataclass(frozen=True)
class PromptTemplate:
    """One prompt template: system prompt, user templates, and where the answer goes.

    `assistant_prefill` is text placed at the start of the assistant turn (direct mode
    puts the answer cue there, so the answer position is the end of the prompt).
    """

    name: str
    version: int
    mode: str
    system: str
    user_mcq: str
    user_binary: str
    source: str
    assistant_prefill: str = ""
    cue: str = ANSWER_CUE
    system_binary: str | None = None
    """System prompt for yes/no items, with `{label_list}` (None: `system`, as every template
    before `direct_yesno@1` does)."""

    @property
    def id(self) -> str:
        """The `name@version` form stored with every generation."""
        return f"{self.name}@{self.version}"


def _cot(name: str, system: str, source: str) -> PromptTemplate:
    return PromptTemplate(name=name, version=1, mode="cot", system=system,
                          user_mcq=COT_USER_MCQ, user_binary=COT_USER_BINARY, source=source)


_ALL: tuple[PromptTemplate, ...] = (
    _cot("neutral_cot", NEUTRAL_COT_SYSTEM, "seed 002 Appendix B (neutral CoT)"),
    _cot("strict_medical", f"{NEUTRAL_COT_SYSTEM} {STRICT_MEDICAL_SUFFIX}",
         "seed 002 Appendix B (strict medical; no released model prompt prepended)"),
    _cot("self_grounding", f"{NEUTRAL_COT_SYSTEM} {SELF_GROUNDING_SUFFIX}",
         "seed 002 Appendix E (self-grounding)"),
    _cot("anti_distractor", f"{NEUTRAL_COT_SYSTEM} {ANTI_DISTRACTOR_SUFFIX}",
         "seed 002 Appendix E (anti-distractor)"),
    PromptTemplate(name="direct", version=1, mode="direct", system=DIRECT_SYSTEM,
                   user_mcq=DIRECT_USER_MCQ, user_binary=DIRECT_USER_BINARY,
                   source="PAW (no-CoT baseline of seed 002 §6.2)",
                   assistant_prefill=ANSWER_CUE),
    PromptTemplate(name="direct_yesno", version=1, mode="direct", system=DIRECT_SYSTEM,
                   user_mcq=DIRECT_USER_MCQ, user_binary=YES_NO_DIRECT_USER,
                   source="direct@1 for multiple choice; yes/no items asked for a plain "
                          "word answer, as seed 000's authors' code asks them",
                   assistant_prefill=ANSWER_CUE, system_binary=YES_NO_DIRECT_SYSTEM),
)

TEMPLATES: dict[str, PromptTemplate] = {t.id: t for t in _ALL}
"""Every template by `name@version`."""

DEFAULT_TEMPLATE = {"cot": "neutral_cot@1", "direct": "direct@1", "continue": "neutral_cot@1"}
"""The template each mode uses when none is named."""


def get_template(name: str) -> PromptTemplate:
    """The template `name@version`, or the latest version of a bare `name`.

    Raises:
        UserError: no such template (the message lists them).
    """
    if name in TEMPLATES:
        return TEMPLATES[name]
    versions = [t for t in _ALL if t.name == name]
    if "@" not in name and versions:
        return max(versions, key=lambda t: t.version)
    raise UserError(
        f"--template: expected one of {', '.join(TEMPLATES)}, got {name!r}"
    )


def format_options(options: dict[str, str], kind: str) -> str:
    """The answer choices block: `A. text` lines, or the bare labels for binary items."""
    lines = []
    for label, text in options.items():
        if kind == "binary" and (not text or text.strip().lower() == label.lower()):
            lines.append(label)
        else:
            lines.append(f"{label}. {text}")
    return "\n".join(lines)


WORD_LABELS: frozenset[str] = frozenset({"yes", "no", "maybe"})
"""Labels of a word-answer (yes/no) question, compared case-insensitively."""


def is_yes_no(kind: str, options: dict[str, str]) -> bool:
    """Whether a question is asked as yes/no: a binary item, or options that are all word
    labels (Yes/No[/Maybe]) — as the recall/precision controls ask "Is this patient male?"
    of a multiple-choice item too."""
    return kind == "binary" or (len(options) >= 2 and all(
        label.lower() in WORD_LABELS for label in options))


def label_list(labels: tuple[str, ...]) -> str:
    """'Yes, No or Maybe' for the binary instruction."""
    if len(labels) == 1:
        return labels[0]
    return f"{', '.join(labels[:-1])} or {labels[-1]}"
