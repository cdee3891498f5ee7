"""The audit as one self-contained HTML file: inline CSS and SVG plots, no external assets.

Plots: hit rate over the log (per cache model), uncached tokens by cause, what-if gains, and a
prefix-sharing view (per request: tokens served from cache, tokens a cause cost, new tokens),
and, when the audit ran them, the capacity sweep and the routing what-if.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from html import escape

from prefixlint.auditing.describe import cause_label, dollars, headline, percent, tokens_count
from prefixlint.auditing.engine_metrics import check_html
from prefixlint.auditing.report_breakpoints import breakpoints_html
from prefixlint.auditing.report_planning import planning_html
from prefixlint.auditing.results import AuditReport, RequestRecord
from prefixlint.plural import counted

WIDTH = 760
COLORS = ("#2b6cb0", "#c05621", "#2f855a", "#6b46c1", "#b7791f", "#c53030", "#319795")
TIME_BUCKETS = 60
CHAR_PX = 6.6  # the width of one character of 11 px system-ui text, generously
SHARING_ROWS = 80
STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;color:#1a202c;max-width:820px}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #cbd5e0;padding:3px 8px}
td.n{text-align:right}code{background:#edf2f7;padding:1px 3px}svg text{font-size:11px}
.ex{font-family:monospace;font-size:12px;white-space:pre-wrap}
"""


def _svg(height: int, body: list[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}">' + "".join(body) + "</svg>"
    )


def _text(x: float, y: float, text: str, anchor: str = "start") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}">{escape(text)}</text>'


def _bar(x: float, y: float, w: float, h: float, color: str, title: str = "") -> str:
    tip = f"<title>{escape(title)}</title>" if title else ""
    return (
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w, 0):.1f}" height="{h:.1f}" '
        f'fill="{color}">{tip}</rect>'
    )


def hit_rate_plot(report: AuditReport) -> str:
    """Hit rate per slice of the log, one line per cache model, against time when the log has
    timestamps (else against the requests' order)."""
    left, top, plot_w, plot_h = 48, 10, WIDTH - 190, 180
    body = [
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" '
        'stroke="#718096"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="#718096"/>',
    ]
    for tick in (0, 0.25, 0.5, 0.75, 1):
        y = top + plot_h * (1 - tick)
        body.append(_text(left - 4, y + 4, f"{tick:.0%}", "end"))
        if tick:
            body.append(
                f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" '
                'stroke="#e2e8f0"/>'
            )
    body.append(_rotated_text(12, top + plot_h / 2, "hit rate"))
    axis = _time_axis(report)
    for index, model in enumerate(report.cache_models):
        records = list(report.records_for(model))
        if not records:
            continue
        size = max(1, -(-len(records) // TIME_BUCKETS))
        points = []
        for start in range(0, len(records), size):
            chunk = records[start : start + size]
            prompt = sum(r.prompt_tokens for r in chunk)
            rate = sum(r.cached_tokens for r in chunk) / prompt if prompt else 0.0
            x = left + plot_w * axis.position(chunk, start, len(records))
            points.append(f"{x:.1f},{top + plot_h * (1 - rate):.1f}")
        color = COLORS[index % len(COLORS)]
        body.append(
            f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{" ".join(points)}"/>'
        )
        body.append(_bar(left + plot_w + 12, top + 14 * index, 10, 10, color))
        body.append(_text(left + plot_w + 26, top + 14 * index + 9, _fit(model, 150)))
    for fraction, label in axis.ticks:
        x = left + plot_w * fraction
        body.append(
            f'<line x1="{x:.1f}" y1="{top + plot_h}" x2="{x:.1f}" y2="{top + plot_h + 4}" '
            'stroke="#718096"/>'
        )
        body.append(_text(x, top + plot_h + 16, label, "middle"))
    body.append(_text(left + plot_w / 2, top + plot_h + 32, axis.title, "middle"))
    return _svg(top + plot_h + 40, body)


@dataclass(frozen=True)
class _Axis:
    """Where a slice of requests sits along the x axis, and the axis's ticks and title."""

    start: float | None
    span: float
    ticks: list[tuple[float, str]]
    title: str

    def position(self, chunk: list[RequestRecord], first: int, total: int) -> float:
        if self.start is None:
            return (first + len(chunk) / 2) / total
        times = [r.timestamp for r in chunk if r.timestamp is not None]
        middle = (min(times) + max(times)) / 2 if times else self.start
        return (middle - self.start) / self.span if self.span else 0.5


def _time_axis(report: AuditReport) -> _Axis:
    records = list(report.records_for(report.cache_models[0])) if report.cache_models else []
    times = [r.timestamp for r in records if r.timestamp is not None]
    if len(times) < len(records) or not times or max(times) == min(times):
        count = len(records)
        ticks = [(i / 4, f"{round(count * i / 4):,}") for i in range(5)] if count else []
        return _Axis(None, 0.0, ticks, "requests in log order")
    start, span = min(times), max(times) - min(times)
    spec = "%H:%M:%S" if span < 600 else "%H:%M" if span < 2 * 86400 else "%m-%d %H:%M"
    ticks = [
        (i / 4, datetime.fromtimestamp(start + span * i / 4, timezone.utc).strftime(spec))
        for i in range(5)
    ]
    day = datetime.fromtimestamp(start, timezone.utc).strftime("%Y-%m-%d")
    return _Axis(start, span, ticks, f"time (UTC), from {day}")


def ordinal(number: int) -> str:
    """``3`` -> ``3rd``."""
    if 10 <= number % 100 <= 20:
        return f"{number}th"
    return f"{number}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(number % 10, 'th') }"


def _rotated_text(x: float, y: float, text: str) -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 {x:.1f} {y:.1f})">{escape(text)}</text>'
    )


