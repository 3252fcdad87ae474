"""`paw models` / `paw run` through the CLI: listing, adding, bad input, kill and resume."""

from __future__ import annotations

import os
import signal
import sqlite3
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from store import open_db
from store.datasets import add_items, ensure_dataset
from store.records import Item
from workbench.cli import main
from workbench.datasets.demo import import_demo
from workbench.models.registry import embedded_model_path

PAW = [sys.executable, "-m", "workbench"]
FAST = ["--threads", "1", "--max-tokens", "16"]


def _paw(capsys, *args: str) -> tuple[int, str, str]:
    """Run `paw` in-process; returns (exit code, stdout, stderr)."""
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _counts(db_path: str) -> tuple[int, int]:
    conn = sqlite3.connect(db_path)
    try:
        return (conn.execute("SELECT COUNT(*) FROM models").fetchone()[0],
                conn.execute("SELECT COUNT(*) FROM generations").fetchone()[0])
    finally:
        conn.close()


def _one_line_error(code: int, err: str, *needles: str) -> None:
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("paw: error: "), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0]


def test_models_lists_default_and_add_registers(capsys, db_path) -> None:
    code, out, _ = _paw(capsys, "models", "--db", db_path)
    assert code == 0 and out.startswith("default\tllama\tQ4_1\tctx 8192")
    code, out, _ = _paw(capsys, "models", "add", str(embedded_model_path()), "--name", "smol",
                        "--db", db_path)
    assert code == 0 and out.startswith("registered smol: llama Q4_1, ctx 8192")
    assert _counts(db_path) == (2, 0)


def test_models_add_and_list_say_when_a_file_has_no_chat_template_or_is_a_base_model(
        capsys, db_path, tmp_path) -> None:
    """A template-less file gets the plain format (said, with its BOS); metadata marking a
    base model (general.tags, or Gemma's '-pt' name) is said; the embedded model gets
    neither note."""
    from tests.models.tiny_gguf import write_tiny_model

    plain = write_tiny_model(tmp_path / "plain.gguf", "llama",
                             tokenizer_from=embedded_model_path(), chat_template=False)
    base = write_tiny_model(tmp_path / "base.gguf", "llama",
                            tokenizer_from=embedded_model_path(),
                            strings={"general.name": "Gemma 3 270m pt"})
    code, out, _ = _paw(capsys, "models", "add", str(plain), "--db", db_path)
    assert code == 0
    notes = [line for line in out.splitlines() if line.startswith("note: ")]
    assert notes[0].startswith("note: no chat template: PAW uses its plain format")
    assert "BOS/EOS" in notes[0]
    assert "probably a base model" in notes[1] and len(notes) == 2
    code, out, _ = _paw(capsys, "models", "add", str(base), "--db", db_path)
    assert code == 0
    assert out.splitlines()[1:] == [
        "note: metadata marks a base model (general.name: Gemma 3 270m pt): a base model "
        "continues text rather than answering; expect many unparsed answers"]
    code, out, _ = _paw(capsys, "models", "--db", db_path)
    rows = {line.split("\t")[0]: line for line in out.splitlines() if "\t" in line}
    assert "\tchat-template\t" in rows["default"] and "\tplain-format\t" in rows["plain"]
    assert "  plain: no chat template: PAW uses its plain format" in out
    assert "  base: metadata marks a base model (general.name" in out
    assert not any(line.startswith("  default:") for line in out.splitlines())


def test_bad_model_files_fail_with_one_line_and_lose_nothing(capsys, db_path, tmp_path) -> None:
    _paw(capsys, "models", "--db", db_path)  # registers 'default'
    before = _counts(db_path)
    not_gguf = tmp_path / "notes.gguf"
    not_gguf.write_text("just text")
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(embedded_model_path().read_bytes()[:5_000_000])
    odd = tmp_path / "odd.gguf"  # a whole header, of an architecture llama.cpp lacks
    odd.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 20)
                    + b"general.architecture" + struct.pack("<IQ", 8, 4) + b"odd!")
    cases = [(str(tmp_path / "missing.gguf"), "model file not found"),
             (str(not_gguf), "not a GGUF model file"),
             (str(cut), "truncated GGUF"),
             (str(odd), "could not load this model: unknown model architecture: 'odd!'")]
    for path, message in cases:
        code, _, err = _paw(capsys, "models", "add", path, "--db", db_path)
        _one_line_error(code, err, path, message)
    assert _counts(db_path) == before


def _dataset(db_path: str, name: str, items: list[Item]) -> None:
    db = open_db(db_path)
    add_items(db, ensure_dataset(db, name, "jsonl"), items)
    db.conn.close()


@pytest.mark.model
def test_run_bad_inputs_fail_before_generating(capsys, db_path) -> None:
    good = Item(source_id="ok", kind="mcq", question="Which artery supplies the inferior wall?",
                options={"A": "Right coronary", "B": "Left anterior descending"}, gold="A")
    bare = Item(source_id="bare", kind="mcq", question="No options here?", options={}, gold="A")
    _dataset(db_path, "good", [good])
    _dataset(db_path, "bare", [good, bare])
    code, _, _ = _paw(capsys, "run", "--dataset", "good", *FAST, "--db", db_path)
    assert code == 0 and _counts(db_path)[1] == 1
    code, _, err = _paw(capsys, "run", "--dataset", "bare", *FAST, "--db", db_path)
    _one_line_error(code, err, "item 'bare'", "options")
    code, _, err = _paw(capsys, "run", "--dataset", "good", "--mode", "direct", "--ctx", "64",
                        *FAST, "--db", db_path)
    _one_line_error(code, err, "item 'ok'", "longer than the context of 64 tokens")
    code, _, err = _paw(capsys, "run", "--dataset", "good", "--model", "nope", "--db", db_path)
    _one_line_error(code, err, "no model named 'nope'")
    assert _counts(db_path)[1] == 1  # the stored generation survived every failure


