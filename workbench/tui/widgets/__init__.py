"""Widgets: one per file (question diff, options, answers, labels, agreement tables)."""
