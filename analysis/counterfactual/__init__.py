"""Seed 000 (counterfactual prompting against baselines): divergences, tests, regression, power.

`definitions` (the paper's constants and per-sample/aggregate measures), `statistics` (the
paired t-test and bootstrap, corrections, the comparison of one target), `regression`
(difference and level models), `data` (a stored study as arrays), `report`, `power`
(Appendix F).
"""
