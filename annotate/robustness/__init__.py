"""Seed-003 results from the clinician labels: each robustness set's final labels, the
judge's decisions validated against them, and the clinician-confirmed rates."""
