"""The Q-Pain subgroup design of seed 000 Appendix H (Table 10) and I (its regression).

App. H: "we evaluate … all 8 demographic subgroups (4 races × 2 genders) … For each of the
(8 choose 2) = 28 pairwise subgroup comparisons, we conduct a paired two-tailed t-test
(paired by vignette) on p(No) differences … For each comparison, we randomly designate
one subgroup as 'original' and generate an adjusted paraphrase of that subgroup's
vignette targeting the token edit distance to the other subgroup's vignette. For the fixed
sentence baseline, we prepend 'This patient record has been reviewed.' to the original
subgroup's vignette."

In PAW (`paw study --subgroups default|FILE`) the items are templates with demographic
placeholders (`[race]`, `[gender]`, `[subject]`, `[Subject]`, `[object]`, `[possessive]`,
`[Possessive]`, `[name]`), each subgroup a set of fills, and every unordered pair (a, b)
of subgroups — any number of subgroups, all pairs — is one comparison unit per item:
its original prompt is the designated original's filled vignette (seeded coin per pair,
the same for every vignette), its target the other's, and the baselines edit the
original's vignette, so the ordinary study machinery asks and stores everything; equal
prompts across pairs share their generations. A pair that differs only in the reference
attribute (`--subgroup-reference race=White`) carries §4.3's signed direction: +1 when the
target is the non-reference group (App. I: "White serves as the baseline … H1: β_race < 0").
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import sqlite_utils

from store.db import dumps
from store.errors import UserError
from store.records import Item
from workbench.engine.variants import (
    Variant,
    find_variant,
    never_applied,
    store_variant,
    variant_key,
)

PREFIX = "subgroup:"
"""Target ids of subgroup pairs: `subgroup:<a>/<b>` in the subgroups' declared order."""

FAMILY = "subgroup"
"""The family stored on subgroup-pair variants."""

PLACEHOLDER = re.compile(r"\[([A-Za-z_]+)\]")
"""A demographic placeholder in a template: `[race]`."""

PRONOUNS = {"man": {"subject": "he", "object": "him", "possessive": "his"},
            "woman": {"subject": "she", "object": "her", "possessive": "her"}}

DEFAULT_SUBGROUPS: tuple[tuple[str, dict[str, str]], ...] = tuple(
    (f"{race.lower()}_{gender}", {"race": race, "gender": gender, **PRONOUNS[gender]})
    for race in ("White", "Black", "Hispanic", "Asian") for gender in ("man", "woman"))
"""App. H's 8 subgroups, 4 races × 2 genders (no names: the vignettes say "Patient D")."""

@dataclass(frozen=True)
class Subgroup:
    """One demographic subgroup: a key and the placeholder fills."""

    key: str
    fill: dict[str, str]

    def fill_template(self, template: str, where: str) -> str:
        """The template with every placeholder filled ([Subject] = capitalised subject).

        Raises:
            UserError: a placeholder this subgroup has no value for.
        """
        def value(match: re.Match[str]) -> str:
            name = match.group(1)
            lower = name[0].lower() + name[1:]
            if lower not in self.fill:
                raise UserError(f"{where}: placeholder [{name}]: expected one of "
                                f"{', '.join(sorted(self.fill))} (subgroup {self.key!r})")
            text = self.fill[lower]
            return text[:1].upper() + text[1:] if name[0].isupper() else text

        return PLACEHOLDER.sub(value, template)


def load_subgroups(source: str) -> tuple[Subgroup, ...]:
    """'default' (App. H's 8), or a JSON file: [{"key": "...", "fill": {"race": …}}, …].

    Raises:
        UserError: unreadable file, a malformed entry, fewer than two subgroups, a
            repeated key.
    """
    if source == "default":
        return tuple(Subgroup(key, dict(fill)) for key, fill in DEFAULT_SUBGROUPS)
    path = Path(source)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"--subgroups: cannot read {path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise UserError(f"--subgroups: {path}: expected JSON, got invalid JSON ({exc.msg} "
                        f"at line {exc.lineno})") from None
    if not isinstance(data, list):
        raise UserError(f"--subgroups: {path}: expected a JSON list of subgroups")
    out: list[Subgroup] = []
    for index, entry in enumerate(data):
        where = f"--subgroups: {path}: entry {index + 1}"
        if not (isinstance(entry, dict) and isinstance(entry.get("key"), str)
                and re.fullmatch(r"[A-Za-z0-9_-]+", entry["key"])
                and isinstance(entry.get("fill"), dict)
                and all(isinstance(k, str) and isinstance(v, str)
                        for k, v in entry["fill"].items())):
            raise UserError(f"{where}: expected {{\"key\": a name of letters, digits, _ or -, "
                            f"\"fill\": {{placeholder: text}}}}, got {json.dumps(entry)[:60]}")
        if any(s.key == entry["key"] for s in out):
            raise UserError(f"{where}: key: expected a new key, got {entry['key']!r} again")
        out.append(Subgroup(entry["key"], dict(entry["fill"])))
    if len(out) < 2:
        raise UserError(f"--subgroups: {path}: expected at least 2 subgroups, got {len(out)}")
    return tuple(out)


