"""User-defined operators: rules files (TOML/JSON, regex -> replacement or prepend/append) and
the "paw.operators" Python entry-point group. Format documented in docs/operators.md."""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Callable, Iterable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from store.errors import UserError
from workbench.perturb.base import INTENTS, LOCI, Context, Edit, EditFn, Operator

ENV_VAR = "PAW_OPERATORS"
ENTRY_POINT_GROUP = "paw.operators"
RULE_TARGETS = ("question", "chain", "prompt")
_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_.\-]*$")
MATCH_TIMEOUT_S = 2.0
"""The longest one search or substitution of a rule's pattern may run (the `regex`
package's `timeout`): a pattern with catastrophic backtracking (`(a+)+$`, `(a|aa)*b`,
`(x+x+)+y`) on a text it cannot match is stopped and reported, naming its rule, file and
line, instead of hanging `paw operators`, `paw perturb` or an audit. A time limit rather
than a static check for nested quantifiers: it also bounds overlapping alternations and
back-references, which no such check sees, and refuses no harmless pattern. Texts PAW
edits are a few kB; a sound pattern takes microseconds on them."""
_KNOWN_FIELDS = {
    "id", "family", "variant", "name", "intent", "locus", "target", "description", "example",
    "pattern", "replacement", "count", "ignore_case", "prepend", "append",
}


def default_rules_path() -> Path:
    """~/.config/paw/operators.toml (or $XDG_CONFIG_HOME/paw/operators.toml)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "paw" / "operators.toml"


def rules_paths() -> list[Path]:
    """Rules files to read: each path in $PAW_OPERATORS (os.pathsep-separated), then the default."""
    paths = [Path(p) for p in os.environ.get(ENV_VAR, "").split(os.pathsep) if p.strip()]
    default = default_rules_path()
    if default.is_file() and default not in paths:
        paths.append(default)
    return paths


def _rule_locator(raw: str, path: Path, index: int) -> Callable[[str], str]:
    """A function naming "<file>:<line>" of a field of the `index`-th rule (best effort)."""
    lines = raw.splitlines()
    starts = [n for n, line in enumerate(lines) if line.strip() == "[[operator]]"]
    if len(starts) > index:  # TOML: the rule runs from its header to the next one
        first = starts[index]
        last = starts[index + 1] if index + 1 < len(starts) else len(lines)
    else:  # JSON: no headers; search the whole file
        first, last = 0, len(lines)

    def locate(field: str) -> str:
        field_line = re.compile(r'^\s*"?' + re.escape(field) + r'"?\s*[=:]')
        for number in range(first, last):
            if field_line.search(lines[number]):
                return f"{path}:{number + 1}"
        return f"{path}:{first + 1}"

    return locate


class PatternTimeout(UserError):
    """A rule's pattern stopped by `MATCH_TIMEOUT_S`: it stops the command (an audit
    included) rather than counting as an edit that did not fire."""

    stops_run = True


def hung(where: str, op_id: str, pattern: str, n_chars: int) -> UserError:
    """The one message for a rule's pattern stopped by `MATCH_TIMEOUT_S`."""
    return PatternTimeout(f"{where}: pattern: operator {op_id}'s regular expression {pattern!r} "
                     f"ran over {MATCH_TIMEOUT_S:g} s on a {n_chars}-character text and was "
                     "stopped (catastrophic backtracking: rewrite nested or overlapping "
                     "repetition such as (a+)+ or (a|aa)*)")


def _regex_rule(pattern: Any, replacement: str, count: int, where: str, op_id: str) -> EditFn:
    import regex

    def edit(text: str, ctx: Context) -> Edit:
        try:
            first = pattern.search(text, timeout=MATCH_TIMEOUT_S)
            if first is None:
                return Edit.not_fired("pattern did not match")
            try:
                new_text, replaced = pattern.subn(replacement, text, count=count,
                                                  timeout=MATCH_TIMEOUT_S)
                new = first.expand(replacement)
            except (regex.error, re.error, IndexError) as exc:
                return Edit.not_fired(f"replacement failed: {exc}")
        except TimeoutError:
            raise hung(where, op_id, pattern.pattern, len(text)) from None
        return Edit(text=new_text, old=first.group(0), new=new, details={"replacements": replaced})

    return edit


def compile_bounded(source: str, ignore_case: bool) -> Any:
    """A rule's pattern compiled with the `regex` package (Python's `re` syntax, version 0),
    so that every match can carry `MATCH_TIMEOUT_S`.

    Raises:
        regex.error: not a valid regular expression.
    """
    import regex

    return regex.compile(source, (regex.IGNORECASE if ignore_case else 0) | regex.VERSION0)


def _affix_rule(sentence: str, *, at_end: bool) -> EditFn:
    def edit(text: str, ctx: Context) -> Edit:
        if not text:
            return Edit(text=sentence, new=sentence)
        return Edit(text=f"{text} {sentence}" if at_end else f"{sentence} {text}", new=sentence)

    return edit


