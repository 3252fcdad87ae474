"""κ over paired labels (`annotate.agreement.kappa_series`) against sklearn on every prefix,
and in the order the labels were set in a real store (the live κ is its last point)."""

from __future__ import annotations

import math
import random
import warnings

import pytest
from sklearn.metrics import cohen_kappa_score

from annotate.agreement.kappa_series import kappa_series, paired_labels, prefix_kappas, series_plot
from annotate.agreement.label_log import LabelLog
from annotate.agreement.tables import agreement_table, rater_pair
from annotate.events import record_label, start_session
from annotate.sets.annotation_set import get_set, rater_queue
from annotate.sets.audit import create_set
from tests.annotate.conftest import named

CATEGORIES = ("no_shift", "shifted", "ambiguous")


def _sklearn(pairs: list[tuple[str, str]]) -> float | None:
    """sklearn's kappa of the pairs; None where it is 0/0 (sklearn warns and gives NaN)."""
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the 0/0 warning of a one-category prefix
        value = cohen_kappa_score(a, b, labels=list(CATEGORIES))
    return None if math.isnan(value) else float(value)


@pytest.mark.parametrize("seed", range(6))
def test_every_prefix_matches_sklearn(seed):
    rng = random.Random(seed)
    # raters who agree about two thirds of the time, so kappa moves about along the way
    pairs = []
    for _ in range(40):
        a = rng.choice(CATEGORIES)
        pairs.append((a, a if rng.random() < 0.65 else rng.choice(CATEGORIES)))
    series = prefix_kappas(pairs, CATEGORIES)
    assert len(series) == len(pairs)
    for n, value in enumerate(series, start=1):
        expected = _sklearn(pairs[:n])
        if expected is None:
            assert value is None, f"prefix {n}"
        else:
            assert value == pytest.approx(expected, abs=1e-12), f"prefix {n}"
    assert any(v is not None and v < 0.9 for v in series)  # not a constant series


def test_undefined_prefixes_stay_undefined_until_a_second_category():
    pairs = [("no_shift", "no_shift")] * 3 + [("shifted", "no_shift"), ("shifted", "shifted")]
    series = prefix_kappas(pairs, CATEGORIES)
    assert series[:3] == (None, None, None)
    for n in (4, 5):
        assert series[n - 1] == pytest.approx(_sklearn(pairs[:n]), abs=1e-12)


def test_a_value_outside_the_categories_is_refused():
    with pytest.raises(ValueError, match="value outside"):
        prefix_kappas([("no_shift", "maybe")], CATEGORIES)


def test_series_follows_the_order_labels_were_set_and_ends_at_the_live_kappa(db, audit,
                                                                             people):
    create_set(db, audit.audit_id, 12, per_family=None, seed=0, name="s", **named(people))
    sessions = {}
    for name in ("alice", "bob"):
        rater_queue(db, "s", people[name])
        sessions[name] = start_session(db, people[name], "s")
    codes = [r[0] for r in db.execute("SELECT code FROM annotation_cases ORDER BY code")]
    alice = ["no_shift", "shifted", "ambiguous", "no_shift", "shifted", "no_shift",
             "ambiguous", "no_shift"]
    bob = ["no_shift", "shifted", "no_shift", "no_shift", "ambiguous", "no_shift",
           "ambiguous", "shifted"]
    # alice labels everything first; bob works backwards, so the pairs complete in bob's
    # order (last code first)
    for code, value in zip(codes, alice):
        record_label(db, people["alice"], sessions["alice"], code, "gold_shift", value)
    order = list(range(len(bob)))[::-1]
    for i in order:
        record_label(db, people["bob"], sessions["bob"], codes[i], "gold_shift", bob[i])
    # alice then changes her mind on the first case paired: it moves to the end
    record_label(db, people["alice"], sessions["alice"], codes[order[0]], "gold_shift",
                 "shifted")
    alice[order[0]] = "shifted"
    expected_order = order[1:] + order[:1]

    log = LabelLog(get_set(db, "s").id)
    log.refresh(db)
    pair = rater_pair(db, get_set(db, "s").id)
    pairs = paired_labels(db, log, pair, ("gold_shift", False))
    assert pairs == [(alice[i], bob[i]) for i in expected_order]
    series = kappa_series(db, log, pair, [("gold_shift", False)])[("gold_shift", False)]
    for n, value in enumerate(series, start=1):
        expected = _sklearn(pairs[:n])
        assert (value is None) if expected is None else value == pytest.approx(expected)
    assert series[-1] == pytest.approx(agreement_table(db, "s", "gold_shift").kappa)


