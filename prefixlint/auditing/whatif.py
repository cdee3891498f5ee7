"""Re-simulate the log as each fix would have sent it, and rank the fixes.

Every canonicaliser (:mod:`prefixlint.auditing.canonical`) gets its own fresh instance of every
selected cache model (except the offline ``belady``); each request is rewritten, rendered
(the renderer's segment memo makes the mostly unchanged text cheap) and fed to them. The
ranking compares hit rate, prefill tokens and cost with the audit of the log as logged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from prefixlint.auditing.canonical import Canonicaliser
from prefixlint.auditing.options import AuditOptions, new_cache_model
from prefixlint.auditing.prices import GpuTimePrice, Price
from prefixlint.auditing.results import AuditReport, Totals, WhatIf
from prefixlint.cache.query import build_query
from prefixlint.chat import TemplateError
from prefixlint.request import ChatRequest, Rendered

# Models that need every query up front (belady) are left out of the re-simulation.
OFFLINE_MODELS = frozenset({"belady"})


class WhatIfRunner:
    def __init__(
        self,
        options: AuditOptions,
        render: Callable[[ChatRequest], Rendered],
        fixes: Sequence[Canonicaliser],
    ) -> None:
        self.render = render
        self.lora_modules = options.lora_modules
        self.fixes = list(fixes)
        names = [name for name in options.caches if name not in OFFLINE_MODELS]
        self.models = [{name: new_cache_model(name, options) for name in names} for _ in fixes]
        self.totals = [{name: Totals() for name in names} for _ in fixes]

    def feed(
        self,
        request: ChatRequest,
        conversation: int,
        logged: Mapping[str, tuple[int, int, int]],
        prices: Mapping[str, Price | GpuTimePrice | None],
    ) -> None:
        """Rewrite ``request`` for every fix and feed the rewrites to that fix's models.

        ``logged`` holds each model's ``(prompt, cached, written)`` tokens for the request as
        logged, and ``prices`` its price (see ``Auditor.prices_for``); a rewrite that cannot
        be rendered counts as logged.
        """
        for fix, models, totals in zip(self.fixes, self.models, self.totals, strict=True):
            try:
                rewritten = fix.rewrite(request, conversation)
                query = build_query(rewritten, self.render(rewritten), self.lora_modules)
            except TemplateError:
                query = None
            for name, model in models.items():
                if query is None:
                    prompt, cached, written = logged[name]
                else:
                    result = model.process(query)
                    prompt, cached = result.prompt_tokens, result.cached_tokens
                    written = result.cache_write_tokens
                price = prices[name]
                cost = None if price is None else price.cost(prompt, cached, written)
                totals[name].add(prompt, cached, written, cost)

    def results(self, report: AuditReport) -> list[WhatIf]:
        """Per cache model, the fixes ranked by hit-rate gain, then prefill tokens saved."""
        ranked = []
        for name in report.cache_models:
            if name in OFFLINE_MODELS:
                continue
            base = report.totals(name)
            entries = [
                WhatIf(fix.family, fix.codes, name, base, totals[name])
                for fix, totals in zip(self.fixes, self.totals, strict=True)
            ]
            entries.sort(key=lambda w: (-w.gain, -w.prefill_saved, w.fix))
            ranked.extend(entries)
        return ranked
