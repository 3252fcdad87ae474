"""Request → exact prompt text: chat messages from a template, rendered with the GGUF's template.

Rendering mirrors llama-cpp-python's `Jinja2ChatFormatter` (sandboxed Jinja, trim_blocks,
lstrip_blocks, `tojson`, `{% generation %}` ignored) so the text equals what
`create_chat_completion` would build, with one deliberate difference: `strftime_now`
returns a fixed date, so templates that print today's date (Llama 3.x) give the same
prompt — and the same generation key — on every day.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

from store.db import dumps
from store.errors import UserError
from workbench.models.request import MODES, GenerationRequest
from workbench.models.templates import (
    ANSWER_CUE,
    TEMPLATES,
    PromptTemplate,
    format_options,
    get_template,
    is_yes_no,
    label_list,
)

KEY_VERSION = 1
"""Bumped only if the key recipe changes (which would orphan every stored generation)."""

PINNED_DATE = datetime(2024, 7, 26)
"""What `strftime_now` renders in chat templates (the Llama 3.1 template's own default)."""

PLAIN_CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] | capitalize }}: {{ m['content'] }}\n\n{% endfor %}"
    "{% if add_generation_prompt %}Assistant: {% endif %}"
)
"""Used for a GGUF that carries no chat template (documented in docs/runner.md).

Its text is tokenized with llama.cpp's `add_special` (BOS, and EOS, where the GGUF's
metadata asks for them), as llama-cpp-python's own no-template chat path does
(`tokenize(prompt, add_bos=True, special=True)` when the formatter added no specials); a
chat template writes its own BOS text, so its prompts are tokenized without."""


@dataclass(frozen=True)
class ChatFormat:
    """A model's chat template with the special-token strings it refers to."""

    template: str
    bos_token: str = ""
    eos_token: str = ""
    add_special: bool = False
    """Whether llama.cpp adds the model's BOS/EOS at tokenization: only for the plain
    format of a GGUF without a chat template (a chat template carries its own)."""

    def render(self, messages: list[dict[str, str]]) -> str:
        """The prompt text for `messages`, ending with the assistant turn's opening."""
        try:
            return _compiled(self.template).render(
                messages=messages, bos_token=self.bos_token, eos_token=self.eos_token,
                add_generation_prompt=True, raise_exception=_raise,
                strftime_now=lambda fmt: PINNED_DATE.strftime(fmt),
                functions=None, function_call=None, tools=None, tool_choice=None,
            )
        except Exception as exc:  # noqa: BLE001 - a template bug is the model file's, not ours
            raise UserError(f"chat template of the model failed to render: {exc}") from None


def _raise(message: str) -> None:
    raise ValueError(message)


@lru_cache(maxsize=16)
def _compiled(template: str) -> Any:
    import jinja2
    import jinja2.ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class _IgnoreGeneration(jinja2.ext.Extension):
        tags = {"generation"}

        def parse(self, parser: Any) -> Any:
            parser.stream.skip(1)
            return parser.parse_statements(("name:endgeneration",), drop_needle=True)

    env = ImmutableSandboxedEnvironment(
        loader=jinja2.BaseLoader(), trim_blocks=True, lstrip_blocks=True,
        extensions=[_IgnoreGeneration, jinja2.ext.loopcontrols],
    )
    env.filters["tojson"] = lambda x, ensure_ascii=False, indent=None, separators=None, \
        sort_keys=False: json.dumps(x, ensure_ascii=ensure_ascii, indent=indent,
                                    separators=separators, sort_keys=sort_keys)
    return env.from_string(template)


@dataclass(frozen=True)
class RenderedPrompt:
    """The exact text a request sends, and how its answer is read."""

    text: str
    labels: tuple[str, ...]
    cue: str
    template: PromptTemplate | None
    prefix: str | None = None
    prefix_token_ids: tuple[int, ...] | None = None
    add_special: bool = False
    """Tokenize `text` with llama.cpp's `add_special` (BOS/EOS as the GGUF's metadata asks):
    the plain format of a template-less model (`PLAIN_CHAT_TEMPLATE`)."""


