"""The one rule for wrong passphrases (`workbench/signin_attempts.py`) that the CLI prompt
and both workbench forms follow; the forms' lock-out is driven end to end in
tests/tui/test_signin_gate.py, the prompt's in tests/annotate/test_cli.py."""

from __future__ import annotations

from workbench.signin_attempts import MAX_ATTEMPTS, FailedAttempts, failure_delay


def test_the_waits_grow_and_the_last_repeats():
    assert [failure_delay(n) for n in range(5)] == [1.0, 2.0, 4.0, 4.0, 4.0]


def test_a_form_locks_after_the_third_wrong_passphrase_and_says_how_many_are_left():
    failures = FailedAttempts()
    said = []
    while not failures.locked:
        assert failures.delay() == failure_delay(failures.count)
        said.append(failures.record("carol: wrong passphrase"))
    assert failures.count == MAX_ATTEMPTS == 3
    assert said == [
        "carol: wrong passphrase (2 attempt(s) left: type the passphrase again; "
        "shift+tab: the name)",
        "carol: wrong passphrase (1 attempt(s) left: type the passphrase again; "
        "shift+tab: the name)",
        "carol: wrong passphrase — locked: restart the app to try again",
    ]
