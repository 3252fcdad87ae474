"""BOS as the model asks (issue 36, criterion 4): a template-less GGUF's prompt is tokenized
with llama.cpp's `add_special`, as llama-cpp-python's own no-template chat path does; a chat
template model (the embedded SmolLM2) keeps its tokens and its generation keys."""

from __future__ import annotations

from dataclasses import replace

import pytest

from store import open_db
from store.records import Item
from tests.models.tiny_gguf import write_tiny_model
from workbench.models.prompts import generation_key
from workbench.models.registry import default_model, embedded_model_path, register_model
from workbench.models.request import GenerationRequest, Sampler
from workbench.models.runner import Runner

ITEM = Item(source_id="q1", kind="mcq", question="Which artery?", gold="A",
            options={"A": "Right coronary", "B": "Left circumflex"})
REQUEST = GenerationRequest(item=ITEM, mode="direct", template="direct@1")

EMBEDDED_DIRECT_KEY = "2915cb5dcd74cbbbfe0231fb1c8225b892058db6bfdce2478be12fd21f08ce86"
"""The embedded model's key of `REQUEST`, computed by PAW before this change (commit
a6d8762): a chat-template model's keys must not move."""


@pytest.mark.parametrize("add_bos", [True, False])
def test_a_template_less_model_is_tokenized_as_its_metadata_asks(tmp_path, add_bos) -> None:
    path = write_tiny_model(tmp_path / f"plain-{add_bos}.gguf", "llama",
                            tokenizer_from=embedded_model_path(), chat_template=False,
                            add_bos=add_bos)
    db = open_db(memory=True)
    model = register_model(db, path)
    assert model.chat_template is None
    runner = Runner(db, model, threads=1, batch_size=1, ctx=256)  # trained on 64 tokens
    try:
        prepared = runner.prepare(REQUEST)
        rendered = prepared.rendered
        assert rendered.add_special and rendered.text.startswith("System: ")
        tok = runner.tokenize(prepared)
        llm = runner.backend.llm  # type: ignore[attr-defined]
        bare = tuple(llm.tokenize(rendered.text.encode(), add_bos=False, special=True))
        # llama-cpp-python's no-template chat path (`chat_formatter_to_chat_completion_handler`
        # with a formatter that added no specials): tokenize(prompt, add_bos=True, special=True).
        theirs = tuple(llm.tokenize(rendered.text.encode(), add_bos=True, special=True))
        assert tok.prompt_ids == theirs
        if add_bos:
            assert tok.prompt_ids[0] == llm.token_bos()
            assert tok.prompt_ids == (llm.token_bos(),) + bare
        else:
            assert tok.prompt_ids == bare
        # Generations stored before (the same text without BOS) are not reused.
        assert prepared.key != generation_key(model.sha256, REQUEST,
                                              replace(rendered, add_special=False))
        # And a run decodes from those ids: the stored row counts them.
        summary = runner.run([replace(REQUEST, sampler=Sampler(max_tokens=2))])
        assert summary.generated == 1
        (tokens_in,) = db.execute("SELECT tokens_in FROM generations").fetchone()
        assert tokens_in == len(theirs)
    finally:
        runner.close()


def test_the_embedded_model_keeps_its_tokens_and_keys() -> None:
    db = open_db(memory=True)
    runner = Runner(db, default_model(db), threads=1, batch_size=1)
    try:
        prepared = runner.prepare(REQUEST)
        assert not prepared.rendered.add_special
        assert prepared.key == EMBEDDED_DIRECT_KEY
        llm = runner.backend.llm  # type: ignore[attr-defined]
        tok = runner.tokenize(prepared)
        assert tok.prompt_ids == tuple(llm.tokenize(prepared.rendered.text.encode(),
                                                    add_bos=False, special=True))
        # Its template writes its BOS text: exactly one BOS-like start, not two.
        assert prepared.rendered.text.startswith("<|im_start|>system")
    finally:
        runner.close()
