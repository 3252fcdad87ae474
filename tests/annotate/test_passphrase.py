"""Passphrase strength at registration: zxcvbn's score, the minimum, the message."""

from __future__ import annotations

import pytest

from annotate.trust.passphrase import MIN_SCORE, strength
from annotate.trust.people import register
from store.errors import UserError
from tests.annotate.conftest import PASSPHRASE


@pytest.mark.parametrize("weak", ["password", "12345678", "aaaaaaaa", " " * 8,
                                  "alicealice", "qwertyuiop"])
def test_the_issues_weak_passphrases_are_refused_with_a_clear_message(db, weak):
    with pytest.raises(UserError) as caught:
        register(db, "alice", "rater", weak)
    message = str(caught.value)
    assert message.startswith("passphrase: too easy to guess (zxcvbn strength ")
    assert f"at least {MIN_SCORE} needed" in message and "\n" not in message
    assert db.execute("SELECT COUNT(*) FROM people").fetchone()[0] == 0


def test_short_passphrases_are_refused_before_scoring(db):
    with pytest.raises(UserError, match="at least 8 characters, got 5"):
        register(db, "alice", "rater", "Zq!9x")


def test_the_persons_own_name_counts_against_them(db):
    # zxcvbn is told the name: a made-up word scores 4 for bob, 0 as qelvondrapix's own.
    assert strength("qelvondrapix", "bob")[0] == 4
    assert strength("qelvondrapix", "qelvondrapix")[0] == 0
    with pytest.raises(UserError, match="too easy to guess"):
        register(db, "qelvondrapix", "rater", "qelvondrapix")


def test_a_passphrase_of_unrelated_words_is_accepted(db):
    assert strength(PASSPHRASE, "alice")[0] >= MIN_SCORE
    assert register(db, "alice", "rater", PASSPHRASE).name == "alice"


def test_paw_raters_add_refuses_a_weak_passphrase_in_one_line(tmp_path, monkeypatch, capsys):
    from workbench.cli import main

    monkeypatch.setenv("PW", "password")
    with pytest.raises(SystemExit) as exited:
        main(["raters", "add", "carol", "--role", "coordinator", "--passphrase-env", "PW",
              "--db", str(tmp_path / "paw.db")])
    assert exited.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("paw: error: passphrase: too easy to guess (zxcvbn strength 0 "
                              "of 4, at least 3 needed: This is a top-10 common password)"), err
    assert not any("Traceback" in line for line in err)


# Issue 35, criterion 6: strength checked on the first entry, not after typing it twice.
def test_a_weak_passphrase_is_refused_on_its_first_entry(tmp_path):
    from click.testing import CliRunner

    from store import open_db
    from workbench.cli import cli

    path = str(tmp_path / "paw.db")
    # A weak one: refused at once (never asked a second time), then a good one, confirmed.
    typed = "password1\ncorrect horse battery\ncorrect horse battery\n"
    result = CliRunner().invoke(cli, ["raters", "add", "carol", "--role", "coordinator",
                                      "--db", path], input=typed)
    assert result.exit_code == 0, result.output
    assert "too easy to guess" in result.output
    assert result.output.count("Repeat the new passphrase") == 1
    assert open_db(path).execute("SELECT name FROM people").fetchall() == [("carol",)]
    # Three weak ones: nothing registered, one line.
    result = CliRunner().invoke(cli, ["raters", "add", "dave", "--coordinator", "carol",
                                      "--coordinator-passphrase-env", "PW", "--db", path],
                                input="aaaa\nbbbb\ncccc\n", env={"PW": "correct horse battery"})
    assert "no acceptable passphrase after 3 tries" in str(result.exception)
    assert "Repeat" not in result.output
