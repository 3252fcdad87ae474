"""Snapshots of the papers' figures on the Statistics screen at 80×24 and 120×36 (issue 22,
criterion 3); the FCS plane is pinned in test_workbench_snapshots.py ("plane").

Every figure comes from a real store (tests/tui/figure_stores.py,
built on the fake backend) opened in the real `WorkbenchApp`: key 3, the figure's option
highlighted as a user would, the report built by the screen's own worker:

- the DBPA ROC (seed 001): `analysis/dbpa/report.py`, `roc_data`;
- seed 003's Figures 5 and 6: `analysis/robustness/report.py`, the two figures with `plot=`;
- seed 000's dose-response Figures 2 and 3: `analysis/counterfactual/plots.py`, `dose_data`;
- κ over paired labels for the coordinator signed in at the gate:
  `annotate/report/kappa_figures.py` (the fixture set of tests/tui/conftest.py, labelled).

The power curves (seed 000, Appendix F; `analysis/counterfactual/power.py`, `power_data`)
come from `paw power --study` run on the dose store's study through the real entry point:
the simulation is kept with the study (m012) and its report carries the curves.

Besides the snapshot each test checks, on the screen as drawn, that the plot's title is
there and that the plot has the expected number of series. Update with --snapshot-update
after reading the SVGs (title, axis names, legend).
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable

import pytest

from store import open_db
from tests.tui import figure_stores as stores
from tests.tui.helpers import screen_text, wait_until
from workbench.tui.workbench_app import WorkbenchApp

SIZES = [(80, 24), (120, 36)]


def _ids(size) -> str:
    return f"{size[0]}x{size[1]}"


@dataclass(frozen=True)
class Shown:
    """A figure's plot: the store it comes from, its caption in the report, and its series."""

    build: Callable[[str], None]
    caption: str
    series: int
    """Series drawn (legend entries; a stacked bar chart: one per stacked category)."""


FIGURES = {
    # chance + one curve per (embedder, distance): tfidf / jsd, tfidf / energy
    "dbpa_roc": Shown(stores.dbpa_store, "ROC of DBPA decisions, should-change vs "
                      "should-not-change perturbations", 3),
    # one stacked category per direction: more/less aggressive, lateral, unknown
    "robustness_figure5": Shown(stores.robustness_store,
                                "Direction of changed answers per model (as Figure 5)", 4),
    # one stacked category per stereotype-evidence category (six)
    "robustness_figure6": Shown(stores.robustness_store,
                                "Stereotype-evidence flags by category (as Figure 6)", 6),
    # one line per (model, task): fake · yes/no, swayed · yes/no
    "dose_figure2": Shown(stores.dose_store, "Figure 2: flip rate against tokens changed", 2),
    "dose_figure3": Shown(stores.dose_store, "Figure 3: MI (bits) against tokens changed", 2),
}


async def show_figure(pilot, caption: str, seen: dict) -> None:
    """Statistics (key 3), the report built, the figure `caption` highlighted in the list;
    what the screen then shows goes into `seen` (asserted after the snapshot is taken)."""
    from textual.widgets import OptionList

    from workbench.tui.widgets.figure_plot import FigurePlot

    await pilot.pause()
    await pilot.press("3")
    await wait_until(pilot, lambda: pilot.app.screen.report is not None, seconds=60)
    screen = pilot.app.screen
    captions = [f.caption for f in screen.report.figures]
    seen["captions"] = captions
    if caption not in captions:
        return
    option_id = f"figure:{captions.index(caption)}"
    options = screen.query_one("#sections", OptionList)
    options.highlighted = options.get_option_index(option_id)
    await pilot.pause()
    plot = screen.query_one("#figure", FigurePlot)
    await wait_until(pilot, lambda: plot.data is not None)
    await pilot.pause()
    seen.update(option=option_id, shown=screen.shown, displayed=plot.display,
                data=plot.data, text=screen_text(pilot.app),
                fits=screen.region.contains_region(plot.region), height=plot.region.height)


def shown(whole: str, text: str, at_least: int = 20) -> bool:
    """`whole` is on screen, entire or cut to the plot's width (`at_least` characters, then
    '…': `FigurePlot` cuts a title or an axis name that plotext would drop)."""
    return whole in text or any(whole[:n].rstrip() + "…" in text
                                for n in range(at_least, len(whole)))


def check(seen: dict, caption: str, series: int) -> None:
    """The figure was listed, is the one shown, and its title and series are on screen."""
    assert caption in seen["captions"], seen["captions"]
    assert seen["shown"] == seen["option"] and seen["displayed"]
    data = seen["data"]
    assert shown(data.title, seen["text"]), f"title {data.title!r} not on screen"
    for axis, name in (("x", data.xlabel), ("y", data.ylabel)):  # both under the plot
        assert shown(f"{axis}: {name}", seen["text"], 8), f"{axis} axis {name!r} not on screen"
    assert len(data.series) == series, [s.label for s in data.series]
    assert seen["fits"] and seen["height"] >= 10


