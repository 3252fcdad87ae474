"""Option shuffle (seed 002 Appendix D): one fixed permutation of the answer options per item."""

from __future__ import annotations

from workbench.perturb.base import Context, Edit
from workbench.perturb.tokenize import token_change_fraction


def render_options(options: dict[str, str]) -> str:
    """Options as the lines a prompt shows ("A. text"), for measuring token change."""
    return "\n".join(f"{letter}. {text}" for letter, text in options.items())


def option_shuffle(stem: str, ctx: Context) -> Edit:
    """Permute the option texts over the same letters; remap the gold letter.

    The permutation is drawn uniformly among the non-identity permutations (the
    identity would be a trivially consistent sample, which the paper records as not
    fired); it is a permutation, so some options, the gold among them, may stay put.
    The stem is returned unchanged; `fired` means the options changed.
    """
    options = ctx.options
    if not options or len(options) < 2:
        return Edit.not_fired("fewer than two answer options")
    letters = list(options)
    texts = list(options.values())
    if len(set(texts)) < 2:
        return Edit.not_fired("all options have the same text")
    order = list(range(len(letters)))
    identity = list(order)
    while order == identity:  # redraw with the same seeded RNG: still deterministic
        ctx.rng.shuffle(order)
    shuffled = {letter: texts[source] for letter, source in zip(letters, order, strict=True)}
    moved_from = {letter: letters[source] for letter, source in zip(letters, order, strict=True)}
    gold = None
    if ctx.gold in options:
        gold = next(letter for letter, source in moved_from.items() if source == ctx.gold)
    return Edit(
        text=stem,
        old=ctx.gold,
        new=gold,
        options=shuffled,
        gold=gold,
        fraction=token_change_fraction(
            render_options(options), render_options(shuffled), ctx.tokenizer
        ),
        details={"moved_from": moved_from, "gold_moved": gold is not None and gold != ctx.gold},
    )
