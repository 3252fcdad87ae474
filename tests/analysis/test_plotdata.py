"""Figures' plot data (`Figure.plot`): the numbers the terminal draws match the PNG's."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis.audit.plots import fcs_plane_data
from analysis.common.plotdata import Series
from analysis.dbpa.report import roc_data


def test_fcs_plane_edges_and_points_are_the_corridor_and_the_arms():
    summary = pd.DataFrame({"afr_d": [0.42, math.nan, 0.3, math.nan],
                            "afr_p": [0.10, 0.2, math.nan, math.nan]},
                           index=pd.Index(["smol/cot", "none/cot", "nopres/cot", "empty/cot"],
                                          name="arm"))
    data = fcs_plane_data(summary)
    edges = {s.label: s for s in data.series if s.kind == "line"}
    low = edges["corridor edge FCS = 0.45"]
    # w = 0.5: FCS = 0.45 is AFR_P = AFR_D + 0.1 (at AFR_D = 0.5: 0.6), cut to the square.
    at = dict(zip(low.x, low.y))
    assert at[0.5] == pytest.approx(0.6) and max(low.y) <= 1.0 + 1e-9
    points = [s for s in data.series if s.kind == "scatter"]
    assert [(p.label, p.x, p.y) for p in points] == [("smol/cot", (0.42,), (0.10,))]
    # FCS = 0.5·0.42 + 0.5·0.90 = 0.66; an arm missing a group is listed, not drawn, with
    # the group that did not fire named (destructive edits fired on nopres/cot).
    assert data.notes == (
        "smol/cot: AFR_D 0.42, AFR_P 0.10, FCS 0.66",
        "none/cot: not computable (no destructive edit fired: AFR_D undefined)",
        "nopres/cot: not computable (no preserving edit fired: AFR_P undefined)",
        "empty/cot: not computable (no destructive or preserving edit fired: AFR_D and "
        "AFR_P undefined)")


def test_roc_data_carries_each_curve_and_its_auc():
    data = roc_data({"tfidf/jsd": ([0.0, 0.5, 1.0], [0.0, 1.0, 1.0], 0.75)}, "ROC")
    assert data.series[0].label == "chance"
    assert data.series[1] == Series("tfidf/jsd (AUC 0.75)", (0.0, 0.5, 1.0), (0.0, 1.0, 1.0))
    assert data.notes == ("tfidf/jsd: AUC 0.750 over 3 points",)


def test_a_series_refuses_mismatched_lengths_and_unknown_kinds():
    with pytest.raises(ValueError, match="2 x values but 1 y values"):
        Series("s", (1, 2), (1,))
    with pytest.raises(ValueError, match="kind must be one of"):
        Series("s", (1,), (1,), kind="pie")
