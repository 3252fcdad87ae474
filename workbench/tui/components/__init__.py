"""Modal screens: one per file (alternative-letter prompt, note input, error)."""
