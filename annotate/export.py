"""Export labels long (one row per case × rater × field) or wide (one row per case), CSV/JSONL.

Every row carries the codebook version, the label-chain head and the signed record's head
at export time (the anchors `paw verify --head` checks), read in the same snapshot as the
rows. Exports are coordinator material: they are unblinded (stratum, model, operator) and
hold every rater's labels and the final labels; `export_verified` (what `paw annotate
export` runs) needs the coordinator and refuses a record that does not verify.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from typing import Any

import sqlite_utils

from annotate.adjudicate import ADJUDICATED_FIELDS, final_labels
from annotate.codebook import CODEBOOK_VERSION, FIELDS
from annotate.sets.annotation_set import get_set
from annotate.trust.identity import Person, require
from annotate.verification.verify import chain_head, record_head
from store.db import snapshot
from store.errors import UserError

FORMATS: tuple[str, ...] = ("csv", "jsonl")
SHAPES: tuple[str, ...] = ("long", "wide")

LONG_COLUMNS: tuple[str, ...] = (
    "set", "code", "family", "operator", "incoherent", "dataset", "model", "rater", "source",
    "field",
    "value", "event_id", "labelled_at", "time_on_item_ms", "reason", "codebook_version",
    "chain_head", "record_head",
)
"""Columns of the long export, in order."""


def _cases(db: sqlite_utils.Database, set_id: int) -> list[dict]:
    """The set's cases; `operator_id` names every operator a merged case stands for
    ('M4_negation_a+M4_negation_b': its labels apply to each edit); `incoherent` the
    coherence checks its edit of the question fails (`analysis.audit.coherence`, as the
    audit report and `paw flips` count them), comma-separated, '' when none — coordinator
    material: the raters' case views never show it (docs/annotation.md, "Coherence")."""
    from analysis.audit.coherence import flags
    from store.db import loads

    row = db.execute("SELECT config_json FROM annotation_sets WHERE id = ?", [set_id]).fetchone()
    merged = {int(m["variant_id"]): "+".join(m["operators"])
              for m in ((loads(row[0]) if row else None) or {}).get("merged", ())}
    cases = list(db.query(
        "SELECT c.id, c.code, c.variant_id, c.stratum, c.ask_harm, c.ask_chain_registration, "
        "v.operator_id, v.family, v.fired, v.target, v.text AS v_text, v.new, i.question, "
        "b.answer AS answer_before, p.answer AS answer_after "
        "FROM annotation_cases c JOIN variants v ON v.id = c.variant_id "
        "JOIN items i ON i.id = v.item_id "
        "LEFT JOIN generations b ON b.id = c.baseline_generation_id "
        "LEFT JOIN generations p ON p.id = c.perturbed_generation_id "
        "WHERE c.set_id = ? ORDER BY c.code", [set_id]))
    for case in cases:
        case["operator_id"] = merged.get(case["variant_id"], case["operator_id"])
        fired, target = case.pop("fired"), case.pop("target")
        edits_question = bool(fired) and target == "question"
        question, text, new = case.pop("question"), case.pop("v_text"), case.pop("new")
        case["incoherent"] = ",".join(flags(question, text, new)) \
            if edits_question and text else ""
    return cases


def _current_events(db: sqlite_utils.Database, set_id: int) -> list[dict]:
    """The latest event per (case, rater, field) whose value is not cleared (sealed values
    opened: the coordinator's session)."""
    from annotate.labels import opened_events

    names = {r[0]: r[1] for r in db.execute("SELECT id, name FROM people")}
    latest: dict[tuple[int, int, str], dict] = {}
    for row in opened_events(db, "c.set_id = ?", [set_id]):
        latest[(row["case_id"], row["person_id"], row["field"])] = row
    return [{**row, "rater": names.get(row["person_id"])}
            for row in sorted(latest.values(), key=lambda r: r["id"])
            if row["value"] is not None]


def long_rows(db: sqlite_utils.Database, set_name: str) -> list[dict[str, Any]]:
    """One row per case × rater × field current label, then one per final label."""
    the_set = get_set(db, set_name)
    heads = _heads(db)
    cases = {c["id"]: c for c in _cases(db, the_set.id)}
    rows = []
    latest = _current_events(db, the_set.id)
    shifted = {(e["case_id"], e["person_id"]) for e in latest
               if e["field"] == "gold_shift" and e["value"] == "shifted"}
    for event in latest:
        if event["field"] == "gold_shift_alt" and (event["case_id"],
                                                   event["person_id"]) not in shifted:
            continue  # a stale letter: gold_shift was changed away from 'shifted'
        case = cases[event["case_id"]]
        rows.append(_long(the_set.name, case, heads, rater=event["rater"], source="rater",
                          field=event["field"], value=event["value"], event_id=event["id"],
                          labelled_at=event["created_at"],
                          time_on_item_ms=event["time_on_item_ms"], reason=None))
    by_code = {c["code"]: c for c in cases.values()}
    for (code, name), final in sorted(final_labels(db, set_name).items()):
        rows.append(_long(the_set.name, by_code[code], heads, rater="final", source=final.source,
                          field=name, value=final.value, event_id=None, labelled_at=final.at,
                          time_on_item_ms=None, reason=final.reason))
    return rows