def _fit(text: str, width: float) -> str:
    """``text`` cut with an ellipsis to fit ``width`` pixels of 11 px text."""
    most = max(4, int(width / CHAR_PX))
    return text if len(text) <= most else text[: most - 1] + "…"


def _hbars(rows: list[tuple[str, float, str]], maximum: float, fmt: Callable[[float], str]) -> str:
    """Labelled horizontal bars; the value labels get the room they need on the right."""
    label_w, row_h = 300, 20
    value_w = max((len(fmt(value)) for _, value, _ in rows), default=0) * CHAR_PX + 10
    plot_w = WIDTH - label_w - value_w
    body = []
    for index, (label, value, color) in enumerate(rows):
        y = index * row_h
        width = plot_w * value / maximum if maximum else 0
        tip = f"{label}: {fmt(value)}"
        shown = _text(label_w - 6, y + 14, _fit(label, label_w - 10), "end")
        body.append(f"<g><title>{escape(tip)}</title>{shown}</g>")
        body.append(_bar(label_w, y + 3, width, row_h - 6, color, tip))
        body.append(_text(label_w + width + 4, y + 14, fmt(value)))
    return _svg(max(1, len(rows)) * row_h + 4, body)


def causes_plot(report: AuditReport, model: str) -> str:
    causes = report.by_cause(model)
    rows = [
        (cause, float(entry.uncached_tokens), COLORS[i % len(COLORS)])
        for i, (cause, entry) in enumerate(causes.items())
    ]
    return _hbars(rows, max((r[1] for r in rows), default=0), lambda v: f"{int(v):,} tokens")


def what_if_plot(report: AuditReport, model: str) -> str:
    entries = [w for w in report.what_if if w.model_cache == model]
    rows = []
    if entries:
        rows.append(("as logged", entries[0].base.hit_rate, "#a0aec0"))
    rows += [(w.fix, w.fixed.hit_rate, COLORS[i % len(COLORS)]) for i, w in enumerate(entries)]
    return _hbars(rows, 1.0, percent)


