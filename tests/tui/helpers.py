"""Helpers for the TUI tests: read the store from outside the app, dump what a screen shows."""

from __future__ import annotations

import sqlite3

from textual.app import App


def query(db_path: str, sql: str, params: tuple = ()) -> list[tuple]:
    """Run `sql` on a fresh connection (what another process would see)."""
    conn = sqlite3.connect(db_path)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def events(db_path: str, person: str) -> list[tuple[str, str, str | None]]:
    """(case code, field, value) of every label event of `person`, in order, read on a
    fresh connection; sealed values are opened with the keys this test process holds (it
    registered the people)."""
    from annotate.trust.sealing import require_open

    conn = sqlite3.connect(db_path)
    conn.row_factory = sqlite3.Row
    try:
        rows = [dict(r) for r in conn.execute(
            "SELECT e.*, c.code FROM label_events e JOIN people p ON p.id = e.person_id "
            "JOIN annotation_cases c ON c.id = e.case_id WHERE p.name = ? ORDER BY e.id",
            (person,))]
    finally:
        conn.close()
    from annotate.labels import COMPANIONS

    # An empty companion written with its field (gold shift's new answer when not
    # 'shifted', and its undo: `annotate.labels.COMPANIONS`) is shape, not a label: left
    # out here (tests/annotate/test_shape.py reads it).
    out: list[tuple[str, str, str | None]] = []
    previous: tuple[str, str] | None = None
    for r in rows:
        field, value = require_open(r)
        paired = previous is not None and previous[0] == r["code"] and \
            COMPANIONS.get(previous[1], ("",))[0] == field
        if not (paired and value is None):
            out.append((r["code"], field, value))
        previous = (r["code"], field)
    return out


def screen_text(app: App) -> str:
    """The characters on the terminal now, one line per row (the top screen as drawn)."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def wait_until(pilot, condition, *, seconds: float = 20.0) -> None:
    """Let the app run until `condition()` holds (a generous bound, not a timing claim)."""
    steps = int(seconds / 0.05)
    for _ in range(steps):
        if condition():
            return
        await pilot.pause(0.05)
    assert condition(), "condition never held"


def label_everything(db_path: str, person, values: dict[str, dict[str, str]]) -> None:
    """Record `values[code][field] = value` for `person` through the core (another
    connection, as a second rater process would)."""
    from annotate.events import record_label, start_session
    from store import open_db

    db = open_db(db_path)
    try:
        session = start_session(db, person, "pilot")
        for code, fields in values.items():
            for field, value in fields.items():
                record_label(db, person, session, code, field, value)
    finally:
        db.conn.close()


def case_codes(db_path: str) -> list[str]:
    """Every case code of the fixture set, sorted (a rater-independent order)."""
    return [r[0] for r in query(db_path, "SELECT code FROM annotation_cases ORDER BY code")]


def all_text(app: App) -> str:
    """Every piece of text the app holds for display, visible or not: what is drawn now,
    the title, and for every widget of every screen on the stack its rendered content,
    border titles, input values and table cells."""
    from textual.widgets import DataTable, Input

    parts = [screen_text(app), str(app.title), str(app.sub_title)]
    for screen in app.screen_stack:
        parts += [str(screen.title or ""), str(screen.sub_title or "")]
        for widget in screen.query("*"):
            parts += [str(widget.border_title or ""), str(widget.border_subtitle or ""),
                      str(widget.tooltip or "")]
            if isinstance(widget, Input):
                parts += [widget.value, str(widget.placeholder)]
            if isinstance(widget, DataTable):
                parts += [str(c) for row in widget.rows for c in widget.get_row(row)]
                parts += [str(c.label) for c in widget.columns.values()]
            try:
                rendered = widget.render()
            except Exception:  # noqa: BLE001 - some widgets render only when laid out
                continue
            plain = getattr(rendered, "plain", None)
            parts.append(plain if isinstance(plain, str) else str(rendered)
                         if isinstance(rendered, str) else "")
    return "\n".join(parts)


def typed_fast(app, text: str) -> None:
    """Queue every key of `text` at once, as tmux send-keys, a paste or a touch typist
    deliver them: the app reads them one after another with no idle time in between
    (`pilot.press` waits for the app to go idle after each key, which hid the defect)."""
    from textual import events

    names = {"\t": ("tab", "\t"), "\r": ("enter", "\r")}
    for char in text:
        key, character = names.get(char, (char, char))
        app.post_message(events.Key(key, character))
