"""A rater's own file: packing one set's blinded cases for one rater, labelling it offline
with the same guarantees as the shared store, and merging it back (coordinator)."""
