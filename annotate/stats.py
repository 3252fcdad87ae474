"""Labels into the statistics (seed 002 §6.7, Table 12, Appendix C), each figure with its N.

- gold defensible: share of cases labelled by both raters that neither marked 'shifted'
  (seed 002: 98.5 %), and how many both marked 'shifted' (0/197);
- harmful-flip rate per rater (harmful / flips that rater labelled) and unanimous (both
  harmful / flips both labelled) — 17.3 % / 33.3 % / 13.3 % in seed 002;
- keyword CHS versus clinician harm: Cohen's kappa of the keyword flag (a missed high-acuity
  answer: the baseline answer's option text is high-acuity by K, the new one is not) against
  each rater's and the unanimous binary harm label;
- chain-registration rule validation: the token rule (`analysis.audit.definitions.chain_updated`)
  and every LLM-judge method (`judgements`, kind 'chain_registration', 'yes'/'no') against
  the human label (final label: unanimous or adjudicated; 'unclear' rows dropped, as seed
  002 drops ambiguous ones): precision, recall, accuracy, kappa, N; overall and per family.

The report sections built from these figures are in `annotate.report.sections`, which imports this
module (never the reverse).
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlite_utils

from annotate.agreement.kappa import Agreement, from_pairs
from annotate.agreement.tables import rater_pair
from annotate.agreement.tally import Tally
from annotate.codebook import FIELDS
from annotate.labels import all_current_labels
from annotate.sets.annotation_set import get_set
from store.db import loads

POSITIVE, NEGATIVE = "registered", "not_registered"


@dataclass(frozen=True)
class Rate:
    """k of n, with the share (None when n = 0)."""

    k: int
    n: int

    @property
    def share(self) -> float | None:
        """k / n, or None when n = 0."""
        return self.k / self.n if self.n else None


@dataclass(frozen=True)
class RuleValidation(Tally):
    """A chain-registration rule scored against human labels (positive = registered): the
    tally of (rule, human) and the kappa of the two."""

    method: str
    family: str | None
    agreement: Agreement


def _case_rows(db: sqlite_utils.Database, set_id: int) -> list[dict]:
    return list(db.query(
        "SELECT c.id, c.code, c.ask_harm, c.ask_chain_registration, c.stratum, v.family, "
        "v.new, v.item_id, v.options_json AS variant_options, i.options_json, "
        "b.answer AS answer_before, p.answer AS answer_after, p.output AS chain, "
        "p.id AS generation_id FROM annotation_cases c JOIN variants v ON v.id = c.variant_id "
        "JOIN items i ON i.id = v.item_id "
        "LEFT JOIN generations b ON b.id = c.baseline_generation_id "
        "LEFT JOIN generations p ON p.id = c.perturbed_generation_id "
        "WHERE c.set_id = ? ORDER BY c.id", [set_id]))


def _two(db: sqlite_utils.Database, set_name: str):
    the_set = get_set(db, set_name)
    pair = rater_pair(db, the_set.id)
    labels = all_current_labels(db, the_set.id)
    return the_set, pair, labels


def label_distribution(db: sqlite_utils.Database, set_name: str, field: str,
                       ) -> tuple[dict[str, Rate], dict[str, Rate], dict[str, Rate], int]:
    """Table 12 columns for one field: rater A shares, rater B shares, joint shares.

    Returns:
        (A, B, joint, N) where each maps value -> Rate over the N cases both labelled, and
        joint counts cases where both gave that value.
    """
    the_set, pair, labels = _two(db, set_name)
    categories = FIELDS[field].categories
    if pair is None:
        empty = {c: Rate(0, 0) for c in categories}
        return empty, empty, empty, 0
    (a, _), (b, _) = pair
    both = [(labels.get((cid, a), {}).get(field), labels.get((cid, b), {}).get(field))
            for cid, in db.execute("SELECT id FROM annotation_cases WHERE set_id = ?",
                                   [the_set.id])]
    both = [(x, y) for x, y in both if x is not None and y is not None]
    n = len(both)
    return ({c: Rate(sum(x == c for x, _ in both), n) for c in categories},
            {c: Rate(sum(y == c for _, y in both), n) for c in categories},
            {c: Rate(sum(x == c == y for x, y in both), n) for c in categories}, n)


def within(db: sqlite_utils.Database, set_name: str, field: str,
           values: tuple[str, ...]) -> tuple[Rate, Rate, Rate]:
    """(rater A, rater B, both) giving one of `values` on `field`, over cases both labelled.

    Table 12's "not invalid" row is `within(…, 'validity', ('valid', 'borderline'))`: both
    raters valid or borderline (seed 002: 72.1%).
    """
    a, b, joint, n = label_distribution(db, set_name, field)
    the_set, pair, labels = _two(db, set_name)
    if pair is None:
        return Rate(0, 0), Rate(0, 0), Rate(0, 0)
    (ida, _), (idb, _) = pair
    both = 0
    for cid, in db.execute("SELECT id FROM annotation_cases WHERE set_id = ?", [the_set.id]):
        x = labels.get((cid, ida), {}).get(field)
        y = labels.get((cid, idb), {}).get(field)
        both += x in values and y in values
    return (Rate(sum(a[v].k for v in values), n), Rate(sum(b[v].k for v in values), n),
            Rate(both, n))


def gold_defensible(db: sqlite_utils.Database, set_name: str) -> tuple[Rate, Rate]:
    """(neither rater marked 'shifted', both marked 'shifted') over cases both labelled."""
    a, b, joint, n = label_distribution(db, set_name, "gold_shift")
    the_set, pair, labels = _two(db, set_name)
    if pair is None:
        return Rate(0, 0), Rate(0, 0)
    (ida, _), (idb, _) = pair
    neither = 0
    for cid, in db.execute("SELECT id FROM annotation_cases WHERE set_id = ?", [the_set.id]):
        x = labels.get((cid, ida), {}).get("gold_shift")
        y = labels.get((cid, idb), {}).get("gold_shift")
        neither += x is not None and y is not None and "shifted" not in (x, y)
    return Rate(neither, n), joint["shifted"]


def harmful_flip_rates(db: sqlite_utils.Database, set_name: str) -> dict[str, Rate]:
    """Harmful-flip rate per rater (over the flips they labelled) and 'unanimous'."""
    the_set, pair, labels = _two(db, set_name)
    out: dict[str, Rate] = {}
    if pair is None:
        return {"unanimous": Rate(0, 0)}
    harm_cases = [cid for cid, in db.execute(
        "SELECT id FROM annotation_cases WHERE set_id = ? AND ask_harm = 1", [the_set.id])]
    for pid, name in pair:
        values = [labels.get((cid, pid), {}).get("harm") for cid in harm_cases]
        values = [v for v in values if v is not None]
        out[name] = Rate(sum(v == "harmful" for v in values), len(values))
    (a, _), (b, _) = pair
    both = [(labels.get((c, a), {}).get("harm"), labels.get((c, b), {}).get("harm"))
            for c in harm_cases]
    both = [(x, y) for x, y in both if x is not None and y is not None]
    out["unanimous"] = Rate(sum(x == y == "harmful" for x, y in both), len(both))
    return out


def keyword_hazard(before_text: str | None, after_text: str | None) -> bool:
    """The keyword-CHS flag of a flip: the answer moved off a high-acuity option (a miss)."""
    from analysis.audit.definitions import is_high_acuity

    return is_high_acuity(before_text) and not is_high_acuity(after_text)


def keyword_chs_kappa(db: sqlite_utils.Database, set_name: str) -> list[Agreement]:
    """Kappa of the keyword-CHS flag against each rater's and the unanimous harm label."""
    the_set, pair, labels = _two(db, set_name)
    if pair is None:
        return []
    flags: dict[int, str] = {}
    for row in _case_rows(db, the_set.id):
        if not row["ask_harm"]:
            continue
        options = loads(row["variant_options"]) or loads(row["options_json"]) or {}
        hit = keyword_hazard(options.get(row["answer_before"]), options.get(row["answer_after"]))
        flags[row["id"]] = "harmful" if hit else "not_harmful"
    categories = ("harmful", "not_harmful")

    def collapse(value: str | None) -> str | None:
        return None if value is None else ("harmful" if value == "harmful" else "not_harmful")

    out = []
    for pid, name in pair:
        pairs = [(flag, collapse(labels.get((cid, pid), {}).get("harm")))
                 for cid, flag in flags.items()]
        out.append(from_pairs([(f, h) for f, h in pairs if h is not None], categories,
                              field="harm", binary=True, rater_a="keyword CHS", rater_b=name))
    (a, _), (b, _) = pair
    unanimous = []
    for cid, flag in flags.items():
        x, y = labels.get((cid, a), {}).get("harm"), labels.get((cid, b), {}).get("harm")
        if x is not None and y is not None:
            unanimous.append((flag, "harmful" if x == y == "harmful" else "not_harmful"))
    out.append(from_pairs(unanimous, categories, field="harm", binary=True,
                          rater_a="keyword CHS", rater_b="unanimous"))
    return out


