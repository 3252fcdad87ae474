"""The launch form chooses items (issue 38, criterion 4) and says when its battery cannot give
FCS (criterion 3): the real form under Pilot on the demo set, launched on the fake backend."""

from __future__ import annotations

import json

import pytest
from textual.widgets import Input, Select, Static

from store.db import open_db
from tests.tui.helpers import wait_until
from tests.tui.test_workbench import _fill_form, fake_factory, workbench_db  # noqa: F401
from workbench.tui.workbench_app import WorkbenchApp

pytestmark = pytest.mark.asyncio


def _note(form, name: str) -> str:
    return str(form.query_one(f"#{name}", Static).render())


async def test_the_form_picks_yes_no_items_or_ids_and_notes_fcs(workbench_db):  # noqa: F811
    app = WorkbenchApp(workbench_db, backend_factory=fake_factory())
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await pilot.press("n")
        await _fill_form(pilot, operators="M4,F1,shuffle", limit="3")
        form = app.screen
        # The small default battery has no preserving chain edit: no FCS, said so.
        assert "FCS (and MFC, the corridor) cannot be computed" in _note(form, "operators-note")
        assert "no preserving F-block edit; add F4, F6, F7 (preserving)" in \
            _note(form, "operators-note")
        form.query_one("#operators", Input).value = "F1,F4,shuffle"
        await pilot.pause()
        assert _note(form, "operators-note") == ""
        # Only the yes/no questions (the demo's triage items 63-78), the first 3 of them.
        form.query_one("#item-kind", Select).value = "yes_no"
        await pilot.pause()
        assert form.build_spec().item_ids == ("triage-001", "triage-002", "triage-003")
        assert form.build_spec().limit is None
        assert _note(form, "items-note").startswith("3 yes/no questions of demo: triage-001")
        form.query_one("#item-kind", Select).value = "mcq"
        await pilot.pause()
        assert form.build_spec().item_ids == ("demo-001", "demo-002", "demo-003")
        # Ids typed win over the kind and the limit, in their order.
        form.query_one("#item-ids", Input).value = "triage-016, demo-003"
        await pilot.pause()
        assert form.build_spec().item_ids == ("triage-016", "demo-003")
        assert "2 item(s) by id, in that order (Limit is not used)" in _note(form, "items-note")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: app.live is not None and not app.live.active,
                         seconds=60)
        assert app.live.snapshot().state == "finished", app.live.snapshot().message
    db = open_db(workbench_db)
    config = json.loads(db.execute("SELECT config_json FROM audits WHERE name = ?",
                                   [app.live.name]).fetchone()[0])
    assert config["item_ids"] == ["triage-016", "demo-003"]
    planned = [r[0] for r in db.execute(
        "SELECT DISTINCT i.source_id FROM jobs j JOIN items i ON i.id = j.item_id "
        "JOIN audits a ON a.id = j.audit_id WHERE a.name = ? AND j.role = 'baseline' "
        "ORDER BY j.id", [app.live.name])]
    assert planned == ["triage-016", "demo-003"]


async def test_an_unknown_typed_id_is_refused_on_the_form(workbench_db):  # noqa: F811
    app = WorkbenchApp(workbench_db, backend_factory=fake_factory())
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await pilot.press("n")
        await _fill_form(pilot)
        app.screen.query_one("#item-ids", Input).value = "demo-001,nope-7"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.live is None
        text = str(app.screen.query_one("#launch-error", Static).render())
        assert "items: expected ids of dataset 'demo'" in text and "nope-7" in text
