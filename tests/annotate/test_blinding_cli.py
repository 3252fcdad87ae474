"""Blinding in every read command (issue 35, criterion 2): once people are registered, a
command that shows runs' cases with their model, arm, operator or verdicts, other raters'
labels or agreement refuses a rater (and no sign-in) in one line, and opens for the
coordinator; `paw audits` shows no case. One test per command, run as the rater alice on
the store where she labels (the table of docs/annotation.md)."""

from __future__ import annotations

import pytest

from store.errors import UserError

from tests.annotate.test_cli import AS_CAROL, env, run, setup_set  # noqa: F401 - fixture

AS_ALICE = ("--coordinator", "alice", "--passphrase-env", "PW")
"""A rater naming herself where the coordinator is asked for."""

SECRETS = ("smollm2", "qwen", "M2_sex", "M3_distractor", "M4_negation", "M5_severity")
"""Model names and operators of the fixture audit: what blinding hides from a rater."""


def _refused(result, command: str) -> str:
    """The one-line refusal (the CLI's entry point prints a UserError as one line, exit 1);
    nothing of the run on stdout."""
    assert isinstance(result.exception, UserError), (result.exception, result.output)
    text = str(result.exception)
    assert "\n" not in text and "coordinator" in text, text
    for word in SECRETS:
        assert word not in text + result.output, (word, text)
    assert command in text or "coordinator's" in text or "coordinator role" in text, text
    return text


def _labelled(env) -> str:  # noqa: F811 - the fixture's name
    codes = setup_set(env)
    result = run(env, "label", codes[0], "--rater", "alice", "--field", "gold_shift",
                 "--value", "1", "--passphrase-env", "PW")
    assert result.exit_code == 0, result.output
    return codes[0]


@pytest.mark.parametrize("args", [("flips", "--all"), ("flips",), ("flips", "--json")],
                         ids=["all", "flipped", "json"])
def test_flips_list(env, args):  # noqa: F811
    _labelled(env)
    for extra in ((), AS_ALICE):
        result = run(env, *args, *extra)
        _refused(result, "paw flips")
    # alice signs in (right passphrase) and is refused for her role.
    assert "coordinator role" in _refused(run(env, *args, *AS_ALICE), "paw flips")
    opened = run(env, *args, *AS_CAROL)
    assert opened.exit_code == 0, opened.output
    assert "M4_negation" in opened.output or "M4" in opened.output


def test_flips_show(env):  # noqa: F811
    _labelled(env)
    edit = run(env, "flips", "--json", *AS_CAROL)
    import json

    first = json.loads(edit.stdout)["rows"][0]
    ident = str(first["id"])
    for extra in ((), AS_ALICE):
        _refused(run(env, "flips", "show", ident, *extra), "paw flips show")
    shown = run(env, "flips", "show", ident, "--no-color", *AS_CAROL)
    assert shown.exit_code == 0, shown.output
    assert "smollm2" in shown.output or "qwen" in shown.output


def test_report(env, tmp_path):  # noqa: F811
    _labelled(env)
    out = tmp_path / "r.md"
    for extra in ((), AS_ALICE):
        _refused(run(env, "report", "--out", str(out), "--n-boot", "0", *extra), "paw report")
        assert not out.exists()
    made = run(env, "report", "--out", str(out), "--n-boot", "0", *AS_CAROL)
    assert made.exit_code == 0, made.output
    assert out.exists()


def test_export(env, tmp_path):  # noqa: F811
    _labelled(env)
    for extra in ((), AS_ALICE):
        folder = tmp_path / f"out{len(extra)}"
        _refused(run(env, "export", "--format", "csv", "--out", str(folder), *extra),
                 "paw export")
        assert not folder.exists() or not list(folder.glob("*.csv"))
    done = run(env, "export", "--format", "csv", "--out", str(tmp_path / "ok"), *AS_CAROL)
    assert done.exit_code == 0, done.output
    assert list((tmp_path / "ok").glob("*-edits.csv"))


@pytest.mark.parametrize("args", [("agreement",), ("annotate", "export", "--format", "csv")],
                         ids=["agreement", "annotate-export"])
def test_coordinator_only_commands(env, args):  # noqa: F811
    _labelled(env)
    for extra in ((), AS_ALICE):
        _refused(run(env, *args, *extra), args[0])
    assert run(env, *args, *AS_CAROL).exit_code == 0


def test_verify_details(env):  # noqa: F811
    _labelled(env)
    plain = run(env, "verify")
    assert plain.exit_code == 0, plain.output
    for word in SECRETS:
        assert word not in plain.output
    _refused(run(env, "verify", "--details"), "verify")
    _refused(run(env, "verify", "--details", *AS_ALICE), "verify")


@pytest.mark.parametrize("args", [("audits",), ("audits", "show", "audit-1"),
                                  ("audits", "--json")], ids=["list", "show", "json"])
def test_audits_show_no_case(env, args):  # noqa: F811
    code = _labelled(env)
    result = run(env, *args)
    assert result.exit_code == 0, result.output
    # A run's models, yes (as the `models` table to anyone); never a case or an operator.
    assert code not in result.output
    for word in SECRETS[2:]:
        assert word not in result.output, (word, result.output)


def test_nobody_registered_nothing_blinded(env):  # noqa: F811
    assert run(env, "flips", "--all").exit_code == 0
