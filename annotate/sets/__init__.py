"""Annotation sets: the seeded draws of seed 002 and seed 003, a set's two named raters,
the blinded view of one case, and each rater's order of the cases."""