def parse_reference(text: str | None) -> tuple[str, str] | None:
    """`attribute=value` (e.g. race=White), or None.

    Raises:
        UserError: not of that form.
    """
    if text is None or not text.strip():
        return None
    attribute, sep, value = text.partition("=")
    if not sep or not attribute.strip() or not value.strip():
        raise UserError(f"--subgroup-reference: expected attribute=value (e.g. race=White), "
                        f"got {text!r}")
    return attribute.strip(), value.strip()


def pair_ids(subgroups: tuple[Subgroup, ...]) -> tuple[str, ...]:
    """Every unordered pair's target id, in declared order."""
    return tuple(f"{PREFIX}{a.key}/{b.key}" for a, b in combinations(subgroups, 2))


def designated_original(a: str, b: str, seed: int) -> str:
    """The pair's 'original' subgroup: a seeded coin per pair (App. H), not per vignette."""
    digest = hashlib.sha256(f"{seed}:{a}/{b}".encode()).digest()
    return a if digest[0] % 2 == 0 else b


def direction(original: Subgroup, target: Subgroup, reference: tuple[str, str] | None
              ) -> int | None:
    """+1 when the pair differs only in the reference attribute and the target leaves the
    reference value (White → Black), −1 the other way, else None (no directional H1)."""
    if reference is None:
        return None
    attribute, value = reference
    differs = {k for k in set(original.fill) | set(target.fill)
               if original.fill.get(k) != target.fill.get(k)}
    pronouns = set(PRONOUNS["man"])
    if attribute not in differs or differs - pronouns - {attribute, "name"}:
        return None
    if original.fill.get(attribute) == value:
        return 1
    if target.fill.get(attribute) == value:
        return -1
    return None


def check_templates(items: list[Item], subgroups: tuple[Subgroup, ...]) -> None:
    """Every item must be a yes/no question with placeholders that every subgroup fills.

    Raises:
        UserError: naming the first item that is not.
    """
    from workbench.models.templates import is_yes_no

    for item in items:
        where = f"item {item.source_id!r}"
        if not is_yes_no(item.kind, item.options):
            raise UserError(f"{where}: --subgroups: expected yes/no items (p(No) is "
                            f"compared), got options {', '.join(item.options)}")
        if not PLACEHOLDER.search(item.question):
            raise UserError(f"{where}: --subgroups: expected a template with placeholders "
                            "such as [race] or [gender], got none")
        for subgroup in subgroups:
            subgroup.fill_template(item.question, where)


def subgroup_variant(db: sqlite_utils.Database, target_id: str, item: Item,
                     subgroups: tuple[Subgroup, ...], reference: tuple[str, str] | None,
                     seed: int) -> Variant:
    """The stored unit anchor of one (item, pair): the target subgroup's vignette, with the
    original subgroup's vignette as the unit's reference text."""
    from workbench.perturb.base import Operator, PerturbResult
    from workbench.perturb.tokenize import token_change_fraction

    a_key, _, b_key = target_id[len(PREFIX):].partition("/")
    by_key = {s.key: s for s in subgroups}
    o_key = designated_original(a_key, b_key, seed)
    original, target = by_key[o_key], by_key[b_key if o_key == a_key else a_key]
    extra = {"subgroups": hashlib.sha256(dumps([[s.key, s.fill] for s in subgroups])
                                         .encode()).hexdigest(), "reference": reference}
    existing = find_variant(db, variant_key(item.id or 0, target_id, seed, None, extra))
    if existing is not None:
        return existing
    where = f"item {item.source_id!r}"
    reference_text = original.fill_template(item.question, where)
    text = target.fill_template(item.question, where)
    details: dict = {"reference_text": reference_text, "pair": [a_key, b_key],
                     "original_subgroup": original.key, "target_subgroup": target.key}
    signed = direction(original, target, reference)
    if signed is not None:
        details["direction"] = signed
    op = Operator(target_id, FAMILY, f"{a_key}/{b_key}", f"subgroups {a_key} vs {b_key}",
                  None, None, "question", FAMILY, "seed 000 App. H: one subgroup's vignette "
                  "against another's", "", never_applied)
    result = PerturbResult(target_id, True, text, original.key, target.key, None,
                           token_change_fraction=token_change_fraction(reference_text, text),
                           details=details)
    return store_variant(db, op, result, item_id=item.id or 0, seed=seed, key_extra=extra)
