"""Seed 003 (counterfactual fragility and demographic robustness): `definitions` (CFV
outcomes, change directions, stereotype categories, EDD), `data` (a stored run as frames),
`profiles` (model profiles with CIs), `report`, `plots` (Figures 5 and 6)."""
