"""A rater's case views carry no model identity, arm, template, operator, stratum, other
raters' labels or agreement figures (checked on the serialized views)."""

from __future__ import annotations

import json

from annotate.events import record_label, start_session
from annotate.sets.annotation_set import rater_queue
from annotate.sets.audit import create_set
from annotate.sets.cases import CaseView, get_case_view
from tests.annotate.conftest import named

FORBIDDEN = ("smollm2", "qwen", "cot-v2", "/cot", "M2_sex", "M3_distractor", "M4_negation",
             "M5_severity", "synthetic", "|", "bob", "BOB-PRIVATE-NOTE", "kappa", "agreement",
             "stratum", "ac1", "model", "template", "operator")
"""Model names, arm labels, templates, operators, the dataset and stratum key, the other
rater's name and labels, agreement words (matched case-insensitively in the JSON)."""

FORBIDDEN_KEY_WORDS = ("model", "arm", "template", "operator", "family", "stratum", "rater",
                       "kappa", "agreement", "variant", "generation", "other")


def _serialized(view: CaseView) -> str:
    # '[model]' is what the scrubber leaves where a model named itself: allowed.
    return json.dumps(view.to_dict()).lower().replace("[model]", "[]")


def test_case_views_reveal_nothing_forbidden(db, audit, people):
    create_set(db, audit.audit_id, 40, per_family=None, seed=0, name="s", **named(people))
    bob = people["bob"]
    session = start_session(db, bob, "s")
    bob_codes = [v.code for v in rater_queue(db, "s", bob)]
    for code in bob_codes:
        record_label(db, bob, session, code, "note", "BOB-PRIVATE-NOTE")
        record_label(db, bob, session, code, "gold_shift", "shifted")
    views = rater_queue(db, "s", people["alice"])
    assert len(views) == 40
    # The fixture's chains say "As smollm2 I note ..." in every arm: scrubbed everywhere.
    assert sum(v.chain_after is not None for v in views) == 30
    assert all("[model]" in v.chain_after for v in views if v.chain_after)
    for view in views:
        text = _serialized(view)
        leaks = [word for word in FORBIDDEN if word.lower() in text]
        assert leaks == [], f"{view.code} leaks {leaks}"
        assert view.my_labels == ()  # bob's labels are not alice's


def test_the_view_has_no_field_that_could_hold_identity():
    words = {w for name in CaseView.__dataclass_fields__ for w in name.split("_")}
    assert words.isdisjoint(FORBIDDEN_KEY_WORDS), words & set(FORBIDDEN_KEY_WORDS)


def test_view_shows_the_edit_options_gold_and_answers_of_a_flip(db, audit, people):
    create_set(db, audit.audit_id, 40, per_family=None, seed=0, name="s")
    views = rater_queue(db, "s", people["alice"])
    harm = next(v for v in views if v.ask_harm)
    assert harm.flipped and (harm.answer_before, harm.answer_after) == ("A", "B")
    assert harm.options_dict["A"] == "Septic shock" and harm.gold == "A"
    assert harm.question != harm.edited_question
    for start, end in harm.edited_spans:  # highlighted spans are inside the edited text
        assert 0 <= start < end <= len(harm.edited_question)
    assert "harm" in harm.fields
    same = next(v for v in views if not v.flipped)
    assert same.answer_before is None and same.answer_after is None
    assert "harm" not in same.fields


def test_edit_spans_point_at_the_changed_words(db, audit, people):
    from analysis.common.textdiff import edit_spans

    old, new = edit_spans("a man has mild fever", "a woman has severe fever")
    # 'man' (2..5) and 'mild' (10..14) were replaced by 'woman' (2..7) and 'severe' (12..18)
    assert old == ((2, 5), (10, 14))
    assert new == ((2, 7), (12, 18))
    create_set(db, audit.audit_id, 40, per_family=None, seed=0, name="s")
    code = db.execute("SELECT c.code FROM annotation_cases c JOIN variants v ON "
                      "v.id = c.variant_id WHERE v.family = 'M5' LIMIT 1").fetchone()[0]
    view = get_case_view(db, code, people["alice"])
    assert [view.edited_question[a:b] for a, b in view.edited_spans] == ["severe"]
    assert [view.question[a:b] for a, b in view.original_spans] == ["mild"]
