"""Audit logged requests against prefix-cache models: hit rates, miss causes, what-if fixes.

``run_audit(files, AuditOptions(...))`` returns an :class:`AuditReport`; the ``audit``
command (:mod:`prefixlint.cli.audit`) renders it for people, as JSON or as HTML.
"""

from prefixlint.auditing.options import AuditError, AuditOptions
from prefixlint.auditing.pipeline import run_audit
from prefixlint.auditing.results import AuditReport

__all__ = ["AuditError", "AuditOptions", "AuditReport", "run_audit"]