def sharing_sample(records: list[RequestRecord]) -> tuple[list[RequestRecord], int]:
    """The requests the sharing plot shows, every ``step``-th in log order, and the step."""
    step = max(1, -(-len(records) // SHARING_ROWS))
    return records[::step], step


def sharing_plot(report: AuditReport, model: str) -> str:
    """One bar per request: cached (green), lost to a cause (red), the rest (grey)."""
    shown, _step = sharing_sample(list(report.records_for(model)))
    longest = max((r.prompt_tokens for r in shown), default=0)
    label_w, row_h, plot_w = 70, 13, WIDTH - 70 - 170
    body = []
    for index, record in enumerate(shown):
        y = index * row_h
        scale = plot_w / longest if longest else 0
        cached = record.cached_tokens * scale
        lost = min(record.cost_tokens, record.prompt_tokens - record.cached_tokens) * scale
        rest = record.prompt_tokens * scale - cached - lost
        tip = f"line {record.line}: {record.cached_tokens:,}/{record.prompt_tokens:,} cached"
        if record.cause:
            tip += f", {record.cause}"
        body.append(_text(label_w - 4, y + 10, str(record.line), "end"))
        body.append(_bar(label_w, y + 2, cached, row_h - 3, "#38a169", tip))
        body.append(_bar(label_w + cached, y + 2, lost, row_h - 3, "#e53e3e", tip))
        body.append(_bar(label_w + cached + lost, y + 2, rest, row_h - 3, "#cbd5e0", tip))
        if record.cause and record.cause != "first-seen":
            body.append(_text(label_w + cached + lost + rest + 4, y + 10, record.cause))
    return _svg(max(1, len(shown)) * row_h + 4, body)


def _summary_table(report: AuditReport) -> str:
    rows = []
    for model in report.cache_models:
        t = report.totals(model)
        rows.append(
            f"<tr><td>{escape(model)}</td><td class=n>{t.requests:,}</td>"
            f"<td class=n>{t.prompt_tokens:,}</td><td class=n>{t.cached_tokens:,}</td>"
            f"<td class=n>{percent(t.hit_rate)}</td><td class=n>{dollars(t.cost_usd)}</td></tr>"
        )
    head = (
        "<tr><th>cache model</th><th>requests</th><th>prompt tokens</th>"
        "<th>cached tokens</th><th>hit rate</th><th>cost</th></tr>"
    )
    return f"<table>{head}{''.join(rows)}</table>"


def _examples(report: AuditReport, model: str) -> str:
    items = []
    for cause in report.by_cause(model):
        for e in report.examples.get((model, cause), ()):
            items.append(
                f"<li><b>{escape(cause_label(cause))}</b> at {escape(e.file)}:{e.line} "
                f"<code>{escape(e.component or '')}</code>, token {e.token}"
                f"<div class=ex>was: {escape(e.before)}\nnow: {escape(e.after)}</div></li>"
            )
    return f"<ul>{''.join(items)}</ul>" if items else ""


def _fix_first_table(report: AuditReport) -> str:
    model = report.cache_models[0] if report.cache_models else None
    rows = [r for r in report.fix_first if r.model_cache == model and r.prefill_tokens_saved > 0]
    if not rows:
        return ""
    cells = "".join(
        f"<tr><td>{escape(r.fix)}</td><td>{percent(r.hit_rate_before)} → "
        f"{percent(r.hit_rate_after)}</td><td class=n>{r.prefill_tokens_saved:,}</td>"
        f"<td class=n>{tokens_count(r.prefill_tokens_per_day)}</td>"
        f"<td class=n>{'-' if r.ttft_saved_ms is None else f'{r.ttft_saved_ms:,.1f} ms'}</td>"
        f"<td class=n>{dollars(r.usd_saved)}</td><td class=n>{dollars(r.usd_per_day)}</td></tr>"
        for r in rows
    )
    head = (
        "<tr><th>fix</th><th>hit rate</th><th>prefill saved</th><th>per day</th>"
        "<th>TTFT saved</th><th>saved</th><th>per day</th></tr>"
    )
    return (
        f"<h2>Fix first ({escape(model or '')})</h2><table>{head}{cells}</table>"
        f"<p>Money: {escape(rows[0].basis)}. Per day: at the log's own rate.</p>"
    )


def _assumptions(report: AuditReport) -> str:
    items = "".join(
        f"<li><b>{escape(model)}</b>: "
        + "; ".join(f"{escape(k)}: {escape(v)}" for k, v in assumed.items())
        + "</li>"
        for model, assumed in report.assumptions.items()
    )
    return f"<h2>Assumptions</h2><ul>{items}</ul>" if items else ""


def _sources_table(report: AuditReport, model: str) -> str:
    """Misses by the source line they are linked to (``audit --source``)."""
    lines = report.by_source(model)
    if not lines:
        return ""
    rows = "".join(
        f"<tr><td><code>{escape(path)}:{line}</code></td><td>{escape(code)}</td>"
        f"<td class=n>{entry.requests:,}</td><td class=n>{entry.cost_tokens:,}</td></tr>"
        for (path, line, code), entry in lines.items()
    )
    head = "<tr><th>source</th><th>code</th><th>requests</th><th>tokens lost</th></tr>"
    return f"<h3>Misses by source line</h3><table>{head}{rows}</table>"


def render_html(report: AuditReport) -> str:
    skipped = len(report.skipped)
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>prefixlint audit</title>",
        f"<style>{STYLE}</style></head><body><h1>prefixlint audit</h1>",
        f"<p>{escape(', '.join(report.files))}: {counted(report.lines_read, 'line')}, "
        f"{counted(report.lines_read - skipped, 'request')}, {skipped:,} skipped.</p>",
        _summary_table(report),
        check_html(report.engine_check),
        _fix_first_table(report),
        "<h2>Hit rate over the log</h2>",
        hit_rate_plot(report),
    ]
    for model in report.cache_models:
        parts += [
            f"<h2>Uncached tokens by cause ({escape(model)})</h2>",
            causes_plot(report, model),
            _examples(report, model),
            _sources_table(report, model),
        ]
        if report.what_if:
            parts += [f"<h2>What-if fixes ({escape(model)})</h2>", what_if_plot(report, model)]
            best = next(
                (w for w in report.what_if if w.model_cache == model and w.fix != "all"), None
            )
            if best is not None and best.gain > 0:
                parts.append(f"<p>{escape(headline(best, report.by_cause(model)))}</p>")
        records = list(report.records_for(model))
        shown, step = sharing_sample(records)
        sampled = (
            f" Showing {len(shown):,} of {len(records):,} requests: every {ordinal(step)}, in"
            " log order."
            if step > 1
            else ""
        )
        parts += [
            f"<h2>Prefix sharing per request ({escape(model)})</h2>",
            "<p>green: served from cache; red: lost to the cause named; grey: new or "
            f"otherwise uncached.{sampled}</p>",
            sharing_plot(report, model),
        ]
    parts.append(breakpoints_html(report.cache_control))
    parts.append(planning_html(report))
    parts.append(_assumptions(report))
    parts.append("</body></html>\n")
    return "".join(parts)