def _heads(db: sqlite_utils.Database) -> dict[str, str]:
    return {"chain_head": chain_head(db)[1], "record_head": record_head(db)[1]}


def _long(set_name: str, case: dict, heads: dict[str, str], **values: Any) -> dict[str, Any]:
    family, dataset, model = (case["stratum"].split("|") + ["", "", ""])[:3]
    row = {"set": set_name, "code": case["code"], "family": family,
           "operator": case["operator_id"], "incoherent": case["incoherent"],
           "dataset": dataset, "model": model,
           "codebook_version": CODEBOOK_VERSION, **heads, **values}
    return {c: row.get(c) for c in LONG_COLUMNS}


def wide_rows(db: sqlite_utils.Database, set_name: str) -> list[dict[str, Any]]:
    """One row per case: its stratum, then `<field>__<rater>` for each rater and field, then
    `<field>__final` and `<field>__source`."""
    the_set = get_set(db, set_name)
    heads = _heads(db)
    raters = [r[0] for r in db.execute(
        "SELECT DISTINCT p.name FROM label_events e JOIN people p ON p.id = e.person_id "
        "JOIN annotation_cases c ON c.id = e.case_id WHERE c.set_id = ? ORDER BY p.name",
        [the_set.id])]
    by_case: dict[tuple[str, str], dict[str, Any]] = {}
    for label in long_rows(db, set_name):
        if label["rater"] != "final":
            by_case.setdefault((label["code"], label["rater"]), {})[label["field"]] = \
                label["value"]
    finals = final_labels(db, set_name)
    out = []
    for case in _cases(db, the_set.id):
        family, dataset, model = (case["stratum"].split("|") + ["", "", ""])[:3]
        row: dict[str, Any] = {
            "set": the_set.name, "code": case["code"], "family": family,
            "operator": case["operator_id"], "incoherent": case["incoherent"],
            "dataset": dataset, "model": model, "ask_harm": case["ask_harm"],
            "ask_chain_registration": case["ask_chain_registration"],
            "answer_before": case["answer_before"], "answer_after": case["answer_after"],
        }
        for name in FIELDS:
            for rater in raters:
                row[f"{name}__{rater}"] = by_case.get((case["code"], rater), {}).get(name)
            if name in ADJUDICATED_FIELDS:
                final = finals.get((case["code"], name))
                row[f"{name}__final"] = final.value if final else None
                row[f"{name}__source"] = final.source if final else None
        row["codebook_version"] = CODEBOOK_VERSION
        row.update(heads)
        out.append(row)
    return out


def render(rows: list[dict[str, Any]], fmt: str) -> str:
    """Rows as CSV (header from the first row's keys) or JSONL (one object per line)."""
    if fmt not in FORMATS:
        raise UserError(f"format: expected one of {', '.join(FORMATS)}, got {fmt!r}")
    if fmt == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n" for r in rows)
    buffer = io.StringIO()
    columns = list(rows[0]) if rows else list(LONG_COLUMNS)
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def export_labels(db: sqlite_utils.Database, set_name: str, shape: str = "long",
                  fmt: str = "csv") -> str:
    """The set's labels as text.

    Args:
        db: the store.
        set_name: the annotation set.
        shape: 'long' or 'wide'.
        fmt: 'csv' or 'jsonl'.
    """
    if shape not in SHAPES:
        raise UserError(f"shape: expected one of {', '.join(SHAPES)}, got {shape!r}")
    with snapshot(db):  # the rows and the heads stamped on them from one moment
        rows = long_rows(db, set_name) if shape == "long" else wide_rows(db, set_name)
    return render(rows, fmt)


@dataclass(frozen=True)
class VerifiedExport:
    """An export made after the record verified, and the record head it was made from."""

    text: str
    record_head: str
    n_entries: int


def export_verified(db: sqlite_utils.Database, coordinator: Person, set_name: str,
                    shape: str = "long", fmt: str = "csv", *,
                    accept_legacy: bool = False) -> VerifiedExport:
    """The coordinator's export: verify the signed record, then export, in one snapshot.

    The coordinator's own sign-in has already checked that their key is the record's;
    the record ties every rater's key to the set the coordinator signed, so raters'
    signatures are checked here without their passphrases.

    Args:
        accept_legacy: export although unsigned legacy entries (a store upgraded from PAW
            0.1) are in the record — they prove nothing, and the coordinator says so by
            asking; any other problem still stops the export.

    Raises:
        UserError: not a coordinator, or the record shows a problem (nothing exported).
    """
    from annotate.verification.verify import verify_record

    require(coordinator, "coordinator")
    with snapshot(db):
        report = verify_record(db)
        if not report.ok and not (accept_legacy and report.ok_except_legacy()):
            counts = ", ".join(f"{n} {kind}" for kind, n in sorted(report.counts().items()))
            raise UserError(f"the annotation record does not verify ({counts}); nothing "
                            f"exported — see `paw verify --details --coordinator "
                            f"{coordinator.name}`"
                            + ("; unsigned legacy entries only: `--accept-legacy` exports "
                               "anyway" if report.ok_except_legacy() else ""))
        text = export_labels(db, set_name, shape, fmt)
    return VerifiedExport(text, report.head_hash, report.n_entries)