def _generations(db_path: str) -> dict[str, tuple]:
    conn = sqlite3.connect(db_path)
    try:
        return {r[0]: r[1:] for r in conn.execute(
            "SELECT key, output, output_token_ids_json, answer, parse_status, option_probs_json "
            "FROM generations")}
    finally:
        conn.close()


@pytest.mark.model
def test_sigkill_then_rerun_gives_the_uninterrupted_result(tmp_path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    paths = {}
    for name in ("killed", "clean"):
        paths[name] = str(tmp_path / f"{name}.db")
        db = open_db(paths[name])
        import_demo(db)
        db.conn.close()
    # Two sequences per batch: generations finish in waves, so the kill lands between them.
    command = ["run", "--dataset", "demo", "--limit", "6", *FAST, "--batch", "2"]

    proc = subprocess.Popen([*PAW, *command, "--db", paths["killed"]], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    while _counts(paths["killed"])[1] < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    partial = _counts(paths["killed"])[1]
    assert 2 <= partial < 6, "the kill must land part-way through the run"

    resumed = subprocess.run([*PAW, *command, "--db", paths["killed"]], env=env,
                             capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"({partial} already stored, {6 - partial} new" in resumed.stdout
    clean = subprocess.run([*PAW, *command, "--db", paths["clean"]], env=env,
                           capture_output=True, text=True, timeout=300)
    assert clean.returncode == 0, clean.stderr

    killed_rows, clean_rows = _generations(paths["killed"]), _generations(paths["clean"])
    assert len(killed_rows) == 6  # no missing generation; UNIQUE(key) rules out duplicates
    assert killed_rows == clean_rows  # same keys, same outputs and distributions
    conn = sqlite3.connect(paths["killed"])
    statuses = dict(conn.execute("SELECT status, COUNT(*) FROM jobs GROUP BY status").fetchall())
    sessions = [r[0] for r in conn.execute("SELECT status FROM sessions ORDER BY id")]
    conn.close()
    assert statuses == {"done": 6}
    assert sessions == ["running", "finished"]  # the killed session never finished
    # The batching self-check ran on load and `paw models` shows its verdict.
    listed = subprocess.run([*PAW, "models", "--db", paths["killed"]], env=env,
                            capture_output=True, text=True, timeout=120)
    assert "\tbatch 2: identical\t" in listed.stdout or "\tbatch 2: differs\t" in listed.stdout


@pytest.mark.parametrize("command", [["models", "--help"], ["models", "add", "--help"],
                                     ["models", "list", "--help"], ["run", "--help"]])
def test_every_command_has_help(capsys, command) -> None:
    code, out, _ = _paw(capsys, *command)
    assert code == 0 and "Usage: paw" in out and len(out.splitlines()) > 3


def test_several_samples_need_a_temperature(capsys, db_path) -> None:
    _dataset(db_path, "good", [Item(source_id="ok", kind="mcq", question="Which?",
                                    options={"A": "x", "B": "y"}, gold="A")])
    code, _, err = _paw(capsys, "run", "--dataset", "good", "--samples", "3", "--db", db_path)
    _one_line_error(code, err, "--temperature > 0")
    code, _, err = _paw(capsys, "run", "--dataset", "good", "--seeds", "0,x", "--db", db_path)
    _one_line_error(code, err, "--seeds: expected comma-separated integers")
    code, _, err = _paw(capsys, "run", "--dataset", "missing", "--db", db_path)
    _one_line_error(code, err, "no dataset named 'missing'")
    assert _counts(db_path)[1] == 0


def test_run_on_a_pool_that_does_not_answer_fails_with_one_line(capsys, db_path) -> None:
    from workbench.models.pool import free_port

    _dataset(db_path, "good", [Item(source_id="ok", kind="mcq", question="Which?",
                                    options={"A": "x", "B": "y"}, gold="A")])
    dead = f"http://127.0.0.1:{free_port()}"
    code, _, err = _paw(capsys, "run", "--dataset", "good", "--servers", dead, "--db", db_path)
    _one_line_error(code, err, "no server of the pool answers", dead)
    assert _counts(db_path)[1] == 0


def test_models_list_says_when_batching_was_never_checked(capsys, db_path) -> None:
    code, out, _ = _paw(capsys, "models", "--db", db_path)
    assert code == 0 and "\tbatch: unchecked\t" in out.splitlines()[0]


def test_a_models_tier_is_stored_and_read_by_the_sampling_frame(capsys, db_path) -> None:
    """`--tier` (on add, or `paw models tier`) is what annotate/sets/audit.py balances harm
    cases over."""
    from annotate.sets.audit import _model_tiers

    code, out, _ = _paw(capsys, "models", "add", str(embedded_model_path()), "--name", "smol",
                        "--tier", "open-weight", "--db", db_path)
    assert code == 0 and "tier open-weight" in out
    db = open_db(db_path)
    smol = db.execute("SELECT id FROM models WHERE name = 'smol'").fetchone()[0]
    assert _model_tiers(db, {smol}) == {smol: "open-weight"}
    code, out, _ = _paw(capsys, "models", "tier", "smol", "reasoning", "--db", db_path)
    assert code == 0 and out.strip() == "smol: tier reasoning"
    assert _model_tiers(db, {smol}) == {smol: "reasoning"}
    code, _, err = _paw(capsys, "models", "tier", "smol", "  ", "--db", db_path)
    assert code == 1 and "--tier: expected a name" in err
    code, _, err = _paw(capsys, "models", "tier", "nosuch", "x", "--db", db_path)
    assert code == 1 and "nosuch" in err
