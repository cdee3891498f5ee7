"""The audit for people: summaries per cache model, misses by cause with examples, what-if."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from prefixlint.auditing.advice import log_span_seconds
from prefixlint.auditing.describe import (
    cause_label,
    dollars,
    duration,
    headline,
    percent,
    tokens_count,
)
from prefixlint.auditing.engine_metrics import print_check
from prefixlint.auditing.report_breakpoints import print_breakpoints
from prefixlint.auditing.report_planning import print_planning
from prefixlint.auditing.results import AuditReport
from prefixlint.plural import counted


def print_report(report: AuditReport, console: Console, *, list_skipped: bool = False) -> None:
    files = ", ".join(report.files)
    skipped = len(report.skipped)
    console.print(
        f"[bold]prefixlint audit[/] {files}: {counted(report.lines_read, 'line')}, "
        f"{counted(report.lines_read - skipped, 'request')}, {skipped:,} skipped",
        soft_wrap=True,
    )
    console.print(_summary_table(report))
    print_check(report.engine_check, console)
    _print_fix_first(report, console)
    for model in report.cache_models:
        _print_causes(report, model, console)
        _print_sources(report, model, console)
        _print_groups(report, model, console)
        _print_usage(report, model, console)
    _print_what_if(report, console)
    print_breakpoints(report.cache_control, console)
    print_planning(report, console)
    _print_assumptions(report, console)
    if list_skipped and report.skipped:
        console.print("[bold]Skipped lines[/]")
        for entry in report.skipped:
            console.print(Text(f"  {entry.file}:{entry.line}: {entry.reason}"), soft_wrap=True)
        if report.skipped.truncated:
            console.print(f"  ... and {skipped - len(report.skipped.sample):,} more, by reason:")
            for kind, count in report.skipped.by_reason.items():
                console.print(Text(f"  {count:>10,}  {kind}"), soft_wrap=True)
    elif skipped:
        console.print(f"{skipped} malformed or unusable lines skipped (list them with --skipped)")


def _print_fix_first(report: AuditReport, console: Console) -> None:
    """The fixes of the first cache model, most prefill saved first, in per-day units."""
    model = report.cache_models[0]
    rows = [
        row for row in report.fix_first if row.model_cache == model and row.prefill_tokens_saved > 0
    ]
    if not rows:
        return
    span = log_span_seconds(report)
    rate = f"per day at the rate of its {duration(span)} of requests" if span else "no timestamps"
    table = Table(title=f"Fix first ({model}; {rate})", title_justify="left")
    table.add_column("fix")
    table.add_column("hit rate")
    for column in ("prefill saved", "per day", "TTFT saved", "saved", "per day"):
        table.add_column(column, justify="right")
    for row in rows:
        ttft = "-" if row.ttft_saved_ms is None else f"{row.ttft_saved_ms:,.1f} ms"
        table.add_row(
            f"{row.fix} ({', '.join(c for c in row.codes if c in report.by_cause(model))})",
            f"{percent(row.hit_rate_before)} -> {percent(row.hit_rate_after)}",
            f"{row.prefill_tokens_saved:,}",
            tokens_count(row.prefill_tokens_per_day),
            ttft,
            dollars(row.usd_saved),
            dollars(row.usd_per_day),
        )
    console.print(table)
    console.print(Text(f"  money: {rows[0].basis}", style="dim"), soft_wrap=True)
    if rows[0].ttft_saved_ms is None:
        console.print(
            Text("  TTFT: give --prefill-tokens-per-second (the deployment's)", style="dim")
        )


def _print_assumptions(report: AuditReport, console: Console) -> None:
    for model, assumed in report.assumptions.items():
        console.print(
            Text(f"Assumptions ({model}): " + "; ".join(f"{k}: {v}" for k, v in assumed.items())),
            soft_wrap=True,
            style="dim",
        )


def _summary_table(report: AuditReport) -> Table:
    table = Table(title="Prefix cache per model", title_justify="left")
    for column in ("cache model", "requests", "prompt tokens", "cached tokens", "hit rate"):
        table.add_column(column, justify="left" if column == "cache model" else "right")
    table.add_column("cost", justify="right")
    for model in report.cache_models:
        totals = report.totals(model)
        table.add_row(
            model,
            f"{totals.requests:,}",
            f"{totals.prompt_tokens:,}",
            f"{totals.cached_tokens:,}",
            percent(totals.hit_rate),
            dollars(totals.cost_usd),
        )
    return table


def _print_causes(report: AuditReport, model: str, console: Console) -> None:
    causes = report.by_cause(model)
    if not causes:
        return
    table = Table(title=f"Uncached tokens by cause ({model})", title_justify="left")
    table.add_column("cause")
    table.add_column("requests", justify="right")
    table.add_column("uncached tokens", justify="right")
    table.add_column("tokens lost", justify="right")
    for cause, entry in causes.items():
        table.add_row(
            cause_label(cause),
            f"{entry.requests:,}",
            f"{entry.uncached_tokens:,}",
            f"{entry.cost_tokens:,}",
        )
    console.print(table)
    for cause in causes:
        # One example per cause here; the JSON report keeps a few more.
        for example in report.examples.get((model, cause), ())[:1]:
            where = f"{example.file}:{example.line} {example.component or ''}".rstrip()
            since = f" (vs line {example.predecessor_line})" if example.predecessor_line else ""
            console.print(Text(f"  {cause} at {where}, token {example.token}{since}"))
            if example.before or example.after:
                console.print(Text(f"    was: {example.before}", style="dim"), soft_wrap=True)
                console.print(Text(f"    now: {example.after}"), soft_wrap=True)


def _print_sources(report: AuditReport, model: str, console: Console) -> None:
    lines = report.by_source(model)
    if not lines:
        return
    table = Table(title=f"Misses by source line ({model})", title_justify="left")
    for column in ("source", "code", "requests", "tokens lost"):
        table.add_column(
            column, justify="right" if column in ("requests", "tokens lost") else "left"
        )
    for (path, line, code), entry in lines.items():
        table.add_row(f"{path}:{line}", code, f"{entry.requests:,}", f"{entry.cost_tokens:,}")
    console.print(table)
    console.print("  `prefixlint rule CODE` explains each code and its fix.")


def _print_groups(report: AuditReport, model: str, console: Console) -> None:
    groups = report.by_group(model)
    if not any(record.group is not None for record in report.records_for(model)):
        return
    table = Table(title=f"By {report.group_by} ({model})", title_justify="left")
    table.add_column(report.group_by or "group")
    for column in ("requests", "prompt tokens", "hit rate", "tokens lost"):
        table.add_column(column, justify="right")
    table.add_column("costliest cause")
    for group in groups:
        table.add_row(
            group.name,
            f"{group.totals.requests:,}",
            f"{group.totals.prompt_tokens:,}",
            percent(group.totals.hit_rate),
            f"{group.cost_tokens:,}",
            group.top_cause or "-",
        )
    console.print(table)


def _print_usage(report: AuditReport, model: str, console: Console) -> None:
    usage = report.usage(model)
    if not usage.requests:
        return
    console.print(
        f"Provider-reported cache use ({model}): {counted(usage.requests, 'request')} report "
        "cached "
        f"tokens: observed {usage.observed_cached:,}, predicted {usage.predicted_cached:,} "
        f"of {usage.prompt_tokens:,} prompt tokens",
        soft_wrap=True,
    )


def _print_what_if(report: AuditReport, console: Console) -> None:
    for model in report.cache_models:
        entries = [w for w in report.what_if if w.model_cache == model]
        if not entries:
            continue
        found = report.by_cause(model)
        table = Table(title=f"What if the application fixed ... ({model})", title_justify="left")
        for column in ("fix", "causes", "hit rate", "gain", "prefill saved", "saved"):
            table.add_column(
                column, justify="right" if column in ("gain", "prefill saved") else "left"
            )
        for entry in entries:
            causes = [code for code in entry.codes if code in found]
            table.add_row(
                entry.fix,
                "all of them" if entry.fix == "all" else ", ".join(causes) or "-",
                f"{percent(entry.base.hit_rate)} -> {percent(entry.fixed.hit_rate)}",
                f"{entry.gain * 100:+.1f} pts",
                f"{entry.prefill_saved:,}",
                dollars(entry.cost_saved),
            )
        console.print(table)
        best = next((w for w in entries if w.fix != "all" and w.gain > 0), None)
        if best is not None:
            console.print(headline(best, found), soft_wrap=True)
