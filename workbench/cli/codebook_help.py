"""The codebook in the command line's help: `paw label --field` lists every field, and
`paw annotate --help` ends with the definitions a rater labels by (what "borderline" or
"unclear" means), both read from `annotate.codebook`."""

from __future__ import annotations


def _field_help() -> str:
    from annotate.codebook import ROBUSTNESS_TEST_FIELDS, SEED002_FIELDS

    seed003 = ", ".join(dict.fromkeys(f for fields in ROBUSTNESS_TEST_FIELDS.values()
                                      for f in fields))
    return (f"The field. Seed 002 cases: {', '.join(SEED002_FIELDS)}; seed 003 (robustness) "
            f"cases: {seed003}, stereotype_category; every case: note.")


FIELD_HELP = _field_help()
"""`paw label --field` help, from the codebook (so it lists every field a case can ask)."""


def _epilog() -> str:
    from annotate.codebook import SEED002_FIELDS
    from workbench.present.guidelines import guidelines

    # click rewraps an epilog's paragraphs; a paragraph opened by \b keeps its lines.
    lines = guidelines(SEED002_FIELDS)
    return ("Codebook (what each value means; `g` on the labelling screen shows the case's "
            "fields; seed-003 fields: docs/annotation.md):\n\n\b\n" + "\n".join(lines))


CODEBOOK_EPILOG = _epilog()
"""`paw annotate --help`'s epilog: the seed-002 codebook's definitions."""
