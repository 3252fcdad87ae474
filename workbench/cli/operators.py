"""`paw operators` (the catalogue with worked examples) and `paw perturb` (one operator)."""

from __future__ import annotations

import json
from typing import Any

import click

from store.errors import UserError
from workbench.cli.options import db_option, whole

_COLUMNS = ("id", "family", "variant", "intent", "locus", "target")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _window(text: str, start: int, width: int = 72) -> str:
    """`width` characters of `text` around `start`, with ellipses where cut."""
    begin = max(0, min(start - 16, len(text) - width))
    piece = text[begin : begin + width]
    return ("…" if begin else "") + piece + ("…" if begin + width < len(text) else "")


def example_line(before: str, after: str | None, reason: str | None) -> str:
    """A one-line view of a worked example: the region where input and output differ."""
    if after is None:
        return f"not fired ({reason})"
    a, b = _one_line(before), _one_line(after)
    # The first differing character within the shorter text (else where it ends).
    first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                 min(len(a), len(b)))
    return f"{_window(a, first)!r} -> {_window(b, first)!r}"


def catalogue_rows() -> list[dict[str, Any]]:
    """Every operator (built-in and user-defined) with its tags and worked example."""
    from workbench.perturb.catalogue import example_result, load_catalogue

    rows = []
    for op in load_catalogue().values():
        result = example_result(op)
        rows.append(
            {
                "id": op.id,
                "family": op.family,
                "variant": op.variant,
                "name": op.name,
                "intent": op.intent,
                "locus": op.locus,
                "target": op.target,
                "block": op.block,
                "source": op.source,
                "description": op.description,
                "example": {
                    "input": op.example_input,
                    "options": op.example_options,
                    "gold": op.example_gold,
                    "output": result.to_json(),
                },
            }
        )
    return rows


@click.command("operators")
@click.option("--json", "as_json", is_flag=True, help="Print the catalogue as JSON.")
@db_option
def operators_command(as_json: bool, db_path: str) -> None:
    """List every perturbation operator: id, family, variant, intent (D/P), locus (Str/Sur),
    target, and one worked example (input -> output, seed 0).

    Includes user-defined operators from $PAW_OPERATORS, ~/.config/paw/operators.toml and
    the "paw.operators" entry points (docs/operators.md). --db is accepted for uniformity;
    the catalogue is not stored.
    """
    rows = catalogue_rows()
    if as_json:
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    cells = [[str(row[c] or "-") for c in _COLUMNS] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(_COLUMNS)]
    click.echo("  ".join(c.ljust(w) for c, w in zip(_COLUMNS, widths, strict=True)).rstrip())
    click.echo("  ".join("-" * w for w in widths))
    for row, line in zip(rows, cells, strict=True):
        click.echo("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip())
        output = row["example"]["output"]
        if row["target"] == "options" and output["fired"]:
            shown = f"options {row['example']['options']} -> {output['options']}"
        else:
            shown = example_line(row["example"]["input"], output["text"], output.get("reason"))
        click.echo(f"    e.g. {shown}")
    click.echo(f"\n{len(rows)} operators. `paw operators --json` for full examples.")


def _parse_options(options_json: str | None) -> dict[str, str] | None:
    if options_json is None:
        return None
    try:
        options = json.loads(options_json)
    except json.JSONDecodeError as exc:
        raise UserError(
            f"--options: expected a JSON object, got invalid JSON ({exc.msg})"
        ) from None
    if not isinstance(options, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in options.items()
    ):
        raise UserError(f"--options: expected a JSON object of letter -> text, got {options_json}")
    return options


def _parse_params(pairs: tuple[str, ...]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UserError(f"--param: expected KEY=VALUE, got {pair!r}")
        try:
            params[key] = json.loads(value)
        except json.JSONDecodeError:
            params[key] = value  # a bare string, e.g. sentence=family_member
    return params


@click.command("perturb")
@click.argument("operator_id")
@click.option("--text", required=True, help="The question stem or chain to edit ('-' reads stdin).")
@click.option("--seed", type=whole(0), default=0, show_default=True, help="Audit seed.")
@click.option("--item-key", default="", help="Item key (with the seed, fixes every random draw).")
@click.option("--options", "options_json", metavar="JSON",
              help='Answer options, e.g. \'{"A": "Aspirin", "B": "Heparin"}\'.')
@click.option("--gold", help="Gold letter (remapped by option_shuffle).")
@click.option("--param", "params", multiple=True, metavar="KEY=VALUE",
              help="Operator setting, e.g. target_fraction=0.2 or sentence=family_member.")
@click.option("--strip-answer", is_flag=True,
              help="Remove a trailing 'Answer: X' line first (as the F-block runner does).")
@db_option
def perturb_command(operator_id: str, text: str, seed: int, item_key: str,
                    options_json: str | None, gold: str | None, params: tuple[str, ...],
                    strip_answer: bool, db_path: str) -> None:
    """Apply OPERATOR_ID to --text and print the result as JSON.

    Prints {"operator", "fired", "text", "old", "new", "token_change_fraction"} (plus
    "options" and "gold" for option_shuffle, "reason" when not fired, and "details").
    Token change is measured with the plain word tokenizer.
    """
    from workbench.perturb import get_operator, strip_final_answer

    op = get_operator(operator_id)
    if text == "-":
        with click.open_file("-", encoding="utf-8") as stream:
            text = stream.read()
    if strip_answer:
        text = strip_final_answer(text)
    result = op.apply(
        text, seed=seed, item_key=item_key, options=_parse_options(options_json), gold=gold,
        params=_parse_params(params),
    )
    click.echo(json.dumps(result.to_json(), indent=2, ensure_ascii=False))


commands = [operators_command, perturb_command]
