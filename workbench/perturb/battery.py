"""Seed 002's battery (F-block, M-block, the Appendix D option shuffle) and the `--operators`
words that select from it, read alike by `paw audit`, `paw dbpa` and the UI's launch form.
"""

from __future__ import annotations

from store.errors import UserError
from workbench.perturb.base import Operator
from workbench.perturb.catalogue import F_BLOCK, M_BLOCK, OPERATORS, load_catalogue

SHUFFLE_OPERATOR = "option_shuffle"
"""The Appendix D option shuffle: the catalogue id an audit plans with role 'shuffle'."""


def resolve_operators(text: str | None) -> tuple[str, ...]:
    """The operator ids an `--operators` value selects, in catalogue (paper) order.

    Args:
        text: comma-separated words: 'all' (F-block, M-block and the option shuffle),
            'F' or 'M' (one block), 'shuffle', a family ('F1', 'M2'), or operator ids.
            None or empty means 'all'.

    Raises:
        UserError: a word names no operator of the seed-002 battery.
    """
    battery = list(F_BLOCK) + list(M_BLOCK) + [SHUFFLE_OPERATOR]
    families = {OPERATORS[op].family for op in battery}
    chosen: set[str] = set()
    extras: list[str] = []  # user-defined operators and question-level baselines, in given order
    catalogue: dict[str, Operator] | None = None
    for word in (w.strip() for w in (text or "all").split(",")):
        if not word:
            continue
        if word.lower() == "all":
            chosen.update(battery)
        elif word in ("F", "M"):
            chosen.update(F_BLOCK if word == "F" else M_BLOCK)
        elif word.lower() == "shuffle":
            chosen.add(SHUFFLE_OPERATOR)
        elif word in families:
            chosen.update(op for op in battery if OPERATORS[op].family == word)
        elif word in battery:
            chosen.add(word)
        else:
            catalogue = catalogue if catalogue is not None else load_catalogue()
            if word not in catalogue or not auditable(catalogue[word]):
                raise UserError(
                    f"--operators: expected all, F, M, shuffle, a family (F1..F7, M1..M6), "
                    f"a battery id ({', '.join(battery)}) or a user-defined or baseline "
                    f"operator that edits the question or the chain (`paw operators`), "
                    f"got {word!r}"
                )
            if word not in extras:
                extras.append(word)
    if not chosen and not extras:
        raise UserError("--operators: expected at least one operator, got none")
    return tuple(op for op in battery if op in chosen) + tuple(extras)


def auditable(op: Operator) -> bool:
    """Whether an audit can run `op` beside the battery: it edits the question stem or the
    chain and keeps the options (controls change the question asked, so they are not)."""
    return op.target in ("question", "chain") and op.block != "control"


def fcs_gap(operators: tuple[str, ...]) -> str:
    """Why a battery can never give FCS (nor MFC, the corridor or the plane's point), or ""
    when it can: FCS = 0.5·AFR_D + 0.5·(1 − AFR_P) needs destructive and preserving edits
    of the families the default AFR reading pools (`analysis.audit.definitions`)."""
    from analysis.audit.definitions import AFR_READING, AFR_READINGS

    label, families = AFR_READINGS[AFR_READING]
    catalogue = load_catalogue()
    ops = [catalogue[op] for op in operators if op in catalogue]
    intents = {op.intent for op in ops if op.family in families}
    missing = [code for code in ("D", "P") if code not in intents]
    if not missing:
        return ""
    battery = [OPERATORS[op] for op in list(F_BLOCK) + list(M_BLOCK)]
    names = {"D": "destructive", "P": "preserving"}
    examples = {code: list(dict.fromkeys(op.family for op in battery
                                         if op.family in families and op.intent == code))
                for code in missing}
    return (f"FCS (and MFC, the corridor) cannot be computed: this battery has no "
            f"{' and no '.join(names[c] for c in missing)} {label}-block edit; add "
            + " and ".join(f"{', '.join(examples[c][:3])} ({names[c]})" for c in missing))
