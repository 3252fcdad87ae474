"""One edit's presentation, the same for `paw flips show` and the flip inspector: which panes a
case has and, per job role, their titles, the edit's highlight, the options (a shuffle's by
option text), the answers and the option distributions before and after.

`case_panes` decides all of it from an `analysis.flips.case.FlipCase`; `print_case` prints the
panes one under the other (colour on a terminal, [-removed-] / {+inserted+} on a pipe) and the
inspector mounts each pane in its own bordered widget (`Pane.text()` is a Rich renderable).
Neither front end chooses a title, a mark or an order.

The titles follow the job roles (docs/design.md, docs/robustness.md): an M-block edit, a
seed-003 demographic prefix or substitution and a seed-003 CFV re-answer edit the question
(`EDITED_TITLES`); a shuffle edits the options and an F-block edit the chain, so their
question is shown once, unedited.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO, cast

from analysis.audit.definitions import AuditRole
from analysis.robustness.definitions import RobustnessRole
from workbench.present.segments import (
    BAR_WIDTH,
    STYLES,
    Segment,
    bar,
    lines,
    marked,
    plain_text,
    styled,
)

if TYPE_CHECKING:
    from rich.text import Text

    from analysis.flips.case import FlipCase

ROLE_NAMES: dict[str, str] = {
    AuditRole.M_BLOCK: "question edit (M-block)", AuditRole.F_BLOCK: "chain edit (F-block)",
    AuditRole.SHUFFLE: "option shuffle", RobustnessRole.DEMOGRAPHIC: "demographic edit (seed 003)",
    RobustnessRole.CFV_ANSWER: "counterfactual change (seed 003 CFV)",
}
"""What each kind of edit is called (by job role)."""

EDITED_TITLES: dict[str, str] = {
    AuditRole.M_BLOCK: "Edited question",
    RobustnessRole.DEMOGRAPHIC: "Question with the demographic edit",
    # docs/robustness.md: stage 2 re-answers "the model's own changed case".
    RobustnessRole.CFV_ANSWER: "Changed case (the model's own CFV proposal)",
}
"""Roles whose question was edited, and the title of the edited text."""

UNEDITED_NOTES: dict[str, str] = {
    AuditRole.SHUFFLE: "(not edited: the options were shuffled)",
    AuditRole.F_BLOCK: "(not edited: the edit is in the chain below)",
}
"""Why the question of a role that edits something else is shown once."""

INTENT_NAMES: dict[str, str] = {"D": "destructive", "P": "preserving"}
LOCUS_NAMES: dict[str, str] = {"Str": "structural", "Sur": "surface"}

PANE_KEYS: tuple[str, ...] = ("header", "context", "original", "edited", "options",
                              "distribution", "chain_original", "chain_edited", "output",
                              "baseline")
"""Every pane a case can have, in the order they are shown (the inspector's widget ids)."""


@dataclass(frozen=True)
class Pane:
    """One part of a case: where it goes, its title and note, and its styled runs.

    Attributes:
        key: one of `PANE_KEYS` (the inspector's widget id).
        title: the heading (CLI) or border title (inspector); '' for the header.
        note: a dim aside after the heading (CLI) or under the pane (inspector).
        body: the runs, style names from `segments.STYLES`.
    """

    key: str
    title: str
    note: str
    body: tuple[Segment, ...]

    def text(self) -> Text:
        """The body as a Rich `Text`."""
        return styled(self.body)

    def plain(self) -> str:
        """The body as plain text with the edit's markers."""
        return plain_text(self.body)


def case_panes(case: FlipCase, plain: bool = False) -> tuple[Pane, ...]:
    """Every pane of one case, in order.

    Args:
        case: the case (`analysis.flips.case.flip_case`).
        plain: bars drawn with '#' (a pipe) instead of block characters.
    """
    panes = [Pane("header", "", "", tuple(_header(case)))]
    if case.context:
        panes.append(Pane("context", "Context", "", ((case.context, "dim"),)))
    removed, inserted = case.question_spans
    if case.role in EDITED_TITLES:
        panes.append(Pane("original", "Original question", "(removed or replaced words marked)",
                          tuple(marked(case.question, removed, "removed"))))
        panes.append(Pane("edited", EDITED_TITLES[case.role],
                          "(as the model saw it; inserted words marked)",
                          tuple(marked(case.edited_question, inserted, "inserted")
                                + _recorded_edit(case))))
    else:
        panes.append(Pane("original", "Question", UNEDITED_NOTES.get(case.role, "(unchanged)"),
                          ((case.question, None),)))
    panes.append(_options(case))
    panes.append(_distributions(case, plain))
    if case.role == AuditRole.F_BLOCK:
        old, new = case.chain_spans
        panes += [
            Pane("chain_original", "Original chain",
                 "(the arm's baseline chain, final answer stripped)",
                 tuple(marked(case.original_chain or "", old, "removed"))),
            Pane("chain_edited", "Edited chain", "(the model continued from here)",
                 tuple(marked(case.edited_chain or "", new, "inserted"))),
            Pane("output", "Continuation", "(the model's text after the edited chain)",
                 ((case.output or "(not generated)", None),))]
    else:
        panes += [
            Pane("output", "Chain after the edit", "",
                 ((case.output or "(not generated)", None),)),
            Pane("baseline", "Baseline chain", "(the same arm on the original question)",
                 ((case.baseline_output or "(not generated)", "dim"),))]
    return tuple(panes)


def _short(text: str | None, width: int = 60) -> str:
    if text is None:
        return "(nothing)"
    text = " ".join(text.split())
    return repr(text if len(text) <= width else text[: width - 1] + "…")


def _answer(label: str | None, text: str | None) -> str:
    """A label with its option's text (once, for a yes/no option that is its own text)."""
    if label is None:
        return "(no answer parsed)"
    return f"{label} ({text})" if text and text.strip() != label else label


def _header(case: FlipCase) -> list[Segment]:
    """What, where, and the verdict: flipped or kept, JSD, token rule, judge."""
    tags = ", ".join(t for t in (case.family, INTENT_NAMES.get(case.intent or "", case.intent),
                                 LOCUS_NAMES.get(case.locus or "", case.locus)) if t)
    before = _answer(case.base_answer, case.base_text)
    after = _answer(case.answer, case.answer_text)
    state: Segment
    if case.flipped is None:
        state = (f"not compared: {case.excluded}", "dim")
    elif case.role == AuditRole.SHUFFLE:  # the same letter can be another option: say the texts
        state = (f"{'FLIPPED' if case.flipped else 'kept'} {before} -> {after}",
                 "flip" if case.flipped else "kept")
    elif case.flipped:
        state = (f"FLIPPED {case.base_answer} -> {case.answer}", "flip")
    else:
        state = (f"kept {case.answer}", "kept")
    jsd = "–" if case.jsd is None else f"{case.jsd:.3f}"
    updated = "–" if case.chain_updated is None else "yes" if case.chain_updated else "no"
    judge = "; ".join(f"{v or '?'} ({m})" for m, v in case.judge) or "none"
    rows: list[list[str | Segment]] = [
        [(f"edit {case.id}: {case.operator_id}", "title"),
         f" ({tags}), {ROLE_NAMES.get(case.role, case.role)}"],
        [((f"audit {case.audit} · arm {case.arm} · model {case.model} · dataset "
           f"{case.dataset} · item {case.item} · job {case.status}"), "dim")],
        [state, (f"   JSD {jsd} bits   chain updated (token rule): {updated}   "
                 f"LLM judge: {judge}")]]
    if not case.fired:
        rows.append([(f"the operator did not fire: {case.reason or 'no match'}", "dim")])
    if case.incoherent:  # analysis.audit.coherence: the literal rule left a contradiction
        flagged = f"INCOHERENT EDIT: {', '.join(case.incoherent)} (docs/operators.md, Coherence)"
        rows.append([(flagged, "flip")])
    return lines(rows)


def _recorded_edit(case: FlipCase) -> list[Segment]:
    """The operator's recorded (old, new), or a CFV proposal's change and target."""
    if case.role == RobustnessRole.CFV_ANSWER:
        change = (f"proposed change: {_short(case.new, 100)}; target {case.gold_after} "
                  "(the answer the change is meant to make correct)")
        return [("\n", None), (change, "dim")]
    if case.old or case.new:
        return [("\n", None), (f"recorded edit: {_short(case.old)} -> {_short(case.new)}",
                               "dim")]
    return []


def _marks(case: FlipCase, label: str, after_label: str) -> list[Segment]:
    """The gold (and a CFV change's target) and which answer chose the option."""
    out: list[Segment] = []
    if label == case.gold_before:
        out.append(("  ◆ gold", "gold"))
    if case.role == RobustnessRole.CFV_ANSWER and label == case.gold_after:
        out.append(("  ◆ target of the change", "gold"))
    chose = [when for when, yes in (("before", label == case.base_answer),
                                    ("after", after_label == case.answer)) if yes]
    if chose:
        out.append((f"  ← {' & '.join(chose)}", "chosen"))
    return out


def _options(case: FlipCase) -> Pane:
    """The options, gold, and which answer chose which; then both answers with their texts.

    A shuffle lists each original option with the letter it moved to, and the answer after
    the shuffle marks the option whose *text* it chose: that is what a shuffle flip compares.
    """
    width = max([len(label) for label, _ in case.options_before] + [1])
    rows: list[list[str | Segment]] = []
    if case.role == AuditRole.SHUFFLE:
        moved = {text: label for label, text in case.options_after}
        new_width = max([len(label) for label, _ in case.options_after] + [1])
        for label, text in case.options_before:
            new = moved.get(text, "?")
            name = f"{label:<{width}} → {new:<{new_width}}  {text}"
            rows.append([(name, "gold" if label == case.gold_before else None),
                         *_marks(case, label, new)])
        title = "Options before → after the shuffle"
        note = "(each option's letter before → after; answers matched by option text)"
    else:
        for label, text in case.options_before:
            name = label if text.strip() == label else f"{label:<{width}}  {text}"
            rows.append([(name, "gold" if label == case.gold_before else None),
                         *_marks(case, label, label)])
        title, note = "Options", ""
    after_text = dict(case.options_after).get(case.answer or "")
    rows += [[], ["answer before: ",
                  (_answer(case.base_answer, dict(case.options_before).get(
                      case.base_answer or "")), "before"),
                  "   after: ", (_answer(case.answer, after_text), "after")]]
    return Pane("options", title, note, tuple(lines(rows)))


def _distributions(case: FlipCase, plain: bool) -> Pane:
    """Both option distributions as bars, one row per option; a shuffle's rows pair an
    option's probability before with the same *text's* under its new letter, as the JSD."""
    if not case.probs_before and not case.probs_after:
        return Pane("distribution", "Option distributions", "",
                    (("(no option distribution stored)", "dim"),))
    before, after = dict(case.probs_before), dict(case.probs_after)
    rows: list[tuple[str, float | None, float | None]]
    if case.role == AuditRole.SHUFFLE:
        moved = {text: label for label, text in case.options_after}
        rows = []
        for label, text in case.options_before:
            new = moved.get(text)
            rows.append((f"{label} → {new or '?'}", before.get(label),
                         after.get(new) if new else None))
        note = "(paired by option text, as the JSD)"
    else:
        rows = [(label, before.get(label), after.get(label))
                for label in dict.fromkeys([*before, *after])]
        note = ""
    width = max([len(name) for name, _, _ in rows] + [5])
    table: list[list[str | Segment]] = [
        [(f"{'':<{width}}  {'before':<{BAR_WIDTH + 5}}  after", "dim")]]
    for name, p, q in rows:
        row: list[str | Segment] = [f"{name:<{width}}  "]
        row += [(bar(p, plain), "before"), f" {p:4.2f}"] if p is not None else \
            [" " * (BAR_WIDTH + 5)]
        if q is not None:
            row += ["  ", (bar(q, plain), "after"), f" {q:4.2f}"]
        table.append(row)
    jsd = "–" if case.jsd is None else f"{case.jsd:.3f}"
    return Pane("distribution", f"Option distributions  JSD {jsd} bits", note,
                tuple(lines(table)))


def print_case(case: FlipCase, color: bool | None = None, file: TextIO | None = None) -> None:
    """Print a case's panes one under the other (`paw flips show`).

    Args:
        case: the case (`analysis.flips.case.flip_case`).
        color: styles on (True) or plain markers (False); default: on when `file` is a
            terminal and NO_COLOR is unset.
        file: where to print (default stdout).
    """
    out = file or sys.stdout
    if color is None:
        color = out.isatty() and not os.environ.get("NO_COLOR")
    panes = case_panes(case, plain=not color)
    if not color:
        for pane in panes:
            if pane.title:
                out.write(f"\n{pane.title}{f'  {pane.note}' if pane.note else ''}\n")
            if pane.body:
                pad = "  " if pane.title else ""
                out.write("\n".join(pad + row if row else row
                                     for row in pane.plain().split("\n")) + "\n")
        return
    from rich.console import Console
    from rich.padding import Padding
    from rich.text import Text

    from workbench.present.controls import EscapingStream, raw_stream

    # Colours are PAW's; any other sequence in a question or an answer is shown escaped.
    shown = cast("TextIO", EscapingStream(raw_stream(out), keep_sgr=True))
    console = Console(file=shown, force_terminal=True, highlight=False, emoji=False)
    for pane in panes:
        if pane.title:
            console.print()
            console.print(Text.assemble((pane.title, STYLES["heading"]),
                                        (f"  {pane.note}" if pane.note else "", "dim")))
        if pane.body:
            console.print(Padding(pane.text(), (0, 0, 0, 2 if pane.title else 0)))


def store_ids_text(case: FlipCase) -> str:
    """The case in the store's terms (job, variant and generation ids), for a script."""
    return (f"job {case.id} · audit {case.audit_id} · arm {case.arm_id} · item {case.item_id} "
            f"· variant {case.variant_id} · generation {case.generation_id} · baseline "
            f"generation {case.base_generation_id}\n"
            f"python: from analysis.flips.case import flip_case; flip_case(db, {case.id})\n"
            f"sql: SELECT * FROM jobs WHERE id = {case.id}")
