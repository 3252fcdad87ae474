"""Seed 002 (*Right Diagnoses, Decorative Reasoning*): the perturbation audit's statistics.

`definitions` (the paper's constants and formulas, the two AFR readings), `frames` (one
stored audit as DataFrames), `arm` and `metrics` (§4 metrics with bootstrap CIs, exact where
the counts are whole), `joint` (Appendix C), `tables` (Tables 3, 4, 6, 7, 8, 11) with
`columns` (value/CI/n columns, the paper's bold and marks) and `joint_tables` (Tables 6
and 7 with their Panel rows), `report`, `panel` / `panel_tables` / `panel_overview` /
`panel_report` (models × datasets, §6), `tiers` (§6.2 tier means, Figure 4's data),
`appendix_g` (robustness analyses, Table 9), `appendix_h` (out-of-domain ΔFCS), `plots`
(Figures 2a, 2b, 4).
"""
