"""Analysis: the statistics and reports of the four papers, one package per paper.

- `analysis.common` — paper-agnostic pieces every paper uses: the item bootstrap, the
  report as data (`document`) and its rendering, the word diff of an edit.
- One package per paper, named as `workbench/` names it, each with the same shape where it
  applies (`definitions` — the paper's constants and formulas; its statistics; `report`;
  `plots`): `audit` (seed 002), `counterfactual` (seed 000), `dbpa` (seed 001),
  `robustness` (seed 003). The papers import `common`, never each other.
- Views across papers, above them: `flips` (the flip list, one case, the derived
  `flip_index`), `exports` (`paw export`'s frames) and `reports` (which report a stored
  run gets, by kind).

Imports only `store` (the layering contract in pyproject.toml). pandas, numpy and
matplotlib are imported by the functions that need them, so importing `analysis` stays
cheap. The layout is described in docs/design.md.
"""
