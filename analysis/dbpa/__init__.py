"""Seed 001 (DBPA): the permutation test on embedded outputs (`statistics`) and the report
(`report`: sensitivity table first, then the case studies)."""
