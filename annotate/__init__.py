"""Clinician re-annotation: codebook, people, blinded sets and cases, label events, agreement.

The headless core the CLI and the Textual screens share, in layers that import only
downwards (the `annotate` contract of pyproject.toml; docs/design.md explains each):

    report                                   the clinician sections and κ plots of a report
    export | stats | robustness              exports; seed-002 statistics; seed-003 results
    verification | adjudicate                `paw verify`; the coordinator's final labels
    labelling | raterfile | agreement        the screen's labelling; rater files; κ tables
    events                                   append-only, hash-chained, signed label events
    sets                                     the seeded draws, named raters, blinded cases
    labels                                   the rule that folds events into current labels
    trust                                    people, keys, sealed values, the signed record
    codebook                                 the one label schema

A rater's side is `sets.annotation_set.rater_queue` / `sets.cases.get_case_view` (blinded
`CaseView`s) and `events.start_session` / `record_label` / `undo_last`; the coordinator's
side is `agreement.tables`, `adjudicate`, `export` and `report`. Import each name from the
module that defines it: the packages re-export nothing.
"""
