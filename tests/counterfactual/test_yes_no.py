"""Yes/no items and the controls are asked for a plain Yes/No (seed 000's authors' format),
read from the Yes/No token distribution; the existing templates' prompts do not move."""

from __future__ import annotations

from store.records import Item
from workbench.counterfactual.spec import TEMPLATE, StudySpec
from workbench.models.prompts import PLAIN_CHAT_TEMPLATE, ChatFormat, build_messages, render_request
from workbench.models.request import GenerationRequest
from workbench.models.templates import get_template, is_yes_no

TRIAGE = Item(source_id="t1", kind="binary", question="A man has chest pain. Send to the ED?",
              gold="Yes", options={"Yes": "Yes", "No": "No"})
VIGNETTE = Item(source_id="v1", kind="mcq", question="A man has chest pain. Which artery?",
                gold="A", options={"A": "Right coronary", "B": "Left circumflex"})
CHAT = ChatFormat(PLAIN_CHAT_TEMPLATE)


def _messages(item: Item, template: str, **kw) -> list[dict[str, str]]:
    return build_messages(GenerationRequest(item, "direct", template, **kw),
                          get_template(template))


def test_the_study_asks_yes_no_items_for_a_plain_word_without_letters():
    assert StudySpec(dataset="d").config()["template"] == TEMPLATE["direct"] == \
        "direct_yesno@1"
    system, user = _messages(TRIAGE, "direct_yesno@1")
    assert "letter" not in system["content"] and "letter" not in user["content"]
    assert user["content"] == ("Question: A man has chest pain. Send to the ED?\n"
                               "Answer choices:\nYes\nNo\nAnswer with only Yes or No.")
    assert system["content"] == ("You are a careful medical reasoner. Answer the clinical "
                                 "question with only Yes or No. Do not explain.")
    rendered = render_request(GenerationRequest(TRIAGE, "direct", "direct_yesno@1"), CHAT)
    assert rendered.text.endswith("Assistant: Answer:") and rendered.labels == ("Yes", "No")


def test_a_control_on_a_multiple_choice_item_is_asked_as_yes_no():
    # The control replaces the question and the options: {"Yes", "No"} on an MCQ item.
    system, user = _messages(VIGNETTE, "direct_yesno@1",
                             question="A man has chest pain. Is this patient male?",
                             options={"Yes": "Yes", "No": "No"})
    assert "letter" not in system["content"]
    assert user["content"].endswith("Is this patient male?\nAnswer choices:\nYes\nNo\n"
                                    "Answer with only Yes or No.")
    assert is_yes_no("mcq", {"Yes": "Yes", "No": "No"})
    assert not is_yes_no("mcq", {"A": "Yes", "B": "No"})


def test_multiple_choice_prompts_are_those_of_direct_at_1():
    # Same rendered text, hence the same generation keys, for every MCQ item.
    assert _messages(VIGNETTE, "direct_yesno@1") == _messages(VIGNETTE, "direct@1")


def test_direct_at_1_is_unchanged_for_binary_items():
    # Pinned: a shipped template's rendering is part of stored generation keys.
    system, user = _messages(TRIAGE, "direct@1")
    assert "the letter of the correct option" in system["content"]
    assert user["content"] == ("Question: A man has chest pain. Send to the ED?\n"
                               "Answer choices:\nYes\nNo\nAnswer with one of Yes or No only.")
