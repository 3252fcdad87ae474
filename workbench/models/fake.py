"""A fake backend with scripted outputs, for fast unit tests of scheduling, resume and storage.

Tokens are characters (id = code point; 0 ends generation), so token boundaries are
trivial and tests can reason about prefixes exactly. The fake never replaces the real
model in the tests that matter (distributions, determinism, continuation, kill/resume).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from workbench.models.decoded import Decoded, Watched, common_prefix
from workbench.models.request import Sampler

EOG = 0

Responder = Callable[[str, Sampler], str]


def _default_responder(prompt: str, sampler: Sampler) -> str:
    return "Step 1: the findings point to the first option.\nAnswer: A"


class FakeBackend:
    """Scripted model: `responder(prompt_text, sampler)` gives the text it 'generates'.

    Logits: at every step the scripted next character gets 5.0 and everything else 0.0,
    so the option distribution at the model's own answer position favours its answer;
    an appended cue gets a flat distribution unless `appended_answer` names a label.

    Attributes:
        calls: prompt texts passed to `generate`, in order (tests check scheduling).
        evaluated: how many prompt tokens were evaluated (with prefix reuse accounted).
    """

    def __init__(self, responder: Responder | None = None, *, n_ctx: int = 8192,
                 fail_on: Callable[[str], bool] | None = None,
                 appended_answer: str | None = None) -> None:
        self.responder = responder or _default_responder
        self.n_ctx = n_ctx
        self.fail_on = fail_on
        self.appended_answer = appended_answer
        self.calls: list[str] = []
        self.evaluated = 0
        self._cache: list[int] = []
        self.closed = False
        self.engine = "fake"  # recorded on each generation (`generations.engine`)

    def tokenize(self, text: str, *, special: bool, add_special: bool = False) -> list[int]:
        """One token per character (the fake model has no BOS or EOS to add)."""
        return [ord(ch) for ch in text]

    def piece(self, token_id: int) -> bytes:
        """The character's UTF-8 bytes."""
        return chr(token_id).encode("utf-8")

    def _decode(self, ids: Sequence[int]) -> str:
        return "".join(chr(i) for i in ids)

    def _consume(self, ids: Sequence[int]) -> None:
        self.evaluated += len(ids) - common_prefix(self._cache, ids)
        self._cache = list(ids)

    def generate(self, prompt_ids: Sequence[int], sampler: Sampler, max_tokens: int,
                 watch_ids: Sequence[int]) -> Decoded:
        """Emit the scripted text (cut at `max_tokens`), one character per token."""
        prompt = self._decode(prompt_ids)
        self.calls.append(prompt)
        if self.fail_on is not None and self.fail_on(prompt):
            raise RuntimeError("fake backend failure")
        self._consume(prompt_ids)
        text = self.responder(prompt, sampler)
        ids = [ord(ch) for ch in text][:max_tokens]
        finish = "length" if len(text) > max_tokens else "stop"
        emitted = ids + ([EOG] if finish == "stop" else [])
        steps = tuple(
            Watched(tuple(5.0 if w == token else 0.0 for w in watch_ids), 10.0)
            for token in emitted
        )
        self._cache = list(prompt_ids) + ids
        return Decoded(tuple(ids), finish, steps)

    def next_logits(self, context_ids: Sequence[int], watch_ids: Sequence[int]) -> Watched:
        """Flat logits, or 5.0 on `appended_answer`'s first character."""
        self._consume(context_ids)
        target = ord(self.appended_answer[0]) if self.appended_answer else None
        return Watched(tuple(5.0 if w == target else 0.0 for w in watch_ids), 10.0)

    def reset(self) -> None:
        """Forget the cache."""
        self._cache = []

    def close(self) -> None:
        """Mark closed."""
        self.closed = True
