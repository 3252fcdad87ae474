"""The codebook's definitions in words for the rater (`annotate.codebook`): shown beside the
case by the labelling screen's `g` and printed by `paw annotate --help`, so both say the
same."""

from __future__ import annotations

from collections.abc import Sequence

from annotate.codebook import FIELDS, MAX_NOTE_CHARS, FieldKind


def guidelines(fields: Sequence[str] | None = None) -> list[str]:
    """The definitions for raters (every field, or `fields`): title, question, when it is
    asked, each value's key and meaning; the screen's `g` and `paw annotate --help`."""
    lines: list[str] = []
    for name in fields if fields is not None else FIELDS:
        spec = FIELDS[name]
        lines += [f"{spec.title} — {spec.question}", f"  asked: {spec.applies}"]
        if spec.kind == FieldKind.OPTION_LETTER:
            lines.append("  the new answer's letter (Yes / No / Maybe: y / n / m)")
        elif spec.kind == FieldKind.TEXT:
            lines.append(f"  n: optional text for the coordinator (≤ {MAX_NOTE_CHARS} chars)")
        for value in spec.values:
            lines.append(f"  {value.key} {value.value}: {value.help}")
    return lines