@pytest.mark.parametrize("size", SIZES, ids=_ids)
@pytest.mark.parametrize("figure", list(FIGURES))
def test_statistics_figure(snap_compare, tmp_path, figure, size):
    shown = FIGURES[figure]
    path = str(tmp_path / "paw.db")
    shown.build(path)
    seen: dict = {}

    async def run_before(pilot) -> None:
        await show_figure(pilot, shown.caption, seen)

    same = snap_compare(WorkbenchApp(path), run_before=run_before, terminal_size=size)
    check(seen, shown.caption, shown.series)
    assert same


POWER_CONDITION = "fake · yes/no"


def stored_power(path: str, tmp_path) -> None:
    """`paw power --study` on the dose store's study, through the real entry point: the
    simulation is kept with the study (m012), whose report then carries its curves."""
    from store.runs import list_runs
    from workbench.cli import main

    db = open_db(path)
    try:
        (study,) = [r.name for r in list_runs(db) if r.kind == "study"]
    finally:
        db.conn.close()
    main(["power", "--study", study, "--sigma", ",".join(map(str, stores.POWER_SIGMAS)),
          "--sigma-pert", ",".join(map(str, stores.POWER_PERTS)), "--sims", "40",
          "--n-boot", "50", "--out", str(tmp_path / "power.md"), "--db", path])


@pytest.mark.parametrize("size", SIZES, ids=_ids)
def test_statistics_power_curves(snap_compare, tmp_path, size):
    path = str(tmp_path / "paw.db")
    stores.dose_store(path)
    stored_power(path, tmp_path)
    seen: dict = {}

    async def run_before(pilot) -> None:
        await show_figure(pilot, f"power curves: {POWER_CONDITION}", seen)

    same = snap_compare(WorkbenchApp(path), run_before=run_before, terminal_size=size)
    # one line per (σ, test): 2 σ × JSD, KL, MI, φ, FR
    check(seen, f"power curves: {POWER_CONDITION}", 2 * 5)
    assert same


@pytest.mark.parametrize("size", SIZES, ids=_ids)
def test_statistics_kappa_over_labels(snap_compare, annotation_db, monkeypatch, size):
    # The coordinator signed in at the gate: κ over the 6 paired gold_shift labels of the
    # fixture set (the labels of test_signin_gate's κ test; its live κ is 0.25).
    from tests.tui.conftest import PASSPHRASE, SET_NAME
    from tests.tui.helpers import case_codes, label_everything
    from tests.tui.test_coordinator_screen import ALICE, BOB
    from tests.tui.test_signin_gate import gate_fast, sign_in

    codes = case_codes(annotation_db.db_path)
    for person, values in ((annotation_db.alice, ALICE), (annotation_db.bob, BOB)):
        label_everything(annotation_db.db_path, person,
                         {c: {"gold_shift": v, "validity": "valid"}
                          for c, v in zip(codes, values)})
    gate_fast(monkeypatch)
    caption = f"κ over paired labels: gold_shift (3-way) (set {SET_NAME})"
    seen: dict = {}

    async def run_before(pilot) -> None:
        await pilot.pause()
        await sign_in(pilot, "carol", PASSPHRASE)
        await wait_until(pilot, lambda: not pilot.app.locked)
        await show_figure(pilot, caption, seen)

    same = snap_compare(WorkbenchApp(annotation_db.db_path), run_before=run_before,
                        terminal_size=size)
    check(seen, caption, 1)  # one line: κ after the first n paired labels
    assert seen["data"].series[0].y[-1] == pytest.approx(0.25)
    assert "κ after 6 paired labels: 0.25" in seen["text"]
    assert same


def test_bars_end_below_the_legend():
    # plotext draws the legend over the canvas' top left rows; a stacked bar chart's y axis
    # is raised so the tallest bar ends below it (Figure 6 at 80×24: 6 categories, 6 flags).
    from analysis.common.plotdata import PlotData, Series
    from workbench.tui.widgets.figure_plot import LEGEND_ROWS_FREE, _headroom

    series = [Series(c, ("m1", "m2"), (6.0, 6.0) if c == "a" else (0.0, 0.0), kind="bar")
              for c in "abcdef"]
    data = PlotData("flags", "model", "flags", tuple(series), stacked=True)
    rows = 19  # the plot's height on the Statistics screen at 80×24
    canvas = rows - LEGEND_ROWS_FREE
    top = _headroom(data, series, rows)
    assert top == pytest.approx(6.0 * canvas / (canvas - len(series) - 1))
    # the bars' top row lies below the legend's last row
    assert 6.0 / top * canvas <= canvas - len(series) - 1 + 1e-9
    assert _headroom(data, series, 12) is None  # no room: the bars keep the canvas
    assert _headroom(data, [], rows) is None  # lines: unchanged


def test_plotext_keeps_ticks_in_order():
    # plotext's de-duplication went through a set, so a bar chart's category names moved
    # with the per-process string hash; FigurePlot's module makes it keep first-seen order.
    import plotext._utility as ut

    import workbench.tui.widgets.figure_plot  # noqa: F401  (installs the order-keeping one)

    ticks, labels = [2.0, 1.0, 2.0], ["fake2/neutral_cot@1", "fake/neutral_cot@1",
                                      "fake2/neutral_cot@1"]
    assert ut.brush(ticks, labels) == [[2.0, 1.0], ["fake2/neutral_cot@1",
                                                    "fake/neutral_cot@1"]]
