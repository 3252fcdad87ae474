"""The test run checks types and strings: mypy (pyproject `[tool.mypy]`: default strictness
plus strict_equality, warn_redundant_casts, warn_unused_ignores) and ruff (`[tool.ruff.lint]`:
E, W, F, ISC, B, BLE) report nothing over the four packages, and each catches what it is
there for on a scratch file (a check that cannot fail would prove nothing).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("workbench", "store", "annotate", "analysis")


def _tool(name: str, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name(name)
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", name]
    return subprocess.run([*command, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=900)


def test_mypy_finds_nothing_in_the_four_packages(tmp_path: Path):
    result = _tool("mypy", "--cache-dir", str(tmp_path / "cache"))
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    # the configured `files` are the four packages: a config that checked nothing would pass
    checked = int(result.stdout.split("no issues found in ")[1].split()[0])
    assert checked > 250, result.stdout


def test_ruff_finds_nothing_in_the_four_packages():
    result = _tool("ruff", "check", *PACKAGES)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]


MYPY_PROBE = '''"""probe"""
from fractions import Fraction


def kappa(n: int) -> Fraction:
    return n / 2
'''

RUFF_PROBE = '''"""probe"""

WORDS = ["a" "b", "c"]


def risky() -> None:
    try:
        print(WORDS)
    except Exception:
        pass
'''


def test_each_checker_can_fail(tmp_path: Path):
    """A float returned where Fraction is declared (the review's annotate/kappa.py finding);
    an implicit concatenation in a list and a blind except (the families the issue names)."""
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    (tmp_path / "probe.py").write_text(MYPY_PROBE)
    typed = _tool("mypy", "--cache-dir", str(tmp_path / "cache"), "probe.py", cwd=tmp_path)
    assert typed.returncode == 1 and "probe.py:6: error" in typed.stdout, typed.stdout
    (tmp_path / "probe.py").write_text(RUFF_PROBE)
    linted = _tool("ruff", "check", "probe.py", cwd=tmp_path)
    assert linted.returncode == 1
    assert "ISC00" in linted.stdout and "BLE001" in linted.stdout, linted.stdout
