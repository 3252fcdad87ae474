"""Four hand-built edits and what every view of them must show: a shuffle, an F-block chain
edit, a yes/no question edit and a seed-003 demographic prefix (one audit, answers chosen by
hand). `tests/present`, `tests/cli` and `tests/tui` check the same expectations on
`case_panes`, `paw flips show` and the flip inspector.

    shuffle  options A Pneumonia, B Asthma, C Influenza; shuffled to A Influenza,
             B Pneumonia, C Asthma (gold A -> B). Baseline A (Pneumonia); after the shuffle
             A (Influenza): the letter is the same, the option is not: a flip.
             P before (.6, .3, .1); P after by letter (.7, .2, .1), so by text Pneumonia .6 ->
             .2 (under B), Asthma .3 -> .1 (under C), Influenza .1 -> .7 (under A).
    f_block  the baseline chain "Fever and cough point to pneumonia. So A. Answer: A" cut to
             its first sentence (F1); the model continues to B: a flip.
    yes_no   "Does the patient have a fever?" negated to "Does the patient not have a
             fever?"; options Yes/No (each its own text), gold No; baseline No, after Yes.
    prefix   "The patient is a 45-year-old Black man." put before the question (seed 003);
             baseline A, after B.
"""

from __future__ import annotations

import re

import sqlite_utils

from tests.builders import AuditBuilder

QUESTION = "A 50-year-old man has fever and cough. Which is the diagnosis?"
OPTIONS = {"A": "Pneumonia", "B": "Asthma", "C": "Influenza"}
SHUFFLED = {"A": "Influenza", "B": "Pneumonia", "C": "Asthma"}
CHAIN = "Fever and cough point to pneumonia. So A. Answer: A"
YES_NO_QUESTION = "Does the patient have a fever?"
YES_NO_EDITED = "Does the patient not have a fever?"
PREFIX = "The patient is a 45-year-old Black man."

CASES = ("shuffle", "f_block", "yes_no", "prefix")

TITLES: dict[str, list[str]] = {
    "shuffle": ["Question", "Options before → after the shuffle",
                "Option distributions  JSD 0.296 bits", "Chain after the edit",
                "Baseline chain"],
    "f_block": ["Question", "Options", "Option distributions  JSD 0.447 bits",
                "Original chain", "Edited chain", "Continuation"],
    "yes_no": ["Original question", "Edited question", "Options",
               "Option distributions  JSD 0.278 bits", "Chain after the edit",
               "Baseline chain"],
    "prefix": ["Original question", "Question with the demographic edit", "Options",
               "Option distributions  JSD 0.278 bits", "Chain after the edit",
               "Baseline chain"],
}
"""The panes' titles, in order, after the header.

JSDs in bits, by hand. Shuffle, paired by text: P = (.6, .3, .1), Q = (.2, .1, .7),
M = (.4, .2, .4); KL(P‖M) = .9·log2 1.5 + .1·log2 .25 = 0.526466 − .2 = 0.326466,
KL(Q‖M) = .3·log2 .5 + .7·log2 1.75 = −.3 + 0.565148 = 0.265148; JSD = ½(0.326466 +
0.265148) = 0.295807. F-block: P = (.8, .1, .1), Q = (.1, .8, .1), M = (.45, .45, .1);
KL = .8·log2(.8/.45) + .1·log2(.1/.45) = 0.664060 − 0.216993 = 0.447067 each way.
Yes/no and prefix: P = (.8, .2), Q = (.2, .8), M = (.5, .5); KL = .8·log2 1.6 + .2·log2 .4
= 0.542458 − 0.264386 = 0.278072 each way.
"""

OPTION_LINES: dict[str, list[str]] = {
    "shuffle": ["A → B  Pneumonia  ◆ gold  ← before", "B → C  Asthma",
                "C → A  Influenza  ← after",
                "answer before: A (Pneumonia)   after: A (Influenza)"],
    "f_block": ["A  Pneumonia  ◆ gold  ← before", "B  Asthma  ← after", "C  Influenza",
                "answer before: A (Pneumonia)   after: B (Asthma)"],
    "yes_no": ["No  ◆ gold  ← before", "Yes  ← after", "answer before: No   after: Yes"],
    "prefix": ["A  Pneumonia  ◆ gold  ← before", "B  Asthma  ← after",
               "answer before: A (Pneumonia)   after: B (Asthma)"],
}
"""Lines of the options pane: order, gold and which answer chose which (a shuffle's by
option text: 'after' marks Influenza, now under A, not the option that was A; a yes/no
option is its own text, shown once; the store keeps options in label order, so No first)."""

STATES: dict[str, str] = {
    "shuffle": "FLIPPED A (Pneumonia) -> A (Influenza)",
    "f_block": "FLIPPED A -> B",
    "yes_no": "FLIPPED No -> Yes",
    "prefix": "FLIPPED A -> B",
}
"""The verdict in the header."""

