"""How one flipped case is drawn: highlighted edits, options with gold, distribution bars.

Rich `Text` built from `analysis.flips.case.FlipCase` (no queries here), shared by the
inspector's case screen; `paw flips show` draws the same case with its own console output.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from analysis.flips.case import FlipCase

REMOVED = "strike bold red"
"""Style of text the edit removed (in the original)."""

INSERTED = "bold black on green"
"""Style of text the edit inserted (in the edited version)."""

BAR_WIDTH = 16
"""Cells of a probability bar."""


def highlighted(text: str, spans: Sequence[tuple[int, int]], style: str) -> Text:
    """`text` with the character spans in `style`."""
    out = Text(text)
    for start, end in spans:
        out.stylize(style, start, end)
    return out


def prob_bar(p: float, width: int = BAR_WIDTH) -> str:
    """A bar of `width` cells for a probability in [0, 1]."""
    filled = round(max(0.0, min(1.0, p)) * width)
    return "█" * filled + "·" * (width - filled)


def options_text(options: Sequence[tuple[str, str]], gold: str, answer_before: str | None,
                 answer_after: str | None) -> Text:
    """One line per option: label, text, gold mark, and which answer chose it."""
    out = Text()
    for label, option in options:
        line = Text(f"{label:>5}  ")
        if option.strip() != label:  # a yes/no option is its own text: shown once
            line.append(option, style="bold" if label == gold else "")
        if label == gold:
            line.append("  ◆ gold", style="bold green")
        marks = []
        if label == answer_before:
            marks.append("before")
        if label == answer_after:
            marks.append("after")
        if marks:
            line.append(f"  ← {' & '.join(marks)}", style="bold yellow")
        out.append_text(line)
        out.append("\n")
    out.rstrip()
    return out


def shuffle_options_text(case: FlipCase) -> Text:
    """A shuffle's options before and after, side by side in one list: each original option
    with the letter it moved to, the gold and which answer chose it (by text, as the JSD)."""
    moved = {text: label for label, text in case.options_after}
    out = Text()
    out.append("before → after the shuffle\n", style="dim")
    for label, option in case.options_before:
        new = moved.get(option, "?")
        line = Text(f"{label:>3} → {new:<3} {option}")
        if label == case.gold_before:
            line.append("  ◆ gold", style="bold green")
        marks = []
        if label == case.base_answer:
            marks.append("before")
        if new == case.answer:
            marks.append("after")
        if marks:
            line.append(f"  ← {' & '.join(marks)}", style="bold yellow")
        out.append_text(line)
        out.append("\n")
    out.rstrip()
    return out


def distribution_text(case: FlipCase) -> Text:
    """Option probabilities before and after the edit as bars, and their JSD.

    For the option shuffle the rows are the original options and each bar pair is one
    option *text* (its letter before → after), as the JSD compares them: letter A before
    and letter A after are different options.
    """
    if case.role == "shuffle":
        return _shuffle_distribution(case)
    before = dict(case.probs_before)
    after = dict(case.probs_after)
    labels = list(dict.fromkeys([label for label, _ in case.probs_before] +
                                [label for label, _ in case.probs_after]))
    out = Text()
    if not labels:
        out.append("no option distribution stored", style="dim")
        return out
    out.append(f"{'':>5}  {'before':<{BAR_WIDTH + 6}}  after\n", style="dim")
    for label in labels:
        pb, pa = before.get(label), after.get(label)
        left = f"{prob_bar(pb)} {pb:4.2f}" if pb is not None else " " * (BAR_WIDTH + 5)
        right = f"{prob_bar(pa)} {pa:4.2f}" if pa is not None else ""
        out.append(f"{label:>5}  {left}  {right}\n")
    jsd = "–" if case.jsd is None else f"{case.jsd:.3f} bits"
    out.append(f"JSD(before, after) = {jsd}", style="bold")
    return out


def _shuffle_distribution(case: FlipCase) -> Text:
    before, after = dict(case.probs_before), dict(case.probs_after)
    moved = {text: label for label, text in case.options_after}
    out = Text()
    if not before and not after:
        out.append("no option distribution stored", style="dim")
        return out
    out.append(f"{'option':<9}  {'before':<{BAR_WIDTH + 6}}  after  (matched by text)\n",
               style="dim")
    for label, option in case.options_before:
        new = moved.get(option)
        pb, pa = before.get(label), after.get(new) if new else None
        left = f"{prob_bar(pb)} {pb:4.2f}" if pb is not None else " " * (BAR_WIDTH + 5)
        right = f"{prob_bar(pa)} {pa:4.2f}" if pa is not None else ""
        out.append(f"{label:>3} → {new or '?':<3}  {left}  {right}\n")
    jsd = "–" if case.jsd is None else f"{case.jsd:.3f} bits"
    out.append(f"JSD(before, after) = {jsd}", style="bold")
    return out


def header_text(case: FlipCase) -> Text:
    """Who and what: case id, run, arm, item, edit, answers."""
    flipped = {True: "FLIPPED", False: "kept", None: case.excluded or "not scored"}
    out = Text()
    out.append(f"case {case.id}", style="bold")
    out.append(f" · {case.audit} · {case.arm} · {case.dataset}/{case.item} · "
               f"{case.operator_id} ({case.family}, intent {case.intent or '–'}) · ")
    out.append(flipped[case.flipped], style="bold red" if case.flipped else "bold")
    out.append("\nanswer ")
    for n, (label, text) in enumerate(((case.base_answer, case.base_text),
                                       (case.answer, case.answer_text))):
        if n:
            out.append("  →  ")
        out.append(label or "–", style="bold")
        if text and text.strip() != label:  # a yes/no answer is its own text
            out.append(f" {text}")
    if case.chain_updated is not None:
        out.append(f" · chain updated (token rule): {'yes' if case.chain_updated else 'no'}")
    for method, verdict in case.judge:
        out.append(f" · {method}: {verdict}")
    return out


def ids_text(case: FlipCase) -> str:
    """The case in the store's terms, for a script."""
    return (f"job {case.id} · audit {case.audit_id} · arm {case.arm_id} · item {case.item_id} "
            f"· variant {case.variant_id} · generation {case.generation_id} · baseline "
            f"generation {case.base_generation_id}\n"
            f"python: from analysis.flips.case import flip_case; flip_case(db, {case.id})\n"
            f"sql: SELECT * FROM jobs WHERE id = {case.id}")
