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
    """(case code, field, value) of every label event of `person`, in order."""
    return [tuple(r) for r in query(
        db_path,
        "SELECT c.code, e.field, e.value FROM label_events e JOIN people p ON p.id = e.person_id "
        "JOIN annotation_cases c ON c.id = e.case_id WHERE p.name = ? ORDER BY e.id",
        (person,))]


def screen_text(app: App) -> str:
    """The characters on the terminal now, one line per row (the top screen as drawn)."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())
