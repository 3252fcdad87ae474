"""Benchmark: the TUI's responsiveness in the real Textual app, headless, at 80×24 and 120×36.

One run times, median and max over `--repeats`, on a small and a large store each:

1. **open flips**: `switch_mode("flips")` (key 2) on a new app → the inspector's first page;
2. **open a case**: `action_open_case` (enter) on an F-block row of that page → the flip case
   screen with question, options, distribution, chain and continuation drawn;
3. **next case**: on the labelling screen (`paw annotate`), the last required label of a
   case (`action_digit`) and `action_done` (enter) → the next case drawn;
4. **statistics**: `switch_mode("statistics")` (key 3) on a new app → the first section on
   screen (its report is built in a worker: until it is drawn), then switching the section
   list to a table and back to the plot;
5. **coordinator**: the other rater (bob, his own connection) records a gold shift on a case
   alice labelled → the agreement table shows N + 1; timed from the poll tick that notices
   it (`poll()`, called at once: the recomputation and the draw) and, separately, with the
   screen's own 1 s poll (what a coordinator sees: up to a second more).

Times run from the action method (not `pilot.press`, whose idle waits are the harness) to the
refresh that put the result on screen: the bench polls the widgets' content (table rows,
`Static` content, the plot's data) every millisecond with plain `asyncio.sleep` (no
`pilot.pause`, which forces a screen update), then waits for the screen's next refresh
(`call_after_refresh`). Sealed label values opened by this process are forgotten before each
labelling or coordinator app starts, so it pays what a newly started process pays.

Stores (`bench/tui_stores.py`): the `paw demo` audit run through the real engine on the fake
backend and an audit of `--edits` edits (`bench/flips_scale.py`); annotation sets built
through the real API with `--small-labels` and `--labels` labels per rater.

    .venv/bin/python bench/tui_screens.py                       # 50,000 edits, 10,000 labels
    .venv/bin/python bench/tui_screens.py --edits 2000 --labels 300 --repeats 2   # quick
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.tui_stores import annotation_store, count_edits, demo_store, flips_store  # noqa: E402

SIZES = ((80, 24), (120, 36))
TARGETS = {
    "open flips (first page)": "≤ 300 ms", "open a case": "≤ 300 ms",
    "next case": "≤ 50 ms p95", "statistics: first section": "≤ 1 s (demo)",
    "statistics: switch to a table": "≤ 100 ms", "statistics: switch to a plot": "≤ 100 ms",
    "coordinator: label → table (poll tick)": "≤ 100 ms",
    "coordinator: label → table (1 s poll)": "≤ 1.1 s", "coordinator: open (cold)": "–",
}
"""Row label → target (docs/tui.md "Responsiveness")."""


def _text(widget) -> str:
    return "" if widget is None else str(widget.content)


def _q(screen, selector: str, kind=None):
    """The widget, or None while the screen is not composed yet."""
    from textual.css.query import NoMatches

    try:
        return screen.query_one(selector) if kind is None else screen.query_one(selector, kind)
    except NoMatches:
        return None


async def drawn(app, condition, started: float, limit_s: float = 120.0) -> float:
    """Milliseconds from `started` to the refresh after `condition()` first held."""
    end = time.perf_counter() + limit_s
    while not condition():
        if time.perf_counter() > end:
            raise TimeoutError("the screen never drew the result")
        await asyncio.sleep(0.001)
    stamp: list[float] = []
    app.screen.call_after_refresh(lambda: stamp.append(time.perf_counter()))
    while not stamp:
        if time.perf_counter() > end:
            raise TimeoutError("no refresh came")
        await asyncio.sleep(0.001)
    return 1000 * (stamp[0] - started)


async def _settle(seconds: float = 0.05) -> None:
    await asyncio.sleep(seconds)


# ---- the auditor's workbench: flips, a case, statistics ------------------------------------

async def workbench_round(path: str, audit_id: int, size: tuple[int, int],
                          out: dict[str, list[float]]) -> None:
    """One new app: open flips, open a case, back; then statistics and its switches."""
    from textual.widgets import DataTable, OptionList

    from workbench.tui.screens.flip_case import FlipCaseScreen
    from workbench.tui.screens.flips import FlipsScreen
    from workbench.tui.screens.statistics import StatisticsScreen
    from workbench.tui.widgets.figure_plot import FigurePlot
    from workbench.tui.workbench_app import WorkbenchApp

    app = WorkbenchApp(path)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        app.focus_audit = audit_id
        started = time.perf_counter()
        app.switch_mode("flips")

        def page_drawn() -> bool:
            flips = _q(app.screen, "#flips", DataTable)
            return isinstance(app.screen, FlipsScreen) and flips is not None and \
                flips.row_count > 0 and " match " in _text(_q(app.screen, "#status"))

        out.setdefault("open flips (first page)", []).append(
            await drawn(app, page_drawn, started))
        screen = app.screen
        table = screen.query_one("#flips", DataTable)
        rows = screen.page.rows
        at = next((i for i, r in enumerate(rows) if r.operator_id.startswith("F")), 0)
        table.move_cursor(row=at)
        await _settle()
        started = time.perf_counter()
        screen.action_open_case()

        def case_drawn() -> bool:
            case = app.screen
            if not isinstance(case, FlipCaseScreen) or case.case is None:
                return False
            chains = _q(case, "#chains")
            panes = ["#original", "#options", "#distribution", "#output"] + (
                ["#chain_original", "#chain_edited"] if chains is not None and chains.display
                else [])
            return all(_text(_q(case, p)) for p in panes)

        out.setdefault("open a case", []).append(await drawn(app, case_drawn, started))
        await app.pop_screen()
        await _settle()
        started = time.perf_counter()
        app.switch_mode("statistics")

        def plot_shown() -> bool:
            main, plot = _q(app.screen, "#stats-main"), _q(app.screen, "#figure", FigurePlot)
            return main is not None and main.has_class("plot") and plot.data is not None

        def table_shown() -> bool:
            main = _q(app.screen, "#stats-main")
            sections = _q(app.screen, "#section-table", DataTable)
            return main is not None and not main.has_class("plot") and sections.row_count > 0

        out.setdefault("statistics: first section", []).append(await drawn(
            app, lambda: isinstance(app.screen, StatisticsScreen) and app.screen.report
            is not None and (plot_shown() or table_shown()), started))
        stats = app.screen
        if not plot_shown():
            return  # no figure with plot data in this report: nothing to switch to
        options = stats.query_one("#sections", OptionList)
        first_table = next((i for i in range(options.option_count) if not str(
            options.get_option_at_index(i).id).startswith("figure:")), None)
        if first_table is None:
            return
        await _settle()
        started = time.perf_counter()
        options.highlighted = first_table
        out.setdefault("statistics: switch to a table", []).append(
            await drawn(app, table_shown, started))
        await _settle()
        started = time.perf_counter()
        options.highlighted = 0
        out.setdefault("statistics: switch to a plot", []).append(
            await drawn(app, plot_shown, started))


# ---- the clinicians' screens: next case, coordinator ---------------------------------------

def _forget_opened() -> None:
    """What a new process starts with: no sealed value opened, no κ variance cached."""
    from annotate.agreement.kappa import _variance
    from annotate.trust import sealing

    sealing._OPENED.clear()
    _variance.cache_clear()


async def _reveal_for(screen, field: str) -> None:
    """Scroll every panel `field` needs into view (the evidence gate), as a rater would."""
    for _ in range(40):
        unseen = screen._unseen(field)
        if not unseen:
            return
        screen.panels.reveal(unseen[0])
        await _settle(0.03)
    raise TimeoutError(f"panels {screen._unseen(field)} never counted as seen")


async def next_case_round(labelled, person, size, repeats: int,
                          out: dict[str, list[float]]) -> None:
    """One labelling app: `repeats` times, complete a case and move on."""
    from bench.annotation_scale import SET
    from workbench.tui.app import AnnotationApp
    from workbench.tui.screens.annotate import required_fields

    _forget_opened()
    app = AnnotationApp(labelled.path, person, SET)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = app.screen
        # From the first case alice has no label on (the builder leaves some "shifted" gold
        # shifts without their letter: those cases would open the letter prompt; an earlier
        # round completed the first spare cases).
        spare = set(labelled.spare_alice)
        screen._go(next(i for i, v in enumerate(screen.cases)
                        if v.code in spare and not v.labels_dict))
        await _settle()
        for _ in range(repeats):
            view = screen.current
            fields = [f for f in required_fields(view) if f != "gold_shift_alt"]
            for field in fields[:-1]:  # every label but the last, through the screen
                await _reveal_for(screen, screen.active)
                screen.action_digit("1")
                await _settle(0.02)
            await _reveal_for(screen, screen.active)
            following = screen.cases[screen.index + 1].code
            status = screen.query_one("#status")
            started = time.perf_counter()
            screen.action_digit("1")  # the last label: the case is complete
            screen.action_done()  # enter: the next case
            if view.code not in screen.complete:
                raise RuntimeError(f"case {view.code} was not completed by its last label")
            out.setdefault("next case", []).append(await drawn(
                app, lambda: screen.panels.code == following and
                _text(status).startswith(f"case {following} "), started))
            await _settle()


async def coordinator_round(labelled, carol, bob, size, repeats: int,
                            out: dict[str, list[float]]) -> None:
    """One coordinator app; bob labels from his own connection."""
    from annotate.events import record_label, start_session
    from bench.annotation_scale import SET
    from store.db import open_db
    from workbench.tui.app import CoordinatorApp
    from workbench.tui.widgets.agreement_table import AgreementTable

    _forget_opened()
    app = CoordinatorApp(labelled.path, carol, SET)
    db = open_db(labelled.path)
    session = start_session(db, bob, SET)
    try:
        started = time.perf_counter()
        async with app.run_test(size=size) as pilot:
            screen = app.screen
            table = None

            def pairs() -> int:
                return int(str(table.get_row("gold_shift|full")[2]))

            def ready() -> bool:
                nonlocal table
                if screen.report is None or not screen.is_mounted:
                    return False
                table = screen.query_one(AgreementTable)
                return table.row_count > 0

            out.setdefault("coordinator: open (cold)", []).append(
                await drawn(app, ready, started))
            for mode in ("poll tick", "1 s poll"):
                for _ in range(repeats):
                    while screen._worker is not None and screen._worker.is_running:
                        await _settle(0.005)
                    before = pairs()
                    record_label(db, bob, session, labelled.spare_bob.pop(), "gold_shift",
                                 "no_shift")
                    started = time.perf_counter()
                    if mode == "poll tick":
                        screen.poll()  # what the interval's tick does
                    out.setdefault(f"coordinator: label → table ({mode})", []).append(
                        await drawn(app, lambda: pairs() == before + 1, started))
                    await _settle()
    finally:
        db.conn.close()


# ---- running and printing ------------------------------------------------------------------

def _people(path: str):
    from annotate.trust.people import authenticate
    from store.db import open_db
    from tests.annotate.conftest import PASSPHRASE

    db = open_db(path)
    try:  # signed in as each app's CLI signs them in (holds their keys)
        return [authenticate(db, name, PASSPHRASE) for name in ("alice", "bob", "carol")]
    finally:
        db.conn.close()


def measure(stores: dict, sets: dict, repeats: int) -> list[tuple]:
    """Rows (what, store, terminal, median, max, n, target)."""
    rows = []
    for name, (path, audit_id) in stores.items():
        for size in SIZES:
            times: dict[str, list[float]] = {}
            for _ in range(repeats):
                asyncio.run(workbench_round(path, audit_id, size, times))
            rows += [(what, name, size, values) for what, values in times.items()]
    for name, labelled in sets.items():
        alice, bob, carol = _people(labelled.path)
        for size in SIZES:
            times = {}
            asyncio.run(next_case_round(labelled, alice, size, repeats, times))
            asyncio.run(coordinator_round(labelled, carol, bob, size, repeats, times))
            rows += [(what, name, size, values) for what, values in times.items()]
    return [(what, name, f"{w}×{h}", statistics.median(v), max(v), len(v), TARGETS[what])
            for what, name, (w, h), v in rows]


def table(rows: list[tuple]) -> str:
    """The markdown table of the results, grouped by what was measured."""
    order = list(TARGETS)
    lines = ["| what | store | terminal | median | max | n | target |",
             "|---|---|---|---|---|---|---|"]
    for what, name, size, med, top, n, target in sorted(
            rows, key=lambda r: (order.index(r[0]), r[1], r[2])):
        lines.append(f"| {what} | {name} | {size} | {med:.0f} ms | {top:.0f} ms | {n} | "
                     f"{target} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=50_000, help="edits of the large audit")
    parser.add_argument("--labels", type=int, default=10_000, help="labels per rater, large")
    parser.add_argument("--small-labels", type=int, default=200, help="labels per rater, small")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--dir", help="folder for the stores (default /dev/shm or temp)")
    parser.add_argument("--keep", action="store_true", help="leave the stores (default: "
                        "removed at the end)")
    args = parser.parse_args(argv)
    folder = args.dir or ("/dev/shm" if Path("/dev/shm").is_dir() else tempfile.gettempdir())
    work = Path(tempfile.mkdtemp(dir=folder, prefix="paw-tui-screens-"))
    load_before = os.getloadavg()
    print(f"machine: {os.cpu_count()} cores; load average before "
          f"{' '.join(f'{x:.2f}' for x in load_before)}; stores in {work}", flush=True)
    started = time.perf_counter()
    demo = demo_store(str(work / "demo.db"))
    large = flips_store(str(work / "large.db"), args.edits)
    stores = {f"demo ({count_edits(str(work / 'demo.db'), demo)} edits)":
              (str(work / "demo.db"), demo),
              f"{count_edits(str(work / 'large.db'), large)} edits": (str(work / "large.db"),
                                                                       large)}
    sets = {}
    for n, file in ((args.small_labels, "small-set.db"), (args.labels, "large-set.db")):
        labelled = annotation_store(str(work / file), n)
        sets[f"{n} labels/rater ({labelled.cases} cases)"] = labelled
    print(f"stores built in {time.perf_counter() - started:.0f} s", flush=True)
    try:
        rows = measure(stores, sets, args.repeats)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    load_after = os.getloadavg()
    text = table(rows)
    print(text)
    print(f"load average after {' '.join(f'{x:.2f}' for x in load_after)}")
    return text


if __name__ == "__main__":
    main()
