"""More rewordings for the table paraphraser, so that a deterministic rewrite can change a
larger share of a vignette's tokens (the dose-response design's 20–60 % levels, seed 000 §4.1).

`EXTENDED_TABLE` = `paraphrase.PARAPHRASE_TABLE` + `EXTRA_RULES`. It is used where the
paraphrase may span several sentences (`paw study --dose-levels`); the matched baseline of
the main design and the catalogue's `paraphrase_token_adjusted` keep the original table, so
their stored and new paraphrases are unchanged.

Same guards as the original table: no rule touches a number, a unit, a gendered word or
pronoun, a name, a drug, a laboratory value, a severity qualifier (mild/moderate/severe, M5)
or a time phrase (this morning, yesterday, for the past …, M6), and none adds, drops or
flips a negation — four reword one and keep it ("has no" → "does not have any"). Every rule
is a wording of the same clinical fact; each pair passes
`workbench.counterfactual.checks.check_rewrite` (tested).
"""

from __future__ import annotations

from workbench.perturb.paraphrase import PARAPHRASE_TABLE

EXTRA_RULES: tuple[tuple[str, str], ...] = (
    # history, presentation, reporting
    ("has a history of", "has a known history of"),
    ("a history of", "a past history of"),
    ("complains of", "describes"),
    ("reports that", "says that"),
    ("reports", "describes"),
    ("reported", "described"),
    ("noticed", "observed"),
    ("calls", "phones"),
    ("office", "practice"),
    ("because of", "due to"),
    ("while", "when"),
    ("during", "in the course of"),
    ("more than", "over"),
    ("consists of", "is made up of"),
    ("causes", "produces"),
    ("appeared", "developed"),
    ("has become", "has grown"),
    ("difficult to wake", "hard to wake"),
    ("woken", "awakened"),
    # findings and body parts, said another way
    ("shortness of breath", "breathlessness"),
    ("chest pain", "pain in the chest"),
    ("abdominal pain", "pain in the abdomen"),
    ("low back pain", "pain in the lower back"),
    ("sore throat", "throat pain"),
    ("runny nose", "nasal discharge"),
    ("weight loss", "loss of weight"),
    ("visual change", "change in vision"),
    ("high-grade fever", "high fever"),
    ("sweating", "perspiration"),
    ("symptoms", "complaints"),
    ("medical conditions", "health problems"),
    ("conditions", "illnesses"),
    ("problems", "issues"),
    ("vaccinations", "immunizations"),
    ("up to date", "current"),
    ("at rest", "while resting"),
    ("breathing fast", "breathing rapidly"),
    ("drowsy", "sleepy"),
    ("outer ankle", "outside of the ankle"),
    ("large meals", "big meals"),
    ("purple spots", "purple marks"),
    ("small blisters", "tiny blisters"),
    ("an acute", "a sudden"),
    ("acute", "sudden"),
    ("otherwise well", "otherwise healthy"),
    # wordings of the same negative finding (the negation is kept, only reworded)
    ("has no", "does not have any"),
    ("there is no", "there is not any"),
    ("not fade", "not disappear"),
    ("cannot", "is unable to"),
    # more findings and risk factors
    ("hypertension", "high blood pressure"),
    ("smoking", "tobacco use"),
    ("pelvic pain", "pain in the pelvis"),
    ("pressure-like", "pressure-type"),
    ("lightheaded", "light-headed"),
    ("light hurts", "light is painful to"),
    ("stressful period", "stressful time"),
    ("in the woods", "in a wooded area"),
    ("linear lines", "straight lines"),
    ("with the pain", "along with the pain"),
    ("that began", "which started"),
    ("is like", "resembles"),
    ("can speak", "is able to speak"),
    ("it read", "it showed"),
    ("about", "around"),
    # verbs and actions
    ("has lasted", "has continued for"),
    ("has vomited", "has thrown up"),
    ("has had", "has been having"),
    ("is taking", "is using"),
    ("usual", "regular"),
    ("normally", "as usual"),
    ("relieves", "eases"),
    ("relieve", "ease"),
    ("improving", "getting better"),
    ("improved", "gotten better"),
    ("worsening", "deterioration"),
    ("checked", "measured"),
    ("reads", "shows"),
    ("stands up", "gets up"),
    ("lifted", "picked up"),
    ("can walk", "is able to walk"),
    ("was able to", "could"),
    ("stepping off", "stepping down from"),
    ("immediately after", "right after"),
    ("pressed", "pushed"),
    ("is drooping", "droops"),
)
"""Rewordings added to the original table for multi-sentence (dose-response) paraphrases."""


def extended_table() -> tuple[tuple[str, str], ...]:
    """`PARAPHRASE_TABLE` followed by `EXTRA_RULES` (an extra rule never overrides an
    original one)."""
    known = {source for source, _ in PARAPHRASE_TABLE}
    return PARAPHRASE_TABLE + tuple(r for r in EXTRA_RULES if r[0] not in known)


EXTENDED_TABLE: tuple[tuple[str, str], ...] = extended_table()
"""The table of multi-sentence paraphrases (`TableParaphraser(EXTENDED_TABLE)`)."""
