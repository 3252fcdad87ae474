"""Clinician re-annotation: codebook, people, blinded sets and cases, label events, agreement.

The headless core the CLI and the Textual screens share. A rater's side is `rater_queue` /
`get_case_view` (blinded `CaseView`s) and `start_session` / `record_label` / `undo_last`
(append-only, hash-chained events committed at once); the coordinator's side is
`agreement_table` / `all_agreements` / `progress`, adjudication and export.
"""

from annotate.agreement.kappa import Agreement, gwet_ac1, landis_koch
from annotate.agreement.tables import RaterProgress, agreement_table, all_agreements, progress
from annotate.sets.cases import CaseView, get_case_view
from annotate.codebook import (
    CODEBOOK_VERSION,
    FIELDS,
    Field,
    Value,
    applicable_fields,
    validate_value,
)
from annotate.events import (
    LabelEvent,
    Session,
    record_label,
    start_session,
    undo_last,
)
from annotate.trust.identity import Person
from annotate.labels import current_labels
from annotate.trust.people import authenticate, register
from annotate.sets.annotation_set import AnnotationSet, get_set, rater_queue, resolve_set, set_names
from annotate.sets.audit import create_set

__all__ = [
    "Agreement",
    "AnnotationSet",
    "CODEBOOK_VERSION",
    "CaseView",
    "FIELDS",
    "Field",
    "LabelEvent",
    "Person",
    "RaterProgress",
    "Session",
    "Value",
    "agreement_table",
    "all_agreements",
    "applicable_fields",
    "authenticate",
    "create_set",
    "current_labels",
    "get_case_view",
    "get_set",
    "gwet_ac1",
    "landis_koch",
    "progress",
    "rater_queue",
    "record_label",
    "register",
    "resolve_set",
    "set_names",
    "start_session",
    "undo_last",
    "validate_value",
]
