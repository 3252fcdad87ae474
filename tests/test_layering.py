"""Architecture contract: only workbench/tui may import textual; store/annotate/analysis
never import the application package's UI."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["workbench", "store", "annotate", "analysis"]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def _python_files():
    for package in PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))


def test_only_tui_imports_textual():
    offenders = [
        str(path.relative_to(ROOT))
        for path in _python_files()
        if "textual" in _imports(path)
        and not path.relative_to(ROOT).as_posix().startswith("workbench/tui/")
    ]
    assert offenders == [], f"textual imported outside workbench/tui: {offenders}"


def test_lower_layers_do_not_import_the_application():
    # store is the bottom layer; analysis sits on it; annotate may use analysis
    # (metric definitions, kappa helpers); workbench is on top and composes them.
    allowed = {"store": {"store"}, "analysis": {"store", "analysis"},
               "annotate": {"store", "analysis", "annotate"}}
    offenders = []
    for package, ok in allowed.items():
        for path in sorted((ROOT / package).rglob("*.py")):
            used = _imports(path) & set(PACKAGES)
            if used - ok:
                offenders.append((str(path.relative_to(ROOT)), sorted(used - ok)))
    assert offenders == []


def test_the_contract_can_fail(tmp_path):
    # The checker must see a real import; guard against a contract that cannot fail.
    probe = tmp_path / "probe.py"
    probe.write_text("from textual.app import App\nimport store.db\n")
    assert {"textual", "store"} <= _imports(probe)
