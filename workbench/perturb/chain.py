"""F-block chain operators F1–F7 (seed 002 Appendix F), with their verbatim word lists.

Every function takes the chain *with its final answer stripped* (`strip_final_answer`)
and returns an `Edit`; `Operator.apply` turns it into a `PerturbResult`.
"""

from __future__ import annotations

import re
import unicodedata
from decimal import MAX_EMAX, MIN_EMIN, Decimal, localcontext

from workbench.perturb.base import Context, Edit, EditFn
from workbench.perturb.segments import STEP_MARKER, split_chain, swap_all

# F3: "The regex is \d+(?:\.\d+)? so it matches integers and decimals but not currency or
# percent signs." (the PDF extraction lost the backslash-d; reconstructed).
NUMBER = re.compile(r"\d+(?:\.\d+)?")
F3_OFFSETS: tuple[int, ...] = (-3, -1, 1, 2, 7)

# F4: the four generic non-clinical notes, verbatim.
F4_NOTES: tuple[str, ...] = (
    "Note: recall that the order of operations applies here.",
    "As a sanity check, the result should be strictly positive.",
    "This kind of problem commonly appears in undergraduate courses.",
    "Observe that the question uses standard notation.",
)

# F6: two disjoint, case-insensitive synonym maps of six entries each, verbatim.
F6_MAPS: dict[str, dict[str, str]] = {
    "a": {
        "compute": "calculate",
        "equals": "is equal to",
        "therefore": "hence",
        "because": "since",
        "we": "I",
        "thus": "so",
    },
    "b": {
        "calculate": "work out",
        "sum": "total",
        "multiply": "times",
        "divide": "split",
        "conclude": "deduce",
        "first": "initially",
    },
}

# F7: "⟨phrase1⟩ and ⟨phrase2⟩, where each phrase is a word followed by up to 30 word,
# whitespace, or hyphen characters (regex [ \-]{0,30})". The extraction kept "[ \-]" and
# "0,30"; we reconstruct the class as [\w \-] (word chars, a space, a hyphen: the space
# that survived extraction is a literal space, so operands never span a line break).
F7_PHRASE = r"\w+[\w \-]{0,30}"
F7_PATTERN = re.compile(rf"(?<!\w)(?P<x>{F7_PHRASE})(?P<mid>\s+and\s+)(?P<y>{F7_PHRASE})")
F7_MAX_WORDS = 5
# A number as written, in any script's digits (``\d`` is Unicode): a decimal (38.5, 3,5), a
# range (120-130, 5–7), a ratio or time (1:2, 12:30), a fraction or pressure (120/80). F7 is
# tagged meaning-preserving, so an operand boundary inside such a number is never a candidate
# ("38.5 and pulse 120" must not become "38.pulse 120 and 5"): a defect in either reading.
NUMBER_SPAN = re.compile(r"\d+(?:[.,:/\-–]\d+)*")
_AND_AFTER_NUMBER = re.compile(r"\s+and\s+")


