"""Re-simulate the log as each fix would have sent it, in the same pass, and rank the fixes.

Every canonicaliser (:mod:`prefixlint.audit.canonical`) gets its own fresh instance of every
selected cache model; each request is rewritten, rendered (the renderer's segment memo makes
the mostly unchanged text cheap) and fed to them. The ranking compares hit rate, prefill
tokens and cost with the audit of the log as logged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from prefixlint.audit.canonical import canonicalisers
from prefixlint.audit.prices import Price
from prefixlint.audit.results import AuditReport, Totals, WhatIf
from prefixlint.cache.base import CacheResult
from prefixlint.chat import TemplateError
from prefixlint.request import ChatRequest, Rendered

if TYPE_CHECKING:
    from prefixlint.audit.pipeline import AuditOptions


class WhatIfRunner:
    def __init__(self, options: AuditOptions, render: Callable[[ChatRequest], Rendered]) -> None:
        from prefixlint.audit.pipeline import build_query, new_cache_model

        self.build_query = build_query
        self.render = render
        self.fixes = canonicalisers()
        self.models = [
            {name: new_cache_model(name, options) for name in options.caches} for _ in self.fixes
        ]
        self.totals = [{name: Totals() for name in options.caches} for _ in self.fixes]

    def feed(
        self,
        request: ChatRequest,
        conversation: int,
        logged: Mapping[str, CacheResult],
        price: Price | None,
    ) -> None:
        """Rewrite ``request`` for every fix and feed the rewrites to that fix's models.

        A rewrite that cannot be rendered counts as the request as logged.
        """
        for fix, models, totals in zip(self.fixes, self.models, self.totals, strict=True):
            try:
                query = self.build_query(request, self.render(fix.rewrite(request, conversation)))
            except TemplateError:
                query = None
            for name, model in models.items():
                result = logged[name] if query is None else model.process(query)
                cost = None
                if price is not None:
                    cost = price.cost(
                        result.prompt_tokens, result.cached_tokens, result.cache_write_tokens
                    )
                totals[name].add(
                    result.prompt_tokens, result.cached_tokens, result.cache_write_tokens, cost
                )

    def results(self, report: AuditReport) -> list[WhatIf]:
        """Per cache model, the fixes ranked by hit-rate gain, then prefill tokens saved."""
        ranked = []
        for name in report.cache_models:
            base = report.totals(name)
            entries = [
                WhatIf(fix.family, fix.codes, name, base, totals[name])
                for fix, totals in zip(self.fixes, self.totals, strict=True)
            ]
            entries.sort(key=lambda w: (-w.gain, -w.prefill_saved, w.fix))
            ranked.extend(entries)
        return ranked
