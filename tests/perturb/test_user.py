"""User-defined operators: TOML/JSON rules files ($PAW_OPERATORS, ~/.config) and entry points."""

from __future__ import annotations

import json
import os

import pytest

from store.errors import UserError
from workbench.perturb import OPERATORS, get_operator, load_catalogue
from workbench.perturb.base import Edit, Operator
from workbench.perturb import user

RULES = '''
[[operator]]
id = "U_smoker"
family = "user"
name = "nonsmoker -> smoker"
intent = "D"
locus = "Sur"
target = "question"
pattern = "\\\\bnonsmoker\\\\b"
replacement = "smoker"
example = "He is a nonsmoker."

[[operator]]
id = "U_note"
prepend = "Records were reviewed twice."
'''


@pytest.fixture
def rules_file(tmp_path, monkeypatch):
    path = tmp_path / "ops.toml"
    path.write_text(RULES, encoding="utf-8")
    monkeypatch.setenv("PAW_OPERATORS", str(path))
    return path


def test_rules_file_operators_join_the_catalogue_after_the_builtins(rules_file):
    catalogue = load_catalogue()
    assert list(catalogue)[: len(OPERATORS)] == list(OPERATORS)
    assert list(catalogue)[len(OPERATORS) :] == ["U_smoker", "U_note"]
    op = get_operator("U_smoker")
    assert (op.intent, op.locus, op.target, op.block) == ("D", "Sur", "question", "user")
    result = op.apply("He is a nonsmoker; nonsmokers live longer.")
    assert result.text == "He is a smoker; nonsmokers live longer."
    assert (result.old, result.new) == ("nonsmoker", "smoker")
    assert not op.apply("He smokes.").fired
    assert get_operator("U_note").apply("Q?").text == "Records were reviewed twice. Q?"
    assert "U_smoker" not in OPERATORS  # the built-in dict stays built-in only


def test_default_config_path_and_json_rules(tmp_path, monkeypatch):
    config = tmp_path / "xdg" / "paw"
    config.mkdir(parents=True)
    (config / "operators.toml").write_text(RULES, encoding="utf-8")
    extra = tmp_path / "more.json"
    extra.write_text(json.dumps({"operators": [
        {"id": "U_all_fever", "pattern": "fever", "replacement": "pyrexia", "count": 0}
    ]}), encoding="utf-8")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("PAW_OPERATORS", str(extra))
    ids = list(load_catalogue())
    assert ids[-3:] == ["U_all_fever", "U_smoker", "U_note"]  # env first, then the default
    assert get_operator("U_all_fever").apply("fever, fever").text == "pyrexia, pyrexia"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('[[operator]]\nid = "U_x"\npattern = "("\nreplacement = "y"\n',
         ":3: pattern: expected a valid regular expression"),
        # a missing field is located at the rule's [[operator]] header
        ('[[operator]]\nid = "U_x"\npattern = "a"\n', ":1: replacement: expected a string"),
        ('[[operator]]\nid = "U_x"\nprepend = "a"\nintent = "X"\n', ":4: intent: expected D or P"),
        ('[[operator]]\nid = "U_x"\n', ":1: pattern: expected exactly one of pattern"),
        ('[[operator]]\nid = "U_x"\nprepend = "a"\ncolour = "red"\n',
         ":4: colour: expected one of"),
        ('[[operator]]\nid = "M2_sex"\nprepend = "a"\n', ":2: id: expected a new operator id"),
        ('[[operator]]\nid = "U_x"\nprepend = "a"\n[[operator]]\nid = "U_x"\nprepend = "b"\n',
         ":5: id: expected a unique id"),
        ("not toml = = =", ":1: file: expected valid"),
    ],
)
def test_bad_rules_are_located_user_errors(tmp_path, monkeypatch, body, message):
    path = tmp_path / "bad.toml"
    path.write_text(body, encoding="utf-8")
    monkeypatch.setenv("PAW_OPERATORS", str(path))
    with pytest.raises(UserError) as info:
        load_catalogue()
    assert str(info.value).startswith(str(path)) and message in str(info.value)
    assert "\n" not in str(info.value)