def _check(request: GenerationRequest) -> None:
    where = f"item {request.item.source_id!r}"
    if request.mode not in MODES:
        raise UserError(f"--mode: expected one of {', '.join(MODES)}, got {request.mode!r}")
    if request.mode == "judge":
        if not request.messages:
            raise UserError(f"{where}: judge request has no messages")
        if not request.labels:
            raise UserError(f"{where}: judge request has no labels")
        if "@" not in request.template:
            raise UserError(f"judge template: expected name@version, got {request.template!r}")
        return
    options = request.effective_options
    if not options:
        raise UserError(f"{where}: options: expected at least 2 answer options, got none")
    if len(options) < 2:
        raise UserError(f"{where}: options: expected at least 2 answer options, got 1")
    if not (request.question if request.question is not None else request.item.question).strip():
        raise UserError(f"{where}: question: expected text, got an empty question")
    if request.mode == "continue" and request.prefix is None:
        raise UserError(f"{where}: continue request has no prefix (the chain to continue)")


def build_messages(request: GenerationRequest, template: PromptTemplate) -> list[dict[str, str]]:
    """System and user messages of a cot/direct/continue request."""
    item = request.item
    options = request.effective_options
    question = request.question if request.question is not None else item.question
    if item.context:
        question = f"{item.context.strip()}\n\n{question}"
    binary = is_yes_no(item.kind, options)
    user = template.user_binary if binary else template.user_mcq
    labels = label_list(tuple(options))
    text = user.format(question=question,
                       options=format_options(options, "binary" if binary else item.kind),
                       label_list=labels)
    system = template.system
    if binary and template.system_binary is not None:
        system = template.system_binary.format(label_list=labels)
    return [{"role": "system", "content": system}, {"role": "user", "content": text}]


def render_request(request: GenerationRequest, chat: ChatFormat) -> RenderedPrompt:
    """The exact prompt text of a request (without any continued prefix).

    Raises:
        UserError: the request cannot be built (no options, unknown template, …).
    """
    _check(request)
    if request.mode == "judge":
        template = TEMPLATES.get(request.template)
        messages = [dict(m) for m in request.messages or ()]
        return RenderedPrompt(text=chat.render(messages), labels=request.effective_labels,
                              cue=template.cue if template else ANSWER_CUE, template=template,
                              add_special=chat.add_special)
    template = get_template(request.template)
    wanted = "direct" if request.mode == "direct" else "cot"
    if template.mode != wanted:
        raise UserError(
            f"--template: {template.id} is a {template.mode} template, not usable for "
            f"mode {request.mode!r}"
        )
    text = chat.render(build_messages(request, template)) + template.assistant_prefill
    return RenderedPrompt(
        text=text, labels=request.effective_labels, cue=template.cue, template=template,
        prefix=request.prefix if request.mode == "continue" else None,
        prefix_token_ids=request.prefix_token_ids if request.mode == "continue" else None,
        add_special=chat.add_special,
    )


def generation_key(model_sha256: str, request: GenerationRequest,
                   rendered: RenderedPrompt, backend: str | None = None) -> str:
    """sha256 of model file hash, mode, exact prompt (+ continued prefix and ids), sampler, seed.

    `backend` names a back-end whose results are not bit-identical to in-process decoding
    (the server pool); it is added to the payload only then, so in-process keys never change.
    A prompt tokenized with the model's BOS/EOS (`rendered.add_special`, a template-less
    model) adds `"add_special": true`: its generations stored before PAW added them (same
    text, no BOS) are not reused, while every chat-template model keeps its keys.
    """
    payload = {
        "v": KEY_VERSION,
        "model": model_sha256,
        "mode": request.mode,
        "prompt": rendered.text,
        "prefix": rendered.prefix,
        "prefix_token_ids": None if rendered.prefix_token_ids is None
        else list(rendered.prefix_token_ids),
        "sampler": request.sampler.as_dict(),
        "seed": request.sampler.seed,
        "labels": list(rendered.labels),
        "cue": rendered.cue,
    }
    if rendered.add_special:
        payload["add_special"] = True
    if backend is not None:
        payload["backend"] = backend
    return hashlib.sha256(dumps(payload).encode("utf-8")).hexdigest()
