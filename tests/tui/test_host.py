"""The apps provide every member of the host Protocols the screens are typed against."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import pytest
from textual.app import App

from workbench.tui.app import AnnotationApp, CoordinatorApp
from workbench.tui.host import SessionHost, WorkbenchHost
from workbench.tui.workbench_app import WorkbenchApp


def members(protocol: type) -> set[str]:
    """Attribute, property and method names a Protocol declares (its Protocol bases too)."""
    names: set[str] = set()
    for klass in protocol.__mro__:
        if klass in (object, Protocol) or not getattr(klass, "_is_protocol", False):
            continue
        names |= set(vars(klass).get("__annotations__", {}))
        names |= {name for name, value in vars(klass).items()
                  if not name.startswith("_") and (callable(value) or isinstance(value, property))}
    return names


def test_members_are_read() -> None:
    assert {"db_path", "person", "db", "show_error"} <= members(SessionHost)
    assert {"live", "focus_audit", "db_exists", "db_path"} <= members(WorkbenchHost)


@pytest.mark.parametrize(("make", "protocol"), [
    (lambda path: AnnotationApp(path, None, "s"), SessionHost),  # type: ignore[arg-type]
    (lambda path: CoordinatorApp(path, None, "s"), SessionHost),  # type: ignore[arg-type]
    (lambda path: WorkbenchApp(path), WorkbenchHost),
])
def test_app_provides_its_host(tmp_path: Path, make, protocol: type) -> None:
    app: App[None] = make(str(tmp_path / "none.db"))  # nothing opens the file
    missing = sorted(name for name in members(protocol)
                     if name not in vars(app) and not hasattr(type(app), name))
    assert missing == []