def test_plot_data_names_the_last_value_and_skips_undefined_points():
    plot = series_plot("gold_shift (3-way)", (None, None, 0.5, 0.25))
    assert plot.series[0].x == (1, 2, 3, 4) and plot.series[0].y == (None, None, 0.5, 0.25)
    assert plot.notes == ("κ after 4 paired labels: 0.25 · lowest 0.25 · highest 0.50",)
    # The whole range with room at both ends: no point on the frame (issue 38).
    assert plot.ylim == pytest.approx((-0.05, 1.05))
    assert series_plot("x", ()).notes == ("no case labelled by both raters yet",)
    assert series_plot("x", (-0.5, 0.2)).ylim == pytest.approx((-0.575, 1.075))


def test_report_figures_carry_the_same_series_and_draw_a_png(db, audit, people):
    from annotate.report.kappa_figures import kappa_figures

    create_set(db, audit.audit_id, 12, per_family=None, seed=0, name="s", **named(people))
    assert [f.plot().series[0].y for f in kappa_figures(db, audit.audit_id)
            if f.caption.startswith("κ over paired labels: gold_shift (3-way)")] == [()]
    codes = [r[0] for r in db.execute("SELECT code FROM annotation_cases ORDER BY code")]
    values = {"alice": ["no_shift", "shifted", "no_shift", "ambiguous"],
              "bob": ["no_shift", "shifted", "shifted", "ambiguous"]}
    for name, labels in values.items():
        rater_queue(db, "s", people[name])
        session = start_session(db, people[name], "s")
        for code, value in zip(codes, labels):
            record_label(db, people[name], session, code, "gold_shift", value)
    figures = {f.caption: f for f in kappa_figures(db, audit.audit_id)}
    full = figures["κ over paired labels: gold_shift (3-way) (set s)"]
    assert "κ over paired labels: gold_shift (shifted vs not) (set s)" in figures
    log = LabelLog(get_set(db, "s").id)
    log.refresh(db)
    expected = kappa_series(db, log, rater_pair(db, get_set(db, "s").id),
                            [("gold_shift", False)])[("gold_shift", False)]
    assert full.plot().series[0].y == expected and len(expected) == 4
    assert expected[-1] == pytest.approx(agreement_table(db, "s", "gold_shift").kappa)
    assert full.after == "agreement_s" and full.render()[:8] == b"\x89PNG\r\n\x1a\n"
    assert kappa_figures(db, audit.audit_id + 999) == []  # no set drawn from that run


def test_running_totals_match_a_hand_worked_series():
    # (a,a): n=1, diagonal 1, Σ r_k c_k = 1 = n² → undefined. (a,a),(a,b): rows a=2, cols
    # a=1 b=1, Σ = 2·1 + 0·1 = 2 → (2·1 − 2)/(4 − 2) = 0. + (b,b): rows a=2 b=1, cols a=1
    # b=2, Σ = 2·1 + 1·2 = 4 → (3·2 − 4)/(9 − 4) = 2/5. Identical raters give 1 exactly.
    assert prefix_kappas([("a", "a"), ("a", "b"), ("b", "b")], ("a", "b")) == (None, 0.0, 0.4)
    same = prefix_kappas([("a", "a"), ("b", "b"), ("a", "a"), ("b", "b")], ("a", "b"))
    assert same[1:] == (1.0, 1.0, 1.0)


def test_no_figure_for_a_field_no_case_asks(db, people):
    # Issue 35: a set whose cases never ask harm (no flip on M3/M4/M5) drew an empty κ plot
    # for it in the report; now only fields some case asks get one.
    from annotate.report.kappa_figures import kappa_figures
    from tests.annotate.conftest import make_audit

    b = make_audit(db, 4, families=("M2",))  # M2 edits: never the harm question
    create_set(db, b.audit_id, 8, per_family=None, seed=0, name="s", **named(people))
    assert db.execute("SELECT SUM(ask_harm) FROM annotation_cases").fetchone()[0] == 0
    captions = [f.caption for f in kappa_figures(db, b.audit_id)]
    assert any("gold_shift (3-way)" in c for c in captions)
    assert not any("harm" in c for c in captions), captions
