"""Re-simulate the log as each fix would have sent it, and rank the fixes.

Every canonicaliser (:mod:`prefixlint.auditing.canonical`) gets its own :class:`Simulation`:
a fresh instance of every selected cache model (except the offline ``belady``) to which each
request is fed as the fix rewrites it. The ranking compares hit rate, prefill tokens and cost
with the audit of the log as logged. When each simulation runs is
:mod:`prefixlint.auditing.whatif_schedule`'s job.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from prefixlint.auditing.canonical import Canonicaliser
from prefixlint.auditing.options import AuditOptions, new_cache_model
from prefixlint.auditing.prices import GpuTimePrice, Price
from prefixlint.auditing.rendering import SHAPE_ERRORS
from prefixlint.auditing.results import AuditReport, Totals, WhatIf
from prefixlint.cache.query import build_query
from prefixlint.chat import TemplateError
from prefixlint.request import ChatRequest, Rendered

# Models that need every query up front (belady) are left out of the re-simulation.
OFFLINE_MODELS = frozenset({"belady"})


class Simulation:
    """One fix's re-simulation: its canonicaliser, its own cache models, their totals."""

    def __init__(
        self,
        fix: Canonicaliser,
        options: AuditOptions,
        render: Callable[[ChatRequest], Rendered],
    ) -> None:
        self.fix = fix
        self.render = render
        self.lora_modules = options.lora_modules
        names = [name for name in options.caches if name not in OFFLINE_MODELS]
        self.models = {name: new_cache_model(name, options) for name in names}
        self.totals = {name: Totals() for name in names}

    def feed(
        self,
        request: ChatRequest,
        conversation: int,
        logged: Mapping[str, tuple[int, int, int]],
        prices: Mapping[str, Price | GpuTimePrice | None],
    ) -> None:
        """Rewrite ``request`` and feed the rewrite to this fix's models.

        ``logged`` holds each model's ``(prompt, cached, written)`` tokens for the request as
        logged, and ``prices`` its price (see ``Auditor.prices_for``); a rewrite that cannot
        be rendered counts as logged.
        """
        try:
            rewritten = self.fix.rewrite(request, conversation)
            query = build_query(rewritten, self.render(rewritten), self.lora_modules)
        except (TemplateError, *SHAPE_ERRORS):
            query = None
        for name, model in self.models.items():
            if query is None:
                prompt, cached, written = logged[name]
            else:
                result = model.process(query)
                prompt, cached = result.prompt_tokens, result.cached_tokens
                written = result.cache_write_tokens
            price = prices[name]
            cost = None if price is None else price.cost(prompt, cached, written)
            self.totals[name].add(prompt, cached, written, cost)


def ranked(simulations: Sequence[Simulation], report: AuditReport) -> list[WhatIf]:
    """Per cache model, the fixes ranked by hit-rate gain, then prefill tokens saved."""
    entries = []
    for name in report.cache_models:
        if name in OFFLINE_MODELS:
            continue
        base = report.totals(name)
        model_entries = [
            WhatIf(s.fix.family, s.fix.codes, name, base, s.totals[name]) for s in simulations
        ]
        model_entries.sort(key=lambda w: (-w.gain, -w.prefill_saved, w.fix))
        entries.extend(model_entries)
    return entries
