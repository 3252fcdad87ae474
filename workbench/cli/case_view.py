"""One flipped case drawn in the terminal (`paw flips show`): rich styles on a terminal, plain
text with [-removed-] / {+inserted+} markers on a pipe, from `analysis.flips.case.FlipCase`."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

Segment = tuple[str, str | None]
"""A run of text and its style name (None: unstyled)."""

STYLES: dict[str, str] = {
    "removed": "bold strike red",
    "inserted": "bold black on yellow",
    "heading": "bold underline",
    "title": "bold",
    "flip": "bold red",
    "kept": "bold green",
    "dim": "dim",
    "gold": "bold green",
    "before": "cyan",
    "after": "magenta",
}
"""Rich style of each style name (terminal only)."""

MARKERS: dict[str, tuple[str, str]] = {"removed": ("[-", "-]"), "inserted": ("{+", "+}")}
"""How a highlighted run is marked in plain text (wdiff's notation)."""

BAR_WIDTH = 20
"""Characters of a probability bar at p = 1."""

_EIGHTHS = " ▏▎▍▌▋▊▉"


def bar(p: float, color: bool, width: int = BAR_WIDTH) -> str:
    """A fixed-width bar for probability `p`: eighth-blocks on a terminal, '#' on a pipe."""
    p = max(0.0, min(1.0, float(p)))
    if not color:
        return ("#" * round(p * width)).ljust(width)
    full, part = divmod(round(p * width * 8), 8)
    return ("█" * full + (_EIGHTHS[part] if part else "")).ljust(width)


def marked(text: str, spans: Sequence[tuple[int, int]], style: str) -> list[Segment]:
    """`text` cut into runs, the `spans` (half-open character ranges) in `style`."""
    out: list[Segment] = []
    at = 0
    for start, end in sorted(spans):
        start, end = max(start, at), min(end, len(text))
        if start >= end:
            continue
        if start > at:
            out.append((text[at:start], None))
        out.append((text[start:end], style))
        at = end
    if at < len(text):
        out.append((text[at:], None))
    return out


class _Out:
    """Writes lines and indented paragraphs of segments, styled or plain."""

    def __init__(self, color: bool) -> None:
        self.color = color
        self.console: Any = None
        if color:
            from rich.console import Console

            self.console = Console(file=sys.stdout, force_terminal=True, highlight=False,
                                   emoji=False)

    def _plain(self, segments: Sequence[Segment]) -> str:
        parts = []
        for text, style in segments:
            left, right = MARKERS.get(style or "", ("", ""))
            parts.append(f"{left}{text}{right}")
        return "".join(parts)

    def line(self, *segments: str | Segment) -> None:
        """One line (wrapped by the terminal if long)."""
        runs = [(s, None) if isinstance(s, str) else s for s in segments]
        if not self.color:
            sys.stdout.write(self._plain(runs) + "\n")
            return
        from rich.text import Text

        self.console.print(Text.assemble(*[(t, STYLES.get(s or "", "")) for t, s in runs]))

    def para(self, segments: Sequence[Segment], indent: int = 2) -> None:
        """A paragraph (may hold newlines), indented."""
        if not self.color:
            pad = " " * indent
            text = self._plain(segments)
            sys.stdout.write("\n".join(pad + row for row in text.split("\n")) + "\n")
            return
        from rich.padding import Padding
        from rich.text import Text

        self.console.print(Padding(Text.assemble(
            *[(t, STYLES.get(s or "", "")) for t, s in segments]), (0, 0, 0, indent)))

    def heading(self, text: str, note: str = "") -> None:
        """A section title, with an optional dim note."""
        self.line("")
        self.line((text, "heading"), (f"  {note}" if note else "", "dim"))


ROLE_NAMES: dict[str, str] = {
    "m_block": "question edit (M-block)", "f_block": "chain edit (F-block)",
    "shuffle": "option shuffle", "demographic": "demographic edit (seed 003)",
    "cfv_answer": "counterfactual change (seed 003 CFV)",
}
"""What each kind of edit is called (by job role)."""

EDITED_TITLES: dict[str, str] = {
    "m_block": "Edited question",
    "demographic": "Question with the demographic edit",
    "cfv_answer": "Changed case (the model's own CFV proposal)",
}
"""Roles whose question was edited, and the title of the edited text."""


def _short(text: str | None, width: int = 60) -> str:
    if text is None:
        return "(nothing)"
    text = " ".join(text.split())
    return repr(text if len(text) <= width else text[: width - 1] + "…")


def _answer(label: str | None, text: str | None) -> str:
    if label is None:
        return "(no answer parsed)"
    return f"{label} ({text})" if text and text != label else label


def print_case(case: Any, color: bool | None = None) -> None:
    """Print a `FlipCase` to stdout.

    Args:
        case: the case (`analysis.flips.case.flip_case`).
        color: styles on (True) or plain markers (False); default: on when stdout is a
            terminal and NO_COLOR is unset.
    """
    if color is None:
        color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    out = _Out(color)
    tags = ", ".join(t for t in (case.family, {"D": "destructive", "P": "preserving"}.get(
        case.intent or "", case.intent), {"Str": "structural", "Sur": "surface"}.get(
        case.locus or "", case.locus)) if t)
    role = ROLE_NAMES.get(case.role, case.role)
    out.line((f"edit {case.id}: {case.operator_id}", "title"), f" ({tags}), {role}")
    out.line(((f"audit {case.audit} · arm {case.arm} · model {case.model} · dataset "
               f"{case.dataset} · item {case.item} · job {case.status}"), "dim"))
    if case.flipped is None:
        state: Segment = (f"not compared: {case.excluded}", "dim")
    elif case.flipped and case.role == "shuffle":  # the same letter can be another option
        state = ((f"FLIPPED {_answer(case.base_answer, case.base_text)} -> "
                  f"{_answer(case.answer, case.answer_text)}"), "flip")
    elif case.flipped:
        state = (f"FLIPPED {case.base_answer} -> {case.answer}", "flip")
    else:
        state = (f"kept {case.answer}", "kept")
    judge = "; ".join(f"{v or '?'} ({m})" for m, v in case.judge) or "none"
    out.line(state, f"   JSD {'–' if case.jsd is None else f'{case.jsd:.3f}'} bits   "
             f"chain updated (token rule): {'–' if case.chain_updated is None else ('yes' if case.chain_updated else 'no')}"
             f"   LLM judge: {judge}")
    if not case.fired:
        out.line((f"the operator did not fire: {case.reason or 'no match'}", "dim"))

    if case.context:
        out.heading("Context")
        out.para([(case.context, "dim")])
    removed, inserted = case.question_spans
    if case.role in EDITED_TITLES:
        out.heading("Original question", "(removed or replaced words marked)")
        out.para(marked(case.question, removed, "removed"))
        out.heading(EDITED_TITLES[case.role], "(as the model saw it; inserted words marked)")
        out.para(marked(case.edited_question, inserted, "inserted"))
    else:
        out.heading("Question", "(unchanged)")
        out.para([(case.question, None)])
    if case.role == "cfv_answer":
        change = (f"  proposed change: {_short(case.new, 100)}; target {case.gold_after} "
                  f"(the answer the change is meant to make correct)")
        out.line((change, "dim"))
    elif case.role in EDITED_TITLES and (case.old or case.new):
        out.line((f"  recorded edit: {_short(case.old)} -> {_short(case.new)}", "dim"))

    _options(out, case)
    _distributions(out, case, color)

    if case.role == "f_block":
        c_removed, c_inserted = case.chain_spans
        out.heading("Original chain", "(the arm's baseline chain, final answer stripped)")
        out.para(marked(case.original_chain or "", c_removed, "removed"))
        out.heading("Edited chain", "(the model continued from here)")
        out.para(marked(case.edited_chain or "", c_inserted, "inserted"))
        out.heading("Continuation", "(the model's text after the edited chain)")
        out.para([(case.output or "(not generated)", None)])
    else:
        out.heading("Chain after the edit")
        out.para([(case.output or "(not generated)", None)])
        out.heading("Baseline chain", "(the same arm on the original question)")
        out.para([(case.baseline_output or "(not generated)", "dim")])


def _options(out: _Out, case: Any) -> None:
    before = dict(case.options_before)
    after = dict(case.options_after)
    if case.role == "shuffle":
        for title, options, gold, answer in (
                ("Options before", case.options_before, case.gold_before, case.base_answer),
                ("Options after the shuffle", case.options_after, case.gold_after,
                 case.answer)):
            out.heading(title, f"(* = gold {gold}; > = answered)")
            for label, text in options:
                _option_line(out, label, text, label == gold, label == answer)
    else:
        target = (f"; target of the change {case.gold_after}" if case.role == "cfv_answer"
                  else "")
        out.heading("Options", f"(* = gold {case.gold_before}{target}; answered: "
                               f"b = before, a = after)")
        for label, text in case.options_before:
            mark = ("b" if label == case.base_answer else " ") + (
                "a" if label == case.answer else " ")
            gold = label == case.gold_before
            shown = "" if text == label else f" {text}"
            out.line(f"  {mark} ", (f"{label}{'*' if gold else ' '}{shown}",
                                    "gold" if gold else None))
    out.line("")
    out.line("answer before: ", (_answer(case.base_answer, before.get(case.base_answer or "")),
                                 "before"),
             "   after: ", (_answer(case.answer, after.get(case.answer or "")), "after"))


def _option_line(out: _Out, label: str, text: str, gold: bool, answered: bool) -> None:
    out.line(f"  {'>' if answered else ' '} ",
             (f"{label}{'*' if gold else ' '} {text}", "gold" if gold else None))


def _distributions(out: _Out, case: Any, color: bool) -> None:
    jsd = "–" if case.jsd is None else f"{case.jsd:.3f}"
    if not case.probs_before and not case.probs_after:
        out.heading("Option distributions", "(not stored)")
        return
    note = "(shuffle: compared by option text)" if case.role == "shuffle" else ""
    out.heading(f"Option distributions  JSD {jsd} bits", note)
    before, after = dict(case.probs_before), dict(case.probs_after)
    if case.role == "shuffle":
        for title, probs, style in (("before", case.probs_before, "before"),
                                    ("after", case.probs_after, "after")):
            out.line(f"  {title}:")
            for label, p in probs:
                out.line(f"    {label:<6}", (bar(p, color), style), f" {p:5.2f}")
        return
    width = max([len(label) for label in list(before) + list(after)] + [5])
    out.line(f"  {'':<{width}}  {'before':<{BAR_WIDTH + 6}}  after")
    for label in dict.fromkeys([*before, *after]):
        p, q = before.get(label), after.get(label)
        left = (bar(p, color), "before") if p is not None else (" " * BAR_WIDTH, None)
        right = (bar(q, color), "after") if q is not None else (" " * BAR_WIDTH, None)
        out.line(f"  {label:<{width}}  ", left,
                 f" {'' if p is None else f'{p:4.2f}':>4}  ", right,
                 f" {'' if q is None else f'{q:4.2f}':>4}")
