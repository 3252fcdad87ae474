"""Architecture contract: the import-linter contracts of pyproject.toml hold (layers, textual
only in workbench.tui, no cycles inside a package, the papers of analysis/ and of workbench/
independent, the layers inside annotate/), each contract can fail, no module imports
another's private name, and no module is over 450 lines.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("workbench", "store", "annotate", "analysis")
MAX_LINES = 450


def _lint_imports(root: Path) -> subprocess.CompletedProcess:
    """Run import-linter on the tree at `root` with that tree's pyproject.toml."""
    exe = Path(sys.executable).with_name("lint-imports")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "importlinter.cli"]
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([*command, "--no-cache"], cwd=root, env=env, capture_output=True,
                          text=True, timeout=300)


def test_the_import_contracts_hold():
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    # every contract ran (a contract dropped from the config would pass silently)
    for name in ("workbench > annotate > analysis > store", "textual only in workbench.tui",
                 "no import cycles inside a package", "analysis: views across papers",
                 "annotate: nine layers", "workbench: one package per paper"):
        assert f"{name}" in result.stdout and "KEPT" in result.stdout


# Each probe breaks exactly one contract in a scratch copy of the tree.
PROBES = {
    "workbench > annotate > analysis > store": {"store/zz_probe.py": "import workbench.kinds\n"},
    "textual only in workbench.tui": {"analysis/common/zz_probe.py": "import textual.app\n"},
    "no import cycles inside a package": {
        "annotate/zz_probe_a.py": "from annotate import zz_probe_b\n",
        "annotate/zz_probe_b.py": "from annotate import zz_probe_a\n"},
    "analysis: views across papers": {
        "analysis/dbpa/zz_probe.py": "from analysis.audit import definitions\n"},
    # Rater files (layer 6) reaching up to adjudication (layer 7), which does not import them
    # back: a wrong direction without a cycle, so only the annotate layers break.
    "annotate: nine layers": {
        "annotate/raterfile/zz_probe.py": "from annotate import adjudicate\n"},
    "workbench: one package per paper": {
        "workbench/dbpa/zz_probe.py": "from workbench.audit import spec\n"},
}


@pytest.fixture(scope="module")
def scratch_tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tree")
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    for package in PACKAGES:
        shutil.copytree(ROOT / package, root / package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return root


@pytest.mark.parametrize("contract", sorted(PROBES))
def test_each_contract_can_fail(scratch_tree: Path, contract: str):
    written = []
    try:
        for rel, text in PROBES[contract].items():
            (scratch_tree / rel).write_text(f'"""probe"""\n{text}')
            written.append(scratch_tree / rel)
        result = _lint_imports(scratch_tree)
    finally:
        for path in written:
            path.unlink()
    assert result.returncode != 0
    broken = [line for line in result.stdout.splitlines() if " BROKEN" in line]
    assert len(broken) == 1 and broken[0].startswith(contract), result.stdout[-3000:]
    assert "zz_probe" in result.stdout


def _python_files():
    for package in PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))


def _private_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                and node.module.split(".")[0] in PACKAGES:
            found += [f"{node.module}.{a.name}" for a in node.names
                      if a.name.startswith("_") and not a.name.startswith("__")]
    return found


def test_no_module_imports_a_private_name_of_another():
    offenders = {str(p.relative_to(ROOT)): names for p in _python_files()
                 if (names := _private_imports(p))}
    assert offenders == {}


def test_the_private_name_check_can_fail(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("from annotate.events import _append, GENESIS_HASH\nfrom os import _exit\n")
    assert _private_imports(probe) == ["annotate.events._append"]


def test_no_module_is_over_the_line_limit():
    sizes = {str(p.relative_to(ROOT)): n for p in _python_files()
             if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert sizes == {}, f"split by responsibility (limit {MAX_LINES} lines): {sizes}"