def operator_from_rule(rule: dict[str, Any], locate: Callable[[str], str]) -> Operator:
    """Build an operator from one rule table.

    Args:
        rule: the table's fields.
        locate: maps a field name to "<file>:<line>" for error messages.

    Raises:
        UserError: a field is missing, unknown or of the wrong kind.
    """

    def bad(field: str, expected: str, got: object) -> UserError:
        return UserError(f"{locate(field)}: {field}: expected {expected}, got {got!r}")

    unknown = sorted(set(rule) - _KNOWN_FIELDS)
    if unknown:
        raise bad(unknown[0], f"one of {', '.join(sorted(_KNOWN_FIELDS))}", unknown[0])
    op_id = rule.get("id")
    if not isinstance(op_id, str) or not _ID.match(op_id):
        raise bad("id", "a name of letters, digits, _ . - starting with a letter", op_id)
    for field in ("family", "variant", "name", "description", "example"):
        if field in rule and not isinstance(rule[field], str):
            raise bad(field, "a string", rule[field])
    intent, locus = rule.get("intent"), rule.get("locus")
    if intent is not None and intent not in INTENTS:
        raise bad("intent", "D or P", intent)
    if locus is not None and locus not in LOCI:
        raise bad("locus", "Str or Sur", locus)
    target = rule.get("target", "question")
    if target not in RULE_TARGETS:
        raise bad("target", " | ".join(RULE_TARGETS), target)
    kinds = [k for k in ("pattern", "prepend", "append") if k in rule]
    if len(kinds) != 1:
        raise bad("pattern", "exactly one of pattern, prepend, append", kinds or None)
    kind = kinds[0]
    if not isinstance(rule[kind], str) or not rule[kind]:
        raise bad(kind, "a non-empty string", rule[kind])
    if kind == "pattern":
        replacement = rule.get("replacement")
        if not isinstance(replacement, str):
            raise bad("replacement", "a string", replacement)
        count = rule.get("count", 1)
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise bad("count", "an integer >= 0 (0 = every match)", count)
        import regex

        try:
            re.compile(rule["pattern"])  # Python's syntax, as docs/operators.md says
            pattern = compile_bounded(rule["pattern"], rule.get("ignore_case", False) is True)
        except (re.error, regex.error) as exc:
            raise bad("pattern", f"a valid regular expression ({exc})", rule["pattern"]) from None
        fn = _regex_rule(pattern, replacement, count, locate("pattern"), op_id)
        example = rule.get("example")
        if isinstance(example, str) and example:
            try:  # checked when loaded, on the rule's own example
                pattern.search(example, timeout=MATCH_TIMEOUT_S)
            except TimeoutError:
                raise hung(locate("pattern"), op_id, rule["pattern"], len(example)) from None
        summary = f"regex {rule['pattern']!r} -> {replacement!r}"
    else:
        fn = _affix_rule(rule[kind], at_end=kind == "append")
        summary = f"{kind} {rule[kind]!r}"
    return Operator(
        id=op_id,
        family=rule.get("family", "user"),
        variant=rule.get("variant", "a"),
        name=rule.get("name", op_id),
        intent=intent,
        locus=locus,
        target=target,
        block="user",
        description=rule.get("description", summary),
        example_input=rule.get("example", ""),
        fn=fn,
        source=locate("id"),
    )


def load_rules_file(path: Path) -> list[Operator]:
    """Read one TOML (`[[operator]]` tables) or JSON (list, or {"operators": [...]}) file.

    Raises:
        UserError: the file is missing or malformed, or a rule is invalid.
    """
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(
            f"{path}:1: file: expected a readable rules file, got {exc.strerror}"
        ) from None
    try:
        if path.suffix.lower() == ".json":
            data = json.loads(raw)
            rules = data.get("operators") if isinstance(data, dict) else data
        else:
            rules = tomllib.loads(raw).get("operator")
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        kind = "JSON" if path.suffix.lower() == ".json" else "TOML"
        raise UserError(f"{path}:1: file: expected valid {kind}, got {exc}") from None
    if not isinstance(rules, list):
        raise UserError(
            f"{path}:1: operator: expected a list of operator tables, got {type(rules).__name__}"
        )
    operators = []
    for index, rule in enumerate(rules):
        if not isinstance(rule, dict):
            raise UserError(f"{path}:1: operator[{index}]: expected a table, got {rule!r}")
        operators.append(operator_from_rule(rule, _rule_locator(raw, path, index)))
    return operators


def _entry_point_operators() -> Iterable[Operator]:
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        where = f"entry point {ep.name} ({ep.value})"
        try:
            obj = ep.load()
        except Exception as exc:  # noqa: BLE001 - a broken plugin must not hide the catalogue
            raise UserError(f"{where}: load: expected an importable object, got {exc!r}") from None
        if callable(obj) and not isinstance(obj, Operator):
            obj = obj()
        if isinstance(obj, Operator) or not isinstance(obj, Iterable):
            items = [obj]
        else:
            items = list(obj)
        for item in items:
            if not isinstance(item, Operator):
                raise UserError(f"{where}: object: expected an Operator, got {type(item).__name__}")
            yield item


def load_user_operators() -> list[Operator]:
    """All user-defined operators: rules files first, then entry points; ids must be unique."""
    operators: list[Operator] = []
    seen: dict[str, str] = {}
    for op in [op for path in rules_paths() for op in load_rules_file(path)] + list(
        _entry_point_operators()
    ):
        if op.id in seen:
            raise UserError(
                f"{op.source}: id: expected a unique id, got {op.id!r} (also in {seen[op.id]})"
            )
        seen[op.id] = op.source
        operators.append(op)
    return operators
