"""`paw label`: one label from the command line, with the same validation and event log as
the labelling screen (`annotate.events.record_label`)."""

from __future__ import annotations

import click

from annotate.codebook import MAX_TIME_ON_ITEM_MS
from store.errors import UserError
from workbench.cli.codebook_help import FIELD_HELP
from workbench.cli.options import db_option, open_store, whole
from workbench.cli.signin import login, passphrase_env_option


@click.command("label")
@click.argument("case")
@click.option("--rater", required=True, help="Rater name (authenticated by passphrase).")
@click.option("--field", "field_name", required=True, help=FIELD_HELP)
@click.option("--value", help="A value of the field or its digit key; omit with --clear.")
@click.option("--clear", is_flag=True, help="Clear the label (a new event; nothing deleted).")
@click.option("--new-answer", help="With --field gold_shift --value shifted: the option "
                                    "now correct (its letter), recorded with it.")
@click.option("--category", help="With --field stereotype and a value other than none: the "
                                 "stereotype category (a value or its digit key), recorded "
                                 "with it.")
@click.option("--time-ms", type=whole(0, MAX_TIME_ON_ITEM_MS), help="Time spent (ms, ≤ a day).")
@passphrase_env_option
@db_option
def label(case: str, rater: str, field_name: str, value: str | None, clear: bool,
          new_answer: str | None, category: str | None, time_ms: int | None,
          passphrase_env: str | None, db_path: str) -> None:
    """Record one label for CASE without the UI (same validation and event log).

    Gold shift 'shifted' is given with its new answer (--new-answer), stereotype evidence
    with its category (--category), in one go, as the labelling screen does
    (gold_shift_alt and stereotype_category are given that way, never alone): every
    labelling of these fields writes the same events whatever the value."""
    from annotate.events import record_label, start_session
    from annotate.labels import current_labels
    from annotate.sets.cases import case_row

    if (value is None) == (not clear):
        raise UserError("--value/--clear: expected exactly one of them")
    companion = label_companion(field_name, value, new_answer, category)
    db = open_store(db_path)
    person = login(db, rater, passphrase_env, "rater")
    session = start_session(db, person, case_row(db, case)["set_name"], app="paw-label")
    event = record_label(db, person, session, case, field_name, value, time_ms,
                         companion=companion)
    replaced = f" (supersedes event {event.supersedes_id})" if event.supersedes_id else ""
    given = ""
    if companion is not None:  # as stored (normalised), read back from her own labels
        name = COMPANION_OPTIONS[event.field][0]
        given = f" + {name}={current_labels(db, person, event.code).get(name)}"
    click.echo(f"event {event.id}: {event.code} {event.field}={event.value}{given}{replaced}")


COMPANION_OPTIONS: dict[str, tuple[str, str]] = {
    "gold_shift": ("gold_shift_alt", "--new-answer"),
    "stereotype": ("stereotype_category", "--category"),
}
"""`paw label`'s option for each companion of `annotate.labels.COMPANIONS`."""


def label_companion(field_name: str, value: str | None, new_answer: str | None,
                    category: str | None) -> str | None:
    """The companion value `paw label` passes with `field_name` = `value`.

    A companion field is never labelled alone, and a value that asks for its companion is
    refused without it: either would write a different number of events for one value than
    for another, which the shared file shows (issue 35).

    Raises:
        UserError: a companion field labelled alone, a value asking a companion given
            without it, or a companion option given with a field it does not belong to.
    """
    from annotate.codebook import field as field_spec
    from annotate.codebook import validate_value
    from annotate.labels import COMPANIONS

    name = field_spec(field_name).name
    given = {"--new-answer": new_answer, "--category": category}
    for parent, (companion_name, _) in COMPANION_OPTIONS.items():
        if name == companion_name:
            example = "shifted --new-answer B" if parent == "gold_shift" else "2 --category 1"
            raise UserError(f"--field {name}: given with {parent}, e.g. `--field {parent} "
                            f"--value {example}` (or `--field {parent} --clear`)")
    option = COMPANION_OPTIONS[name][1] if name in COMPANION_OPTIONS else None
    stray = [o for o, v in given.items() if v is not None and o != option]
    if stray:
        owner = next(p for p, (_, o) in COMPANION_OPTIONS.items() if o == stray[0])
        raise UserError(f"{stray[0]}: only with --field {owner}, not --field {name}")
    if option is None:
        return None
    clean = validate_value(name, value)
    companion = given[option]
    if companion is None and clean not in COMPANIONS[name][1]:
        raise UserError(f"--field {name} --value {clean}: give {COMPANION_OPTIONS[name][0]} "
                        f"with it: {option} VALUE (recorded together, as on the labelling "
                        "screen)")
    return companion


commands = [label]
