"""Analysis: seed-002 metric definitions, metrics with bootstrap CIs, the paper's tables, reports.

Imports only `store`. pandas, numpy and matplotlib are imported by the functions that need
them, so importing `analysis` stays cheap.
"""

from analysis.bootstrap import Estimate, resample_weights
from analysis.frames import AuditFrames, load_audit, observations, resolve_audit
from analysis.document import Figure, Report, Section
from analysis.report import audit_sections, build_report
from analysis.reports import BUILDERS, build_run_report
from analysis.tables import TABLE_KEYS, AuditResult, audit_tables, build_tables, compute_audit

__all__ = [
    "BUILDERS",
    "TABLE_KEYS",
    "AuditFrames",
    "AuditResult",
    "Estimate",
    "Figure",
    "Report",
    "Section",
    "audit_sections",
    "audit_tables",
    "build_report",
    "build_run_report",
    "build_tables",
    "compute_audit",
    "load_audit",
    "observations",
    "resample_weights",
    "resolve_audit",
]
