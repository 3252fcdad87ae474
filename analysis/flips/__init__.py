"""The flipped edits across papers: `index` (the derived `flip_index` table and the per-edit
rule), `listing` (filters and pages of the flip list), `case` (one case, side by side)."""
