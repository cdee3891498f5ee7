"""The what-if simulations ride along the audit (started as causes are found, caught up on
the requests before, or deferred to one more pass) and give what one separate pass after the
audit gives, each rewrite rendered whole by a renderer of its own."""

import io
import sys
from pathlib import Path

import pytest
from audit_logs import breaker, log_line, plan

from prefixlint.auditing import AuditOptions, run_audit
from prefixlint.auditing.canonical import FAMILIES, canonicalisers
from prefixlint.auditing.pipeline import AUDITING, WHAT_IF, Auditor, _prepared
from prefixlint.auditing.whatif import Simulation, ranked
from prefixlint.auditing.whatif_schedule import audited
from prefixlint.chat import Renderer
from prefixlint.request import ChatRequest, Rendered

LOGS = Path(__file__).resolve().parent.parent / "fixtures" / "logs"
CACHES = ("vllm", "sglang", "openai", "anthropic", "llamacpp")
# One breaker per fix family, each first found a few requests into its log.
BREAKER_OF_FAMILY = {
    "volatile": "insert-datetime-later",
    "order": "tool-order",
    "whitespace": "trailing-spaces",
    "history": "edited-history",
    "params": "model-switch",
}


def separate_pass(files, options, everything=False):
    """The audit, then one more pass over the logs for the fixes of the causes it found
    (``everything``: every fix), every rewrite rendered by a fresh renderer."""
    auditor = Auditor(options, files)
    queries = [prepared.query for _, _, prepared in _prepared(auditor, files)]
    for model in auditor.models.values():
        if hasattr(model, "prepare"):  # offline (belady): every query up front
            model.prepare(queries)
    for _, file, prepared in _prepared(auditor, files):
        auditor.feed_or_skip(file, prepared)
    renderer = Renderer(options.template, options.tokenizer, engine=options.engine)
    found = {record.cause for record in auditor.report.records if record.cause}
    fixes = canonicalisers(None if everything else found)
    simulations = [Simulation(fix, options, renderer.render) for fix in fixes]
    for fed in audited(auditor, files, None):
        for simulation in simulations:
            simulation.feed(*fed)
    return ranked(simulations, auditor.report)


def single_breaker_log(tmp_path, name, fmt):
    planned = plan(7, 6, breakers=(breaker(name),), fmt=fmt)
    path = tmp_path / f"{name}-{fmt}.jsonl"
    path.write_text("\n".join(log_line(p, fmt) for p in planned) + "\n", encoding="utf-8")
    return str(path)


def test_every_family_has_a_breaker():
    assert set(BREAKER_OF_FAMILY) == {family.family for family in FAMILIES}


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
@pytest.mark.parametrize("family", sorted(BREAKER_OF_FAMILY))
def test_a_fix_started_where_its_cause_is_found_equals_a_separate_pass(tmp_path, family, fmt):
    path = single_breaker_log(tmp_path, BREAKER_OF_FAMILY[family], fmt)
    options = AuditOptions(caches=CACHES)
    phases = []
    report = run_audit([path], options, on_phase=phases.append)
    assert family in {entry.fix for entry in report.what_if}
    assert report.what_if == separate_pass([path], options)
    assert phases == [AUDITING]  # caught up: no pass after the audit


@pytest.mark.parametrize(
    ("logs", "caches"),
    [
        (("tau_openai_breakers.jsonl",), CACHES),
        (("tau_anthropic_breakers.jsonl",), CACHES),
        (("tau_openai_breakers.jsonl",), ("vllm", "belady")),
        (("otel_spans.jsonl",), CACHES),
        (("malformed.jsonl",), ("vllm",)),
        (("tau_openai_clean.jsonl",), CACHES),
        # Several files as one stream, one of them a trace of block hashes without text.
        (("mooncake_conversation_excerpt.jsonl", "tau_openai_breakers.jsonl"), ("vllm",)),
        (("tau_openai_clean.jsonl", "tau_anthropic_breakers.jsonl"), ("vllm", "openai")),
    ],
)
def test_logs_with_many_causes_equal_a_separate_pass(logs, caches):
    files = [str(LOGS / log) for log in logs]
    options = AuditOptions(caches=caches)
    report = run_audit(files, options)
    assert report.what_if == separate_pass(files, options)


def test_causes_found_late_are_simulated_in_one_more_pass():
    """The breakers log finds its last families after catch-ups have replayed more requests
    than a new one would: those are simulated after the audit, once, over every line."""
    path = str(LOGS / "tau_openai_breakers.jsonl")
    phases, lines = [], []

    def on_phase(name):
        phases.append(name)
        lines.append(0)

    def on_line():
        lines[-1] += 1

    report = run_audit([path], AuditOptions(caches=("vllm",)), on_phase=on_phase, on_line=on_line)
    assert phases == [AUDITING, WHAT_IF]
    assert lines == [len(Path(path).read_bytes().splitlines())] * 2
    assert {entry.fix for entry in report.what_if} == {f.family for f in FAMILIES} | {"all"}


def test_standard_input_simulates_every_fix_from_the_start(monkeypatch):
    path = LOGS / "tau_openai_breakers.jsonl"
    options = AuditOptions(caches=("vllm", "openai"))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(path.read_bytes())))
    report = run_audit(["-"], options)
    assert report.what_if == separate_pass([str(path)], options, everything=True)


class Broken(Renderer):
    """A renderer that cannot render the rewrite of one request (a shape it cannot read)."""

    def render(self, request: ChatRequest) -> Rendered:
        if request.line == 5:
            raise TypeError("unreadable")
        return super().render(request)


def test_a_rewrite_that_cannot_be_rendered_counts_as_logged():
    fix = canonicalisers()[0]
    options = AuditOptions(caches=("vllm",))
    simulation = Simulation(fix, options, Broken().render)
    request = ChatRequest(
        line=5, format="openai-chat", messages=({"role": "user", "content": "hi"},)
    )
    simulation.feed(request, 0, {"vllm": (10, 4, 0)}, {"vllm": None})
    totals = simulation.totals["vllm"]
    assert (totals.requests, totals.prompt_tokens, totals.cached_tokens) == (1, 10, 4)
