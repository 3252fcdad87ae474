"""Chain-update × answer-flip joint table (seed 002 Appendix C) and the Chain-Decoupling Rate.

Over usable destructive M2/M4/M5 edits, each edit falls in one cell: (a) chain updates, answer
kept; (b) updates, flips; (c) no update, kept — decoupling, CDR; (d) no update, flips. The
chain update is decided by the token rule (`definitions.chain_updated`) or by a stored
LLM-judge verdict (`judgements.kind = 'chain_registration'`, method 'llm_judge:…').
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from analysis.audit import definitions as d
from analysis.audit.arm import ArmContext, Stat, usable

if TYPE_CHECKING:
    import pandas as pd

CELLS: tuple[str, ...] = ("a", "b", "c", "d")
"""Cell names: a = update/keep, b = update/flip, c = no update/keep (CDR), d = no update/flip."""

CELL_TITLES: dict[str, str] = {
    "a": "(a) upd, keep", "b": "(b) upd, flip", "c": "(c) no upd, keep", "d": "(d) no upd, flip",
}
"""Column headings of Table 6."""

TOKEN_RULE = "token"
"""Name of the lexical chain-update rule (the judge methods are named by their method)."""


@dataclass(frozen=True)
class JointTable:
    """One arm's joint distribution under one chain-update rule.

    Attributes:
        rule: 'token' or a judge method ('llm_judge:…').
        counts: edits per cell.
        shares: row share per cell with replicates (cell c is CDR).
        n: edits classified.
        n_unscored: usable joint-family edits the rule could not score (no `new` token, or
            no judge verdict), left out of `n`.
    """

    rule: str
    counts: dict[str, int]
    shares: dict[str, Stat]
    n: int
    n_unscored: int

    @property
    def cdr(self) -> Stat:
        """The Chain-Decoupling Rate: the share of cell (c)."""
        return self.shares["c"]


def joint_edits(obs: pd.DataFrame, ctx: ArmContext | None = None) -> pd.DataFrame:
    """Usable destructive M2/M4/M5 edits with their token-rule chain update (None = unscored).

    With the arm's `ctx`, computed once per frame (the token rule reads every chain)."""
    if ctx is not None:
        return ctx.cached("joint_edits", obs, lambda: joint_edits(obs))
    rows = usable(obs, (d.AuditRole.M_BLOCK,))
    rows = rows[rows["family"].isin(d.JOINT_FAMILIES) & (rows["intent"] == "D")].copy()
    rows["update_token"] = [d.chain_updated(family, output, new) for family, output, new
                            in zip(rows["family"], rows["output"], rows["new"], strict=True)]
    return rows


def cell_of(update: bool, flip: bool) -> str:
    """The joint-table cell of one edit."""
    if update:
        return "b" if flip else "a"
    return "d" if flip else "c"


def joint_table(ctx: ArmContext, edits: pd.DataFrame, update: pd.Series, rule: str) -> JointTable:
    """Classify `edits` by (`update`, flip) and estimate the row shares with CIs.

    Args:
        ctx: the arm's resampling frame.
        edits: rows of `joint_edits` for this arm.
        update: chain update per row (True/False; anything else = unscored, left out).
        rule: name of the update rule, for display.
    """
    scored_mask = np.array([isinstance(u, (bool, np.bool_)) for u in update], dtype=bool)
    scored = edits[scored_mask]
    updates = update[scored_mask].astype(bool).to_numpy()
    flips = scored["flip"].to_numpy(dtype=float) > 0.5
    cells = np.array([cell_of(u, f) for u, f in zip(updates, flips, strict=True)], dtype=object)
    counts = {cell: int((cells == cell).sum()) for cell in CELLS}
    shares = {cell: ctx.ratio(scored["item_id"], (cells == cell).astype(float))
              for cell in CELLS}
    return JointTable(rule, counts, shares, int(len(scored)), int((~scored_mask).sum()))


def token_table(ctx: ArmContext, obs: pd.DataFrame) -> JointTable:
    """The joint table under the lexical token rule (Appendix C)."""
    edits = joint_edits(obs, ctx)
    return joint_table(ctx, edits, edits["update_token"], TOKEN_RULE)


def judge_tables(ctx: ArmContext, obs: pd.DataFrame,
                 judgements: pd.DataFrame) -> dict[str, JointTable]:
    """One joint table per LLM-judge method that judged any of the arm's joint edits.

    A verdict 'yes' means the chain registers the edit, 'no' that it does not; edits without
    a verdict from that method (or another verdict) are left out and counted as unscored.
    """
    edits = joint_edits(obs, ctx)
    tables: dict[str, JointTable] = {}
    if edits.empty or judgements.empty:
        return tables
    relevant = judgements[judgements["generation_id"].isin(edits["generation_id"])]
    for method, verdicts in relevant.groupby("method", sort=True):
        by_generation = verdicts.drop_duplicates("generation_id", keep="last").set_index(
            "generation_id")["verdict"].str.strip().str.lower()
        mapped = edits["generation_id"].map(by_generation).map({"yes": True, "no": False})
        update = mapped.astype(object).where(mapped.notna(), None)
        tables[str(method)] = joint_table(ctx, edits, update, str(method))
    return tables
