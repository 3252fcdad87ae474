"""Operator and result records, seeded randomness, and the apply() contract every operator keeps."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from store.errors import UserError
from workbench.perturb.tokenize import Tokenizer, token_change_fraction

FAMILIES_F = ("F1", "F2", "F3", "F4", "F5", "F6", "F7")
FAMILIES_M = ("M1", "M2", "M3", "M4", "M5", "M6")
OTHER_FAMILIES = ("baseline", "control", "demographic", "shuffle", "user")
INTENTS = ("D", "P")
LOCI = ("Str", "Sur")
TARGETS = ("chain", "question", "options", "prompt")


@dataclass(frozen=True)
class PerturbResult:
    """What one operator did to one text.

    `fired` is True exactly when the output differs from the input; otherwise `text`
    is None and `reason` says why (the paper records such samples as *not fired*).
    `old`/`new` is the token diff the chain-update rule of CDR reads: `new` is the token
    a chain that registered the edit would mention (per-operator choices in docs/operators.md).
    """

    operator_id: str
    fired: bool
    text: str | None
    old: str | None
    new: str | None
    reason: str | None
    options: dict[str, str] | None = None
    gold: str | None = None
    token_change_fraction: float | None = None
    details: dict = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The result as a JSON-ready dict (the shape `paw perturb` prints, plus extras)."""
        payload: dict[str, Any] = {
            "operator": self.operator_id,
            "fired": self.fired,
            "text": self.text,
            "old": self.old,
            "new": self.new,
            "token_change_fraction": self.token_change_fraction,
        }
        if self.options is not None:
            payload["options"] = self.options
            payload["gold"] = self.gold
        if self.reason is not None:
            payload["reason"] = self.reason
        if self.details:
            payload["details"] = self.details
        return payload


@dataclass(frozen=True)
class Edit:
    """An operator function's raw answer, before `Operator.apply` normalises it."""

    text: str | None
    old: str | None = None
    new: str | None = None
    reason: str | None = None
    options: dict[str, str] | None = None
    gold: str | None = None
    details: dict = field(default_factory=dict)
    fraction: float | None = None

    @classmethod
    def not_fired(cls, reason: str, **details: Any) -> Edit:
        """An edit that did not apply, with the reason recorded."""
        return cls(text=None, reason=reason, details=dict(details))


@dataclass(frozen=True)
class Context:
    """Everything an operator function may read besides the text."""

    rng: random.Random
    seed: int
    item_key: str
    options: dict[str, str] | None
    gold: str | None
    tokenizer: Tokenizer | None
    params: Mapping[str, Any]


EditFn = Callable[[str, Context], Edit]


def seeded_rng(seed: int, item_key: str, offset: str) -> random.Random:
    """A `random.Random` that depends only on (seed, item, variant offset).

    sha256 rather than `hash()`: Python salts str hashes per process, and a rerun must
    make the same edit in any process.

    Args:
        seed: the audit's seed.
        item_key: the item's stable key (dataset item id).
        offset: the variant's own offset (its operator id), so variants a/b/c draw
            independently on the same item.

    Returns:
        A freshly seeded generator.
    """
    digest = hashlib.sha256(f"{seed}\x1f{item_key}\x1f{offset}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


@dataclass(frozen=True)
class Operator:
    """One catalogue entry: tags, a worked example, and the edit function.

    Attributes:
        id: stable operator id (the paper's name for the 30 paper variants).
        family: "F1".."F7", "M1".."M6", or baseline/control/demographic/shuffle/user.
        variant: the variant label within the family ("a", "25", "age-a", ...).
        name: short human name.
        intent: "D" (destructive) or "P" (preserving); None outside the paper's taxonomy.
        locus: "Str" (structural) or "Sur" (surface); None outside the paper's taxonomy.
        target: what the operator edits: chain, question, options or prompt.
        block: "F", "M", or the family group for non-paper operators.
        description: one paragraph, including any reconstruction of the paper's text.
        example_input: the worked example shown by `paw operators`.
        example_options: answer options for the example (option shuffle only).
        example_gold: gold letter for the example (option shuffle only).
        source: where the operator was defined ('builtin', a rules file, an entry point).
        params: the settings `apply(params=...)` reads; any other key is refused (a
            misspelt setting would otherwise be ignored silently). None: not declared
            (user-defined operators), every key is passed through.
    """

    id: str
    family: str
    variant: str
    name: str
    intent: str | None
    locus: str | None
    target: str
    block: str
    description: str
    example_input: str
    fn: EditFn = field(repr=False, compare=False)
    example_options: dict[str, str] | None = None
    example_gold: str | None = None
    source: str = "builtin"
    params: tuple[str, ...] | None = None

    def apply(
        self,
        text: str,
        *,
        seed: int = 0,
        item_key: str = "",
        options: dict[str, str] | None = None,
        gold: str | None = None,
        tokenizer: Tokenizer | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> PerturbResult:
        """Apply the operator to `text`.

        Args:
            text: the question stem (M-block, baselines) or the chain with its final
                answer stripped (F-block; see `strip_final_answer`).
            seed: audit seed; with `item_key` and the operator id it fixes every draw.
            item_key: stable key of the item.
            options: answer options (letter -> text), for option shuffle and controls.
            gold: gold letter, remapped by option shuffle.
            tokenizer: measures `token_change_fraction` (WordTokenizer when None).
            params: operator-specific settings (e.g. `target_fraction` for the
                token-adjusted paraphrase, `sentence` for the fixed-sentence baseline).

        Returns:
            A `PerturbResult`; `fired` is True exactly when the output changed.

        Raises:
            UserError: a key of `params` the operator does not read.
        """
        if params and self.params is not None:
            unknown = sorted(set(params) - set(self.params))
            if unknown:
                takes = ", ".join(self.params) or "no settings"
                raise UserError(f"params: {self.id} has no setting {unknown[0]!r} (it takes "
                                f"{takes})")
        ctx = Context(
            rng=seeded_rng(seed, item_key, self.id),
            seed=seed,
            item_key=item_key,
            options=dict(options) if options is not None else None,
            gold=gold,
            tokenizer=tokenizer,
            params=dict(params or {}),
        )
        try:
            edit = self.fn(text, ctx)
        except Exception as exc:
            # The built-in operators are total over any text (property tests show it), so
            # a raise there is a bug to see. A user's or plugin's operator that raises on
            # a model's odd text must not abort an audit: it did not apply, and says why.
            # A user's pattern stopped by its time limit stops the command (`stops_run`,
            # workbench.perturb.user): counted as "did not fire" it would change the rates.
            if self.source == "builtin" or getattr(exc, "stops_run", False):
                raise
            edit = Edit.not_fired(f"operator raised {type(exc).__name__}: {exc}"[:300])
        # The option shuffle edits the options and returns the stem as is; every other
        # operator is judged on its text alone.
        if self.target == "options":
            changed = edit.text is not None and edit.options is not None and edit.options != options
        else:
            changed = edit.text is not None and edit.text != text
        if not changed:
            reason = edit.reason or "edit left the text unchanged"
            return PerturbResult(self.id, False, None, None, None, reason, details=edit.details)
        assert edit.text is not None
        fraction = edit.fraction
        if fraction is None:
            fraction = token_change_fraction(text, edit.text, tokenizer)
        return PerturbResult(
            operator_id=self.id,
            fired=True,
            text=edit.text,
            old=edit.old,
            new=edit.new,
            reason=None,
            options=edit.options,
            gold=edit.gold,
            token_change_fraction=round(fraction, 6),
            details=edit.details,
        )
