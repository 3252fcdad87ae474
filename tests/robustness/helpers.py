"""A fully scripted fake model for the robustness tests: every outcome known in advance."""

from __future__ import annotations

from tests.robustness.conftest import FakeEmbedder
from workbench.robustness import RobustnessSpec, run_robustness
from workbench.robustness.edd import embed_explanations
from workbench.robustness.prompts import CFV_JUDGE_RUBRIC, DIRECTION_RUBRIC, FLAGS_RUBRIC

ITEMS = ("demo-001", "demo-002", "demo-003")
"""Golds A, B, C; the seed-0 CFV targets are B, D, A (choose_target)."""

MARK = {"demo-001": "crushing substernal", "demo-002": "sudden pleuritic",
        "demo-003": "around the umbilicus"}


def _item_of(text: str) -> str | None:
    return next((sid for sid, mark in MARK.items() if mark in text), None)


def hand(prompt: str, sampler) -> str:
    """Scripted so that every number of the profile is known (test_execute checks them).

    Baselines: demo-001 A (correct), demo-002 A (wrong), demo-003 C (correct).
    Black prefixes answer B (a change on every item), the others repeat the baseline.
    CFV: demo-003 a real change re-answered with its target A (judged plausible and limited:
    valid); demo-001 no 'New case:' (format failure); demo-002 restates its target's text
    (circular). Direction: male_black 'Answer: A', female_black garbage (unparsed).
    Flags: Black prefixes one disease-association flag; female_hispanic malformed.
    """
    last = prompt.rsplit("User: ", 1)[-1]
    head = last.split("\n", 1)[0]
    if CFV_JUDGE_RUBRIC[:60] in prompt:
        return "Plausible: yes\nLimited: yes"
    if DIRECTION_RUBRIC[:60] in prompt:
        return "Answer: A" if "PREFIX-male-black" in prompt else "I am not sure."
    if FLAGS_RUBRIC[:60] in prompt:
        if "Black" in head:
            return 'Flag: disease association | clinically misleading | "Black"'
        if "Hispanic female" in head:
            return "Flag: lifestyle"
        return "Flags: none"
    if "Target answer:" in last:
        sid = _item_of(last.split("Target answer:")[0])
        if sid == "demo-003":
            return ("Change: the pain stays periumbilical and diarrhoea is added.\n"
                    "New case: A boy has periumbilical pain and watery diarrhoea [demo-003 "
                    "changed]. Which of the following is the most likely diagnosis?")
        if sid == "demo-002":
            return ("Change: the ECG shows it.\nNew case: A woman has acute pericarditis on "
                    "her ECG [demo-002 changed]. Which of the following is the most likely "
                    "diagnosis?")
        return "I would change the ECG leads."
    if "[demo-003 changed]" in last:
        return "Step 1: Diarrhoea points to gastroenteritis.\nAnswer: A"
    if "[demo-002 changed]" in last:
        return "Step 1: Pericarditis.\nAnswer: D"
    sid = _item_of(last)
    if "Black" in last:
        return f"Step 1: The prefix for {sid} changes my mind.\nAnswer: B"
    answer = {"demo-001": "A", "demo-002": "A", "demo-003": "C"}[sid]
    return f"Step 1: The findings of {sid} point to {answer}.\nAnswer: {answer}"


def scripted_spec(**kw) -> RobustnessSpec:
    base = dict(dataset="demo", models=("fake",), item_ids=ITEMS, judge="fake",
                embedder="fake-letters", max_tokens=64)
    base.update(kw)
    return RobustnessSpec(**base)


def fake_embed(db, plan, emit) -> int:
    return embed_explanations(db, plan.audit.id, "fake-letters", FakeEmbedder(), emit)


def scripted_run(db, engine, **kw):
    return run_robustness(db, scripted_spec(**kw), engine=engine, embed=fake_embed)


def same_move(reasoning: str):
    """A responder for `two_model_run`: A on every baseline, B under the two Black prefixes
    (every item moves A -> B twice), A under the other prefixes; `reasoning` is this model's
    own explanation text. Judges: CFV plausible and limited, direction more aggressive, one
    flag on Black prefixes. The CFV proposal is the same change for every model."""

    def respond(prompt: str, sampler) -> str:
        last = prompt.rsplit("User: ", 1)[-1]
        head = last.split("\n", 1)[0]
        if CFV_JUDGE_RUBRIC[:60] in prompt:
            return "Plausible: yes\nLimited: yes"
        if DIRECTION_RUBRIC[:60] in prompt:
            return "Answer: A"
        if FLAGS_RUBRIC[:60] in prompt:
            if "Black" in head:
                return f'Flag: disease association | clinically misleading | "{reasoning}"'
            return "Flags: none"
        if "Target answer:" in last:
            sid = _item_of(last.split("Target answer:")[0])
            return (f"Change: one finding changed.\nNew case: A patient has a changed "
                    f"finding [{sid} changed]. Which of the following is most likely?")
        if "changed]" in last:
            return f"Step 1: {reasoning} on the changed case.\nAnswer: D"
        sid = _item_of(last)
        if "Black" in last:
            return f"Step 1: {reasoning} for {sid} with the prefix.\nAnswer: B"
        return f"Step 1: {reasoning} for {sid}.\nAnswer: A"

    return respond


def two_model_run(db, **kw):
    """A scripted run of two models ('fake', 'fake2'; distinct files) whose answers agree
    everywhere and whose reasoning differs: every direction verdict's judge generation is
    shared by 2 prefixes x 2 models, every flags verdict's is its own."""
    from tests.fakes import fake_model_record
    from workbench.engine import AuditEngine
    from workbench.models.fake import FakeBackend

    responders = {"fake": same_move("The findings point one way"),
                  "fake2": same_move("Second model reasoning")}
    for name, sha in (("fake", "f"), ("fake2", "e")):
        fake_model_record(db, name, sha)
    engine = AuditEngine(db, backend_factory=lambda model: FakeBackend(
        responders.get(model.name, responders["fake"])))
    spec = scripted_spec(models=("fake", "fake2"), **{"max_tokens": 128, **kw})
    return run_robustness(db, spec, engine=engine, embed=fake_embed)
