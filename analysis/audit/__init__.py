"""Seed 002 (*Right Diagnoses, Decorative Reasoning*): the perturbation audit's statistics.

`definitions` (the paper's constants and formulas), `frames` (one stored audit as
DataFrames), `arm` and `metrics` (§4 metrics with bootstrap CIs), `joint` (Appendix C),
`tables` (Tables 3, 4, 6, 7, 8, 11), `report`, `panel` / `panel_tables` (models ×
datasets), `appendix_g` (the Appendix G robustness-of-conclusions analyses, Table 9),
`plots` (the FCS plane).
"""
