"""Analysis: metric definitions, metrics with bootstrap CIs, the paper's tables, reports."""

from analysis.report import Section

__all__ = ["Section"]
