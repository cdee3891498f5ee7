"""prefixlint: keep prompt prefixes stable so that prefix caches hit.

The public API (everything else is private)::

    import prefixlint
    prefixlint.check_source("Today is {{ current_date }}.\n", "system.j2")
    prefixlint.check_paths(["prompts/"])
    prefixlint.fix_source(text, "system.txt")
    prefixlint.stable_prefix(render_a, render_b).shared_tokens
    prefixlint.audit(["requests.jsonl"], caches=["vllm", "anthropic"])

Names are resolved on first use, so ``import prefixlint`` stays cheap (the pytest plugin
imports it in every test run).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

__all__ = [
    "Applicability",
    "Diagnostic",
    "Divergence",
    "Edit",
    "Finding",
    "Fix",
    "Settings",
    "Severity",
    "Span",
    "__version__",
    "audit",
    "check_paths",
    "check_source",
    "fix_source",
    "get_tokenizer",
    "stable_prefix",
]

_HOME = {
    "Applicability": "prefixlint.types",
    "Diagnostic": "prefixlint.types",
    "Edit": "prefixlint.types",
    "Finding": "prefixlint.types",
    "Fix": "prefixlint.types",
    "Severity": "prefixlint.types",
    "Span": "prefixlint.types",
    "Divergence": "prefixlint.tokenview",
    "Settings": "prefixlint.linting.config",
    "get_tokenizer": "prefixlint.tokenizers",
    "audit": "prefixlint.api",
    "check_paths": "prefixlint.api",
    "check_source": "prefixlint.api",
    "fix_source": "prefixlint.api",
    "stable_prefix": "prefixlint.api",
}

if TYPE_CHECKING:
    from prefixlint.api import audit, check_paths, check_source, fix_source, stable_prefix
    from prefixlint.linting.config import Settings
    from prefixlint.tokenizers import get_tokenizer
    from prefixlint.tokenview import Divergence
    from prefixlint.types import Applicability, Diagnostic, Edit, Finding, Fix, Severity, Span


def __getattr__(name: str) -> object:
    if name not in _HOME:
        raise AttributeError(f"module 'prefixlint' has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOME[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