def test_missing_rules_file_is_a_user_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PAW_OPERATORS", str(tmp_path / "nope.toml") + os.pathsep)
    with pytest.raises(UserError, match="expected a readable rules file"):
        load_catalogue()


class FakeEntryPoint:
    def __init__(self, name: str, obj: object) -> None:
        self.name, self.value, self._obj = name, f"plugin:{name}", obj

    def load(self) -> object:
        return self._obj


def _upper(text, ctx):
    return Edit(text=text.upper(), old=text, new=text.upper())


def test_entry_point_operators(monkeypatch):
    plugin_op = Operator("P_upper", "user", "a", "upper-case", "P", "Sur", "question", "user",
                         "Upper-case the stem.", "abc", _upper, source="plugin")
    second = Operator("P_upper2", "user", "b", "upper 2", None, None, "question", "user",
                      "Again.", "abc", _upper, source="plugin")
    eps = [FakeEntryPoint("one", plugin_op), FakeEntryPoint("many", lambda: [second])]
    monkeypatch.setattr(user, "entry_points", lambda group: eps if group == "paw.operators" else [])
    assert list(load_catalogue())[-2:] == ["P_upper", "P_upper2"]
    assert get_operator("P_upper2").apply("abc").text == "ABC"
    monkeypatch.setattr(user, "entry_points", lambda group: [FakeEntryPoint("bad", 42)])
    with pytest.raises(UserError, match="entry point bad .*expected an Operator, got int"):
        load_catalogue()


BACKTRACKING = [  # (pattern, a text it backtracks on exponentially, in re and in regex)
    ("(a|aa)+$", "a" * 60 + "!"),
    ("(.*?,){15}X", "a," * 30),
]
CLASSIC = [  # exponential in Python's re; the regex package's matcher finishes them at once
    ("(a+)+$", "a" * 40 + "!"),
    ("(a|aa)*b", "a" * 60),
    ("(x+x+)+y", "x" * 40),
    ("^(\\w+\\s?)*$", "word " * 12 + "!"),
]


def _bad_rule(path, pattern: str, example: str | None = None) -> None:
    lines = ['[[operator]]', 'id = "U_slow"', 'target = "question"',
             f"pattern = '{pattern}'", 'replacement = "z"']
    if example is not None:
        lines.append(f'example = "{example}"')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize("pattern,text", BACKTRACKING, ids=[p for p, _ in BACKTRACKING])
def test_a_backtracking_rule_is_stopped_and_named(tmp_path, monkeypatch, capsys, pattern, text):
    import time

    from workbench.cli import main

    monkeypatch.setattr(user, "MATCH_TIMEOUT_S", 0.3)
    path = tmp_path / "slow.toml"
    monkeypatch.setenv("PAW_OPERATORS", str(path))
    # Checked when loaded, on the rule's example: refused naming file, line and rule.
    _bad_rule(path, pattern, text)
    with pytest.raises(UserError, match=rf"^{path}:4: pattern: operator U_slow's .* ran over "
                                        r"0.3 s on a \d+-character text and was stopped"):
        load_catalogue()
    # Without an example it loads; the first text it hangs on stops the command.
    _bad_rule(path, pattern)
    started = time.monotonic()
    with pytest.raises(SystemExit) as stopped:
        main(["perturb", "U_slow", "--text", text])
    err = capsys.readouterr().err
    assert stopped.value.code == 1
    assert err.startswith(f"paw: error: {path}:4: pattern: operator U_slow") and \
        "catastrophic backtracking" in err and len(err.strip().splitlines()) == 1, err
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("pattern,text", CLASSIC, ids=[p for p, _ in CLASSIC])
def test_the_classic_patterns_finish_within_the_bound(tmp_path, monkeypatch, pattern, text):
    path = tmp_path / "classic.toml"
    monkeypatch.setenv("PAW_OPERATORS", str(path))
    _bad_rule(path, pattern, text)  # its example is checked when loaded: within the bound
    assert not get_operator("U_slow").apply(text).fired


def test_a_sound_rule_is_not_slowed_or_refused(rules_file):
    op = get_operator("U_smoker")
    assert op.apply("nonsmoker " * 2000).details == {"replacements": 1}
