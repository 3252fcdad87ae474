"""Templates are the paper's text; rendering matches llama-cpp-python; keys are content keys."""

from __future__ import annotations

from dataclasses import replace

import pytest

from store.errors import UserError
from store.records import Item
from workbench.models.prompts import ChatFormat, generation_key, render_request
from workbench.models.request import GenerationRequest, Sampler
from workbench.models.templates import TEMPLATES, get_template
from workbench.models.gguf import read_gguf
from workbench.models.registry import embedded_model_path

ITEM = Item(source_id="q1", kind="mcq", question="Which artery?", gold="A",
            options={"A": "Right coronary", "B": "Left circumflex"})


@pytest.fixture(scope="module")
def smol_chat() -> ChatFormat:
    info = read_gguf(embedded_model_path())
    return ChatFormat(info.chat_template or "", info.bos_token or "", info.eos_token or "")


def test_paper_prompts_are_verbatim() -> None:
    neutral = get_template("neutral_cot").system
    assert neutral.startswith("You are a careful medical reasoner. Read the clinical question")
    assert neutral.endswith("grounded in the clinical evidence provided in the question.")
    assert get_template("strict_medical@1").system.endswith(
        "state that explicitly before selecting an option.")
    assert "DERIVABLE" in get_template("self_grounding").system
    assert "non-decisive" in get_template("anti_distractor").system
    assert set(TEMPLATES) >= {"neutral_cot@1", "strict_medical@1", "self_grounding@1",
                              "anti_distractor@1", "direct@1"}
    with pytest.raises(UserError, match="--template"):
        get_template("nope@1")


def test_render_equals_llama_cpp_chat_formatter(smol_chat: ChatFormat) -> None:
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    request = GenerationRequest(item=ITEM, mode="cot", template="neutral_cot@1")
    ours = render_request(request, smol_chat).text
    theirs = Jinja2ChatFormatter(template=smol_chat.template, eos_token=smol_chat.eos_token,
                                 bos_token=smol_chat.bos_token)(
        messages=[{"role": "system", "content": get_template("neutral_cot").system},
                  {"role": "user", "content": "Question: Which artery?\nAnswer choices:\n"
                   "A. Right coronary\nB. Left circumflex\n"
                   "Reason step by step, then end with Answer: X."}]).prompt
    assert ours == theirs
    assert ours.endswith("<|im_start|>assistant\n")


def test_direct_prompt_ends_with_the_cue(smol_chat: ChatFormat) -> None:
    rendered = render_request(GenerationRequest(item=ITEM, mode="direct", template="direct@1"),
                              smol_chat)
    assert rendered.text.endswith("<|im_start|>assistant\nAnswer:")
    with pytest.raises(UserError, match="not usable for mode"):
        render_request(GenerationRequest(item=ITEM, mode="direct", template="neutral_cot@1"),
                       smol_chat)


def test_binary_items_name_their_labels(smol_chat: ChatFormat) -> None:
    item = Item(source_id="t", kind="binary", question="Send to ED?", gold="Yes",
                options={"Yes": "Yes", "No": "No"})
    text = render_request(GenerationRequest(item=item, mode="cot", template="neutral_cot@1"),
                          smol_chat).text
    assert "Answer choices:\nYes\nNo\n" in text and "where X is Yes or No" in text


def test_item_without_options_is_a_user_error(smol_chat: ChatFormat) -> None:
    bare = replace(ITEM, options={})
    with pytest.raises(UserError, match="item 'q1': options"):
        render_request(GenerationRequest(item=bare, mode="cot", template="neutral_cot@1"),
                       smol_chat)


def test_key_changes_with_each_ingredient(smol_chat: ChatFormat) -> None:
    base = GenerationRequest(item=ITEM, mode="cot", template="neutral_cot@1")

    def key(request: GenerationRequest, sha: str = "m1") -> str:
        return generation_key(sha, request, render_request(request, smol_chat))

    variants = [
        key(base, "m2"),
        key(replace(base, sampler=Sampler(seed=1))),
        key(replace(base, sampler=Sampler(temperature=0.7))),
        key(replace(base, question="Which vein?")),
        key(replace(base, template="strict_medical@1")),
        key(replace(base, mode="continue", prefix="Step 1:")),
        key(replace(base, mode="continue", prefix="Step 1:", prefix_token_ids=(1, 2))),
    ]
    assert key(base) == key(base)  # stable
    assert len(set(variants + [key(base)])) == len(variants) + 1
    # the item's database id is not an ingredient: same content, same key
    assert key(replace(base, item=replace(ITEM, id=99))) == key(base)