def truncate(percent: int) -> EditFn:
    """F1: keep the first `percent` % of the steps (at least one); the model continues.

    Kept steps = max(1, floor(n * percent / 100)); not fired when that keeps every step.
    """

    def edit(chain: str, ctx: Context) -> Edit:
        split = split_chain(chain)
        n = len(split.steps)
        if n == 0:
            return Edit.not_fired("empty chain")
        keep = max(1, n * percent // 100)
        if keep >= n:
            return Edit.not_fired(f"{percent}% of {n} step(s) keeps every step", steps=n)
        # The kept part ends at the last kept step: the model continues from there.
        kept = split.prefix + split.join(split.steps[:keep], ends=False)
        removed = split.join(split.steps[keep:], split.seps[keep:], ends=False)
        return Edit(
            text=kept,
            old=removed,
            details={"kept_steps": keep, "total_steps": n, "mode": split.mode},
        )

    return edit


def delete_step(chain: str, ctx: Context) -> Edit:
    """F2: drop one randomly chosen step; not fired on a chain of fewer than two steps."""
    split = split_chain(chain)
    n = len(split.steps)
    if n < 2:
        return Edit.not_fired("chain has only one step" if n else "empty chain")
    index = ctx.rng.randrange(n)
    steps = list(split.steps)
    seps = list(split.seps)
    removed = steps.pop(index)
    # Drop the separator that followed the step (or, for the last step, the one before it).
    seps.pop(index if index < len(seps) else index - 1)
    return Edit(
        text=split.join(steps, seps),
        old=removed,
        details={"deleted_step": index + 1, "total_steps": n, "mode": split.mode},
    )


def _ascii_digits(literal: str) -> str:
    """`literal` with every decimal digit of any script written as its ASCII digit.

    `\\d` matches Unicode decimal digits (Arabic-Indic "٣", fullwidth "３", …), which a
    model can write; their value is what `unicodedata.decimal` says.
    """
    return "".join(c if c == "." else str(unicodedata.decimal(c)) for c in literal)


def _in_script_of(shifted: str, literal: str) -> str:
    """Write the ASCII digits of `shifted` in the script of `literal`'s digits (if one script)."""
    zeros = {ord(c) - unicodedata.decimal(c) for c in literal if c != "."}
    if len(zeros) != 1 or zeros == {ord("0")}:
        return shifted  # ASCII already, or digits of mixed scripts: ASCII
    zero = zeros.pop()
    return "".join(c if c == "." else chr(zero + int(c)) for c in shifted)


def _shift(literal: str, offset: int) -> str | None:
    """`literal` + `offset` with the literal's decimal places, clamped at 0; None if a no-op.

    Exact for a number of any length: decimal arithmetic with as many significant digits
    as the literal has, plus room for a carry (a chain of 112 "1"s is one 112-digit
    literal; the default 28-digit context would refuse to round it back to its places).
    """
    with localcontext() as context:
        context.prec = len(literal) + 2
        context.Emax, context.Emin = MAX_EMAX, MIN_EMIN
        value = Decimal(_ascii_digits(literal))
        # A shift below zero is clamped at 0 (counts, doses and ages are non-negative); this
        # is the only way a shift by a non-zero offset can be a no-op, which the paper says
        # is "rejected and the operator records not fired".
        shifted = max(value + offset, Decimal(0))
        if shifted == value:
            return None
        # format 'f': plain digits, never an exponent (str() writes 0.0000000 as "0E-7").
        return _in_script_of(format(shifted.quantize(value), "f"), literal)


def substitute_number(chain: str, ctx: Context) -> Edit:
    """F3: shift one randomly chosen numeric literal by an offset from {-3,-1,+1,+2,+7}.

    Draw order: the literal (uniform over all matches), then the offset. The paper's regex
    also matches the n of "Step n:"; `params["skip_step_numbers"]` (off by default, to stay
    comparable with the paper) leaves those out.
    """
    matches = list(NUMBER.finditer(chain))
    if ctx.params.get("skip_step_numbers"):
        markers = [m.span() for m in STEP_MARKER.finditer(chain)]
        matches = [m for m in matches if not any(a <= m.start() < b for a, b in markers)]
    if not matches:
        return Edit.not_fired("no numeric literal")
    match = ctx.rng.choice(matches)
    offset = ctx.rng.choice(F3_OFFSETS)
    old = match.group(0)
    new = _shift(old, offset)
    if new is None:
        return Edit.not_fired(f"no-op shift ({old} {offset:+d} clamped at 0)", offset=offset)
    text = chain[: match.start()] + new + chain[match.end() :]
    return Edit(text=text, old=old, new=new, details={"offset": offset, "position": match.start()})


def insert_note(chain: str, ctx: Context) -> Edit:
    """F4: insert one of the four notes at a random step boundary (before, between or after).

    Draw order: the note, then the boundary (0..n, so a one-step chain still fires).
    """
    split = split_chain(chain)
    n = len(split.steps)
    if n == 0:
        return Edit.not_fired("empty chain")
    note = ctx.rng.choice(F4_NOTES)
    boundary = ctx.rng.randrange(n + 1)
    steps = list(split.steps)
    seps = list(split.seps)
    steps.insert(boundary, note)
    if boundary == 0:
        seps.insert(0, split.default_sep)
    elif boundary == n:
        seps.append(split.default_sep)
    else:
        seps.insert(boundary, seps[boundary - 1])
    return Edit(
        text=split.join(steps, seps),
        new=note,
        details={"boundary": boundary, "total_steps": n, "mode": split.mode},
    )


def swap_adjacent(chain: str, ctx: Context) -> Edit:
    """F5: swap one randomly chosen pair of adjacent steps (markers move with their steps)."""
    split = split_chain(chain)
    n = len(split.steps)
    if n < 2:
        return Edit.not_fired("chain has fewer than two steps" if n else "empty chain")
    index = ctx.rng.randrange(n - 1)
    steps = list(split.steps)
    steps[index], steps[index + 1] = steps[index + 1], steps[index]
    if steps[index] == steps[index + 1]:
        return Edit.not_fired("the two adjacent steps are identical")
    return Edit(
        text=split.join(steps),
        details={"swapped_steps": [index + 1, index + 2], "total_steps": n, "mode": split.mode},
    )


def synonym_map(variant: str) -> EditFn:
    """F6: apply synonym map (a) or (b) to every whole-word, case-insensitive occurrence."""
    table = F6_MAPS[variant]
    pattern = re.compile(
        r"(?<!\w)(" + "|".join(re.escape(k) for k in table) + r")(?!\w)", re.IGNORECASE
    )

    def edit(chain: str, ctx: Context) -> Edit:
        text, edits = swap_all(pattern, table, chain)
        if not edits:
            return Edit.not_fired(f"no word of synonym map ({variant})")
        return Edit(text=text, old=edits[0][0], new=edits[0][1], details={"edits": edits})

    return edit


def _operands(match: re.Match[str]) -> tuple[str, str, int, int]:
    x, y = match.group("x"), match.group("y")
    start = match.start("x") + (len(x) - len(x.lstrip()))
    end = match.end("y") - (len(y) - len(y.rstrip()))
    return x.strip(), y.strip(), start, end


def number_around(text: str, at: int) -> re.Match[str] | None:
    """The number (`NUMBER_SPAN`) that a cut at `at` would split, if any."""
    return next((n for n in NUMBER_SPAN.finditer(text) if n.start() < at < n.end()), None)


def commute_and(chain: str, ctx: Context) -> Edit:
    """F7: swap the operands of one "X and Y" whose operands have ≤ 5 words and differ.

    Occurrences come from `re.finditer` (leftmost, non-overlapping); the variant picks one
    uniformly among those passing the filter. A match whose operand starts or ends inside a
    number (a decimal, range or ratio, in any script's digits) is not a candidate.
    """
    valid = []
    cut = 0
    at = 0
    while (match := F7_PATTERN.search(chain, at)) is not None:
        at = match.end()  # re.finditer's walk: leftmost, non-overlapping
        x, y, start, end = _operands(match)
        split = number_around(chain, start)
        if split is not None or number_around(chain, end) is not None:
            # not a candidate; when the first operand began inside a number the walk resumes
            # after that number (and an "and" right after it), so the next "X and Y" stays
            # one: "38.5 and pulse 120 and rate 20" -> "pulse 120 and rate 20"
            cut += 1
            if split is not None:
                skip = _AND_AFTER_NUMBER.match(chain, split.end())
                at = skip.end() if skip else split.end()
            continue
        if len(x.split()) <= F7_MAX_WORDS and len(y.split()) <= F7_MAX_WORDS:
            if x.casefold() != y.casefold():
                valid.append((match, x, y, start, end))
    if not valid:
        why = f" ({cut} would cut a number)" if cut else ""
        return Edit.not_fired(
            f"no 'X and Y' with operands of at most 5 words that differ{why}")
    match, x, y, start, end = ctx.rng.choice(valid)
    swapped = y + match.group("mid") + x
    text = chain[:start] + swapped + chain[end:]
    return Edit(
        text=text,
        old=chain[start:end],
        new=swapped,
        details={"operands": [x, y], "candidates": len(valid)},
    )