HIGHLIGHTS: dict[str, list[tuple[str, str]]] = {
    "shuffle": [],
    "f_block": [("Original chain", "Fever and cough point to pneumonia. [-So A. Answer: A-]")],
    "yes_no": [("Original question", YES_NO_QUESTION),  # nothing removed: 'not' inserted
               ("Edited question", "Does the patient {+not+} have a fever?")],
    "prefix": [("Question with the demographic edit", "{+" + PREFIX + "+} " + QUESTION)],
}
"""(pane title, its text with the edit's markers) where the edit is highlighted."""


def build_cases(db: sqlite_utils.Database) -> dict[str, int]:
    """Write the four edits (and their baselines) into `db`; their job ids by case name."""
    b = AuditBuilder(db, audit="cases")
    arm = b.arm("smol/cot")
    q1 = b.item("q1", gold="A", options=OPTIONS, question=QUESTION)
    q2 = b.item("q2", gold="A", options=OPTIONS, question=QUESTION)
    q3 = b.item("q3", gold="No", options={"Yes": "Yes", "No": "No"}, kind="binary",
                question=YES_NO_QUESTION)
    q4 = b.item("q4", gold="A", options={"A": "Pneumonia", "B": "Asthma"}, question=QUESTION)
    b.baseline(arm, q1, answer="A", output="Answer: A",
               option_probs={"A": 0.6, "B": 0.3, "C": 0.1})
    b.baseline(arm, q2, answer="A", output=CHAIN,
               option_probs={"A": 0.8, "B": 0.1, "C": 0.1})
    b.baseline(arm, q3, answer="No", output="No fever. Answer: No",
               option_probs={"Yes": 0.2, "No": 0.8})
    b.baseline(arm, q4, answer="A", output="Answer: A", option_probs={"A": 0.8, "B": 0.2})
    shuffle = b.perturbed(arm, q1, operator_id="option_shuffle", family="shuffle",
                          answer="A", output="Answer: A", options=SHUFFLED, gold="B",
                          option_probs={"A": 0.7, "B": 0.2, "C": 0.1})
    chain = b.perturbed(arm, q2, operator_id="F1_truncate_50", family="F1", intent="D",
                        locus="Str", answer="B", output="so B. Answer: B",
                        option_probs={"A": 0.1, "B": 0.8, "C": 0.1})
    db["variants"].update(chain.variant_id, {"text": "Fever and cough point to pneumonia."})
    yes_no = b.perturbed(arm, q3, operator_id="M4_negation_a", family="M4", intent="D",
                         locus="Sur", answer="Yes", output="Answer: Yes", old="have",
                         new="not have", option_probs={"Yes": 0.8, "No": 0.2})
    db["variants"].update(yes_no.variant_id, {"text": YES_NO_EDITED})
    prefix = b.perturbed(arm, q4, operator_id="demo_prefix_male_black", family="demographic",
                         role="demographic", answer="B", output="Answer: B", new=PREFIX,
                         option_probs={"A": 0.2, "B": 0.8})
    db["variants"].update(prefix.variant_id, {"text": f"{PREFIX} {QUESTION}"})
    return {"shuffle": shuffle.job_id, "f_block": chain.job_id, "yes_no": yes_no.job_id,
            "prefix": prefix.job_id}


def sections(out: str) -> list[tuple[str, str, str]]:
    """`paw flips show`'s plain output cut into (title, note, body) per heading; the header
    (the lines before the first blank line) comes first with an empty title and note.

    A heading is an unindented line after a blank line; its note is the part from '  ('.
    Body lines are indented by two spaces (removed here); blank lines inside a body stay.
    """
    rows = out.rstrip("\n").split("\n")
    first_blank = rows.index("")
    found: list[tuple[str, str, list[str]]] = [("", "", rows[:first_blank])]
    for n, row in enumerate(rows[first_blank:], start=first_blank):
        if row and not row.startswith(" ") and rows[n - 1] == "":
            title, _, note = row.partition("  (")
            found.append((title, f"({note}" if note else "", []))
        elif found[-1][0]:
            found[-1][2].append(row[2:] if row.startswith("  ") else row)
    return [(title, note, "\n".join(body).strip("\n")) for title, note, body in found]


def in_order(text: str, wanted: list[str]) -> bool:
    """Every line of `wanted` is a line of `text`, in that order."""
    rows = text.split("\n")
    at = 0
    for line in wanted:
        if line not in rows[at:]:
            return False
        at = rows.index(line, at) + 1
    return True


def unmark(text: str) -> tuple[str, list[tuple[int, int, str]]]:
    """A text with wdiff markers as (plain text, [(start, end, 'removed'|'inserted')])."""
    plain, spans, at = "", [], 0
    for match in re.finditer(r"\[-(.*?)-\]|\{\+(.*?)\+\}", text):
        plain += text[at:match.start()]
        run = match.group(1) if match.group(1) is not None else match.group(2)
        spans.append((len(plain), len(plain) + len(run),
                      "removed" if match.group(1) is not None else "inserted"))
        plain += run
        at = match.end()
    return plain + text[at:], spans
