"""`paw flips` and `paw flips show` through the real entry point, on an audit run by the real
engine (fake model: every M4 negation flips A -> B, every shuffle keeps the letter A)."""

from __future__ import annotations

import json
import re

from workbench.cli import main

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def paw(capsys, *args: str) -> tuple[int, str, str]:
    """Run `paw ARGS` in-process (stdout is not a terminal); (exit code, stdout, stderr)."""
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _rows(out: str) -> list[list[str]]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("--"))
    return [line.split() for line in lines[start + 1:] if line.strip() and
            not line.startswith("one case")]


def test_list_shows_each_flip_once(capsys, fake_audit):
    path, outcome = fake_audit
    code, out, err = paw(capsys, "flips", "--db", path)
    assert code == 0, err
    assert out.startswith(f"4 flipped edit(s) in audit {outcome.audit}; rows 1-4")
    rows = _rows(out)
    # Two items x (M4 negation A->B, shuffle A->A: the letter A now shows another option).
    assert sorted((r[3], r[5]) for r in rows) == [
        ("M4_negation_a", "A->B"), ("M4_negation_a", "A->B"),
        ("option_shuffle", "A->A"), ("option_shuffle", "A->A")]
    assert not ANSI.search(out)


def test_filters_and_json(capsys, fake_audit):
    path, _ = fake_audit
    code, out, _ = paw(capsys, "flips", "--family", "M4", "--json", "--db", path)
    data = json.loads(out)
    assert code == 0 and data["total"] == 2
    assert {r["operator_id"] for r in data["rows"]} == {"M4_negation_a"}
    assert all(r["judge"] == ["no"] and r["flipped"] is True for r in data["rows"])
    _, out, _ = paw(capsys, "flips", "--kept", "--block", "M", "--db", path)
    assert out.startswith("4 edit(s) whose answer was kept")  # M2 and M3 on two items
    _, out, _ = paw(capsys, "flips", "--all", "--limit", "3", "--db", path)
    assert "10 answered edit(s)" in out and "next page: --offset 3" in out
    _, out, _ = paw(capsys, "flips", "--search", "nothing-like-this", "--db", path)
    assert out.strip().endswith("none match this filter")


def test_bad_filters_are_one_line_errors(capsys, fake_audit):
    path, _ = fake_audit
    code, out, err = paw(capsys, "flips", "--model", "gpt-9", "--db", path)
    assert code == 1 and out == ""
    assert err.startswith("paw: error: arm: no arm or model 'gpt-9'") and err.count("\n") == 1
    code, _, err = paw(capsys, "flips", "show", "424242", "--db", path)
    assert code == 1 and "no edit with id '424242'" in err


def test_show_piped_is_plain_text_with_markers(capsys, fake_audit):
    path, _ = fake_audit
    _, out, _ = paw(capsys, "flips", "--family", "M4", "--json", "--db", path)
    case_id = json.loads(out)["rows"][0]["id"]
    code, out, err = paw(capsys, "flips", "show", str(case_id), "--db", path)
    assert code == 0, err
    assert not ANSI.search(out)  # a pipe gets no escape codes
    assert f"edit {case_id}: M4_negation_a (M4, destructive, surface)" in out
    assert "FLIPPED A -> B" in out
    # The negation is marked on both sides: what it replaced and what it inserted.
    original = out.split("Original question")[1].split("Edited question")[0]
    edited = out.split("Edited question")[1].split("recorded edit")[0]
    assert re.search(r"\[-[^\]]+-\]", original) and "{+does not" in edited
    assert "answer before: A (" in out and "after: B (" in out
    # Distributions as bars: '#' runs, both columns, and the JSD in the heading.
    dist = out.split("Option distributions")[1]
    assert dist.startswith("  JSD ") and re.search(r"\n  A +#+ +0\.\d\d", dist)
    assert "Chain after the edit" in out and "Baseline chain" in out


def test_show_a_chain_edit_and_colour_on_request(capsys, fake_audit):
    path, _ = fake_audit
    _, out, _ = paw(capsys, "flips", "--all", "--block", "F", "--json", "--db", path)
    case_id = json.loads(out)["rows"][0]["id"]
    _, out, _ = paw(capsys, "flips", "show", str(case_id), "--db", path)
    assert "chain edit (F-block)" in out
    assert out.index("Original chain") < out.index("Edited chain") < out.index("Continuation")
    # F1 truncation removes the tail of the chain: marked in the original only.
    original = out.split("Original chain")[1].split("Edited chain")[0]
    assert "[-" in original
    _, coloured, _ = paw(capsys, "flips", "show", str(case_id), "--color", "--db", path)
    assert ANSI.search(coloured) and "[-" not in coloured
    _, js, _ = paw(capsys, "flips", "show", str(case_id), "--json", "--db", path)
    case = json.loads(js)
    assert case["role"] == "f_block" and case["edited_chain"] and case["output"]
