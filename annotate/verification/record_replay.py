"""Replaying the signed record for `paw verify`: every entry's hash, link, signature and
signer's authority in id order, then every live row against the entry that attests it.

`annotate.verification.verify.verify_record` drives it; the rules of who may sign what for people
entries are shared with sign-in (`annotate.trust.record`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

GENESIS_HASH = "0" * 64


@dataclass(frozen=True)
class RecordProblem:
    """One finding in the signed record.

    Attributes:
        entry_id: the record entry concerned (None for a row with no entry at all).
        kind: 'altered' | 'deleted' | 'relinked' | 'forged' | 'unrecorded' | 'anchor' |
            'legacy' (rows nobody signed) | 'content' | 'time'
            (`annotate.verification.content_check`).
        message: what is wrong, naming the row (coordinator-facing: may name people).
        person_id: whose row, event or signature it concerns, when known.
    """

    entry_id: int | None
    kind: str
    message: str
    person_id: int | None = None


class Checker:
    """Replays the record in id order, then compares it with the live tables."""

    def __init__(self, db: Any) -> None:
        from annotate.trust.record import RecordState

        self.db = db
        self.state = RecordState()
        self.problems: list[RecordProblem] = []
        self.warnings: list[str] = []
        self.legacy_ids: list[int] = []
        self.latest: dict[tuple[str, int], dict] = {}
        self.set_of_case: dict[int, int] = {}
        self.hashes: set[str] = set()
        self.n = self.n_legacy = 0

    def add(self, entry_id: int | None, kind: str, message: str,
            person_id: int | None = None) -> None:
        self.problems.append(RecordProblem(entry_id, kind, message, person_id))

    def who(self, person_id: int | None) -> str:
        name = self.state.names.get(person_id) if person_id is not None else None
        return name if name is not None else f"person #{person_id}"

    # -- the chain itself
    def replay(self, entries: list[dict]) -> None:
        from annotate.trust.record import GENESIS_HASH, advance, entry_hash, person_entry_problem

        previous_id, previous_hash, signing_began = 0, GENESIS_HASH, False
        for e in entries:
            self.n += 1
            eid = e["id"]
            what = f"record entry {eid} ({e['kind']}, {e['ref_table']} {e['ref_id']})"
            intact = record_intact = entry_hash(e) == e["hash"]
            if not record_intact:
                self.add(eid, "altered", f"{what}: content altered (hash mismatch)",
                         e["person_id"])
            if e["prev_hash"] != previous_hash:
                if eid > previous_id + 1:
                    self.add(previous_id + 1, "deleted", f"record entries {previous_id + 1}-"
                             f"{eid - 1} deleted (entry {eid} links to a missing predecessor)")
                else:
                    self.add(eid, "relinked", f"{what}: prev_hash does not match entry "
                             f"{previous_id} (replaced or re-ordered)")
            elif eid > previous_id + 1:
                self.add(previous_id + 1, "deleted",
                         f"record entry id gap {previous_id + 1}-{eid - 1} before entry {eid}")
            previous_id, previous_hash = eid, e["hash"]
            self.hashes.add(e["hash"])
            if e["person_id"] is None:
                self.n_legacy += 1
                self.legacy_ids.append(eid)
                if e["kind"] != "legacy" or signing_began:
                    self.add(eid, "forged", f"{what}: unsigned, after signing began")
                    intact = False
            else:
                signing_began = True
            if e["ref_table"] == "people":
                problem = person_entry_problem(self.state, e)
                if problem:
                    self.add(eid, "forged", f"{what}: {problem}", e["ref_id"])
                elif intact:
                    advance(self.state, e)
                    self.latest[("people", e["ref_id"])] = e
                continue
            if e["kind"] != "legacy":
                problem = self.authority(e)
                if problem:
                    self.add(eid, "forged", f"{what}: {problem}", e["person_id"])
                    continue
            if intact:
                self.latest[(e["ref_table"], e["ref_id"])] = e
                if e["ref_table"] == "annotation_sets":
                    for case in (e["content"] or {}).get("cases", []):
                        self.set_of_case[case["id"]] = e["ref_id"]

    def authority(self, e: dict) -> str | None:
        """Why a signed non-people entry is not valid (None when it is)."""
        from annotate.trust.keys import signature_valid

        signer, content = e["person_id"], e["content"] or {}
        key = self.state.signer_key(signer)
        if key is None:
            return f"signed by {self.who(signer)}, who has no key in the record"
        if not signature_valid(key, e["signature"], e["hash"]):
            return f"its signature does not verify under {self.who(signer)}'s recorded key"
        role = self.state.roles.get(signer)
        if e["kind"] == "set":
            the_set = content.get("set", {})
            if role != "coordinator" or the_set.get("raters_named_by") != signer:
                return f"a set sealed by {self.who(signer)}, who is not its coordinator"
            for rater in content.get("raters", []):
                pinned = bytes.fromhex(rater.get("public_key") or "")
                if self.state.roles.get(rater["id"]) != "rater" or \
                        self.state.keys.get(rater["id"]) != pinned:
                    return (f"names {rater.get('name')} as a rater with a key the record "
                            "does not hold")
        elif e["kind"] == "adjudication":
            if role != "coordinator" or content.get("person_id") != signer:
                return f"an adjudication signed by {self.who(signer)}, not its coordinator"
        elif e["kind"] == "label":
            if content.get("person_id") != signer:
                return (f"an event of {self.who(content.get('person_id'))} signed by "
                        f"{self.who(signer)}")
            the_set = self.set_of(content.get("case_id"))
            if signer not in (the_set.get("rater_a_id"), the_set.get("rater_b_id")):
                return f"an event by {self.who(signer)}, who is not a named rater of its set"
        elif e["kind"] == "pack":
            if role != "coordinator" or content.get("packed_by") != signer:
                return f"a rater file packed by {self.who(signer)}, not a coordinator"
        elif e["kind"] == "merged_label":
            return self.merged_authority(signer, role, content)
        else:
            return f"an entry of unknown kind {e['kind']!r}"
        return None

    def set_of(self, case_id: int | None) -> dict:
        """The set a case belongs to, as its latest set entry names it ({} when unknown)."""
        set_id = self.set_of_case.get(case_id, -1) if case_id is not None else -1
        set_entry = self.latest.get(("annotation_sets", set_id))
        return ((set_entry or {}).get("content") or {}).get("set", {})

    def merged_authority(self, signer: int, role: str | None, content: dict) -> str | None:
        """A rater-file event merged by a coordinator: the rater's own signature on the
        offline event must verify under the rater's recorded key, and the row must be the
        one that event describes (case, rater, times, links)."""
        from annotate.raterfile.file import event_hash
        from annotate.trust.keys import signature_valid

        row, offline = content.get("row") or {}, content.get("offline") or {}
        rater = row.get("person_id")
        if role != "coordinator":
            return f"a rater-file event merged by {self.who(signer)}, not a coordinator"
        the_set = self.set_of(row.get("case_id"))
        if rater not in (the_set.get("rater_a_id"), the_set.get("rater_b_id")):
            return f"a merged event of {self.who(rater)}, who is not a named rater of its set"
        if event_hash(offline.get("file_id", ""), offline) != offline.get("hash") or \
                not signature_valid(self.state.signer_key(rater), bytes.fromhex(
                    offline.get("signature") or ""), offline.get("hash") or ""):
            return f"a merged event whose offline signature is not {self.who(rater)}'s"
        for ours, theirs in (("time_on_item_ms", "time_on_item_ms"),
                             ("created_at", "created_at"), ("app_version", "app_version"),
                             ("codebook_version", "codebook_version")):
            if row.get(ours) != offline.get(theirs):
                return f"a merged event whose {ours} is not the one {self.who(rater)} signed"
        return None

    # -- every live row against its entry
    def cover(self) -> None:
        from annotate.trust import record

        db = self.db
        for row in record.rows(db, "SELECT * FROM people ORDER BY id"):
            entry = self.latest.get(("people", row["id"]))
            if entry is None:
                self.add(None, "unrecorded", f"person {row['name']}: not in the signed record "
                         "(added outside PAW)", row["id"])
                continue
            expected = (record.legacy_person_content(row) if entry["kind"] == "legacy"
                        else record.person_content(row))
            diff = _diff(entry["content"], expected)
            if diff:
                self.add(entry["id"], "altered", f"person {row['name']}: differs from the "
                         f"record ({diff})", row["id"])
        for set_id, name, named in db.execute(
                "SELECT id, name, rater_a_id FROM annotation_sets ORDER BY id").fetchall():
            entry = self.latest.get(("annotation_sets", set_id))
            if entry is None:
                if named is not None or self._has_labels(set_id):
                    self.add(None, "unrecorded", f"set {name}: not in the signed record")
                continue
            self.compare_set(name, entry, record.set_content(db, set_id))
        for table, noun in (("label_events", "label event"), ("adjudications", "adjudication")):
            live_ids = set()
            for (row_id,) in db.execute(f"SELECT id FROM {table} ORDER BY id").fetchall():
                live_ids.add(row_id)
                entry = self.latest.get((table, row_id))
                content = record.row_content(db, table, row_id) or {}
                if entry is None:
                    self.add(None, "unrecorded", f"{noun} {row_id}: not in the signed record "
                             "(inserted outside PAW, or its entry is invalid)",
                             content.get("person_id"))
                    continue
                attested = entry["content"]
                if entry["kind"] == "merged_label":
                    attested = attested.get("row") or {}
                    self.check_commitment(entry, table, row_id)
                diff = _diff(attested, {k: content.get(k) for k in attested})
                if diff:
                    self.add(entry["id"], "altered", f"{noun} {row_id}: differs from its "
                             f"signed record entry ({diff})", content.get("person_id"))
        for row in record.rows(db, "SELECT * FROM rater_files ORDER BY id"):
            entry = self.latest.get(("rater_files", row["id"]))
            live = {k: record.plain(v) for k, v in row.items()}
            if entry is None:
                self.add(None, "unrecorded", f"rater file {row['file_id'][:8]}…: not in the "
                         "signed record")
            elif _diff(entry["content"], live):
                self.add(entry["id"], "altered", f"rater file {row['file_id'][:8]}…: differs "
                         f"from the record ({_diff(entry['content'], live)})")
        for (table, row_id), entry in self.latest.items():
            if table in ("label_events", "adjudications", "people", "annotation_sets",
                         "rater_files"):
                exists = db.execute(f"SELECT 1 FROM {table} WHERE id = ?", [row_id]).fetchone()
                if not exists:
                    self.add(entry["id"], "deleted", f"{table} row {row_id}: deleted (record "
                             f"entry {entry['id']} attests it)", entry["person_id"])

    def check_commitment(self, entry: dict, table: str, row_id: int) -> None:
        """Where this process can open a merged event's sealed value, it must be the field
        and value the rater committed to in her file (salt sealed with it)."""
        from annotate.raterfile.file import commitment
        from annotate.trust import record
        from annotate.trust.sealing import open_row_full

        row = record.rows(self.db, f"SELECT * FROM {table} WHERE id = ?", [row_id])
        if not row or row[0].get("sealed_json") is None:
            return
        opened = open_row_full(row[0])
        offline = entry["content"].get("offline") or {}
        if opened is not None and commitment(opened.get("salt", ""), opened["field"],
                                             opened["value"]) != offline.get("commit_sha256"):
            self.add(entry["id"], "altered", f"label event {row_id}: its sealed value is not "
                     "the one the rater signed in her file", row[0]["person_id"])

    def _has_labels(self, set_id: int) -> bool:
        return self.db.execute(
            "SELECT 1 FROM label_events e JOIN annotation_cases c ON c.id = e.case_id "
            "WHERE c.set_id = ? LIMIT 1", [set_id]).fetchone() is not None

    def compare_set(self, name: str, entry: dict, live: dict) -> None:
        sealed = entry["content"] or {}
        diff = _diff(sealed.get("set", {}), live["set"])
        if diff:
            self.add(entry["id"], "altered", f"set {name}: differs from the record ({diff})")
        if [r["id"] for r in sealed.get("raters", [])] != [r["id"] for r in live["raters"]] \
                or _diff({r["id"]: r for r in sealed.get("raters", [])},
                         {r["id"]: r for r in live["raters"]}):
            self.add(entry["id"], "altered", f"set {name}: its raters or their keys changed")
        old = {c["id"]: c for c in sealed.get("cases", [])}
        new = {c["id"]: c for c in live["cases"]}
        if set(old) != set(new):
            added, removed = sorted(set(new) - set(old)), sorted(set(old) - set(new))
            self.add(entry["id"], "altered", f"set {name}: case list changed (added ids "
                     f"{added or '-'}, removed ids {removed or '-'})")
        own = ("shown_sha256", "inputs")
        covered = all("inputs" in case for case in sealed.get("cases", []))
        if not covered:
            self.warnings.append(
                f"set {name}: sealed by an older PAW, so its cases' operator tags and tokens, "
                "verdicts and model identity are not covered by the record")
        for case_id in sorted(set(old) & set(new)):
            a, b = old[case_id], new[case_id]
            if a.get("shown_sha256") != b.get("shown_sha256"):
                self.add(entry["id"], "altered", f"set {name}, case {b['code']}: a text shown "
                         "to raters (question, edit, options, gold, answers or chain) changed "
                         "after the set was sealed")
            diff = _diff({k: v for k, v in a.items() if k not in own},
                         {k: v for k, v in b.items() if k not in own})
            if diff:
                self.add(entry["id"], "altered", f"set {name}, case {b['code']}: {diff}")
            if covered:
                diff = _diff(_flat(a.get("inputs")), _flat(b.get("inputs")))
                if diff:
                    self.add(entry["id"], "altered", f"set {name}, case {b['code']}: an input "
                             f"of the clinician tables changed after sealing ({diff})")

    def anchor(self, wanted: str) -> None:
        """An anchored record head must still be the hash of a record entry."""
        if wanted not in self.hashes and wanted != GENESIS_HASH:
            self.add(None, "anchor", f"anchored record head {wanted[:16]}… is not in the "
                     "record (newest entries deleted or the record rebuilt)")

    def legacy(self) -> None:
        """Entries nobody signed prove nothing: one problem naming how many there are, and
        each one attesting a row made after the signed record existed is forged."""
        if not self.legacy_ids:
            return
        self.add(self.legacy_ids[0], "legacy", f"{len(self.legacy_ids)} record entries "
                 f"(ids {self.legacy_ids[0]}-{self.legacy_ids[-1]}) are unsigned legacy "
                 "entries: rows from before the signed record, which nobody's signature "
                 "vouches for")
        row = self.db.execute("SELECT applied_at FROM _migrations WHERE name = "
                              "'m005_signed_annotation_record'").fetchone()
        if row is None:
            return
        since = _when(row[0])
        for entry in self.db.execute(
                "SELECT id, ref_table, ref_id, json_extract(content_json, '$.created_at') "
                "FROM record_log WHERE person_id IS NULL ORDER BY id").fetchall():
            created = _when(entry[3])
            # Whole seconds: the migration's time is stored to the second.
            if since is not None and created is not None and \
                    created.replace(microsecond=0) > since:
                self.add(entry[0], "forged", f"record entry {entry[0]} (legacy, {entry[1]} "
                         f"{entry[2]}): unsigned, yet its row was made {entry[3]}, after the "
                         f"signed record was introduced ({row[0]})")


def _when(text: Any) -> Any:
    """An ISO time as an aware datetime (UTC when naive), None when it is not one."""
    from datetime import datetime, timezone

    try:
        stamp = datetime.fromisoformat(str(text))
    except (TypeError, ValueError):
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)


def _flat(inputs: dict | None) -> dict:
    """A case's inputs with the verdict list as one comparable value per generation."""
    if not inputs:
        return {}
    flat = {k: v for k, v in inputs.items() if k != "verdicts"}
    for verdict in inputs.get("verdicts", []):
        key = (f"verdict {verdict.get('kind')}/{verdict.get('method')} on generation "
               f"{verdict.get('generation_id')}")
        flat[key] = verdict.get("verdict")
    return flat


def _diff(recorded: dict, live: dict) -> str:
    """'field: recorded → live' for each difference (empty when equal)."""
    parts = []
    for key in sorted(set(recorded) | set(live), key=str):
        if recorded.get(key) != live.get(key):
            parts.append(f"{key}: {_short(recorded.get(key))} → {_short(live.get(key))}")
    return "; ".join(parts)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "…'"