def _human_chain_labels(db: sqlite_utils.Database, set_name: str) -> dict[str, str]:
    """code -> final chain_registration value ('yes'/'no'; 'unclear' and pending dropped)."""
    from annotate.adjudicate import final_labels

    return {code: final.value for (code, name), final in final_labels(db, set_name).items()
            if name == "chain_registration" and final.value in ("yes", "no")}


def _score(method: str, family: str | None, pairs: list[tuple[bool, bool]]) -> RuleValidation:
    """pairs of (rule says registered, human says registered)."""
    agreement = from_pairs([(POSITIVE if r else NEGATIVE, POSITIVE if h else NEGATIVE)
                            for r, h in pairs], (POSITIVE, NEGATIVE),
                           field="chain_registration", binary=True, stratum=family,
                           rater_a=method, rater_b="human")
    return RuleValidation(*Tally.count(pairs), method=method, family=family,
                          agreement=agreement)


def chain_rule_validation(db: sqlite_utils.Database, set_name: str) -> list[RuleValidation]:
    """Token rule and each LLM-judge method against the human chain-registration labels.

    Returns:
        For each method ('token_rule', then judge methods by name): overall, then per family.
    """
    from analysis.audit.definitions import chain_updated

    the_set = get_set(db, set_name)
    human = _human_chain_labels(db, set_name)
    rows = [r for r in _case_rows(db, the_set.id)
            if r["ask_chain_registration"] and r["code"] in human]
    verdicts: dict[str, dict[int, bool]] = {}
    gen_ids = [r["generation_id"] for r in rows if r["generation_id"] is not None]
    if gen_ids:
        marks = ",".join("?" * len(gen_ids))
        for gen_id, method, verdict in db.execute(
                "SELECT subject_generation_id, method, verdict FROM judgements WHERE kind = "
                f"'chain_registration' AND method LIKE 'llm_judge:%' AND "
                f"subject_generation_id IN ({marks}) ORDER BY id", gen_ids):
            word = (verdict or "").strip().lower()
            if word in ("yes", "no"):
                verdicts.setdefault(method, {})[gen_id] = word == "yes"
    scored: dict[str, list[tuple[str, bool, bool]]] = {"token_rule": []}
    for row in rows:
        is_human = human[row["code"]] == "yes"
        token = chain_updated(row["family"], row["chain"], row["new"])
        if token is not None:
            scored["token_rule"].append((row["family"], token, is_human))
        for method, by_gen in sorted(verdicts.items()):
            if row["generation_id"] in by_gen:
                scored.setdefault(method, []).append(
                    (row["family"], by_gen[row["generation_id"]], is_human))
    out = []
    for method, triples in scored.items():
        out.append(_score(method, None, [(r, h) for _, r, h in triples]))
        for family in sorted({f for f, _, _ in triples}):
            out.append(_score(method, family, [(r, h) for f, r, h in triples if f == family]))
    return out
