"""The capacity sweep and the routing what-if in the terminal and HTML reports."""

from __future__ import annotations

import math
from html import escape

from rich.console import Console
from rich.table import Table

from prefixlint.auditing.describe import percent, tokens_count
from prefixlint.auditing.results import AuditReport, CapacitySweep, Routing
from prefixlint.auditing.sweep import KNEE_FRACTION, SWEEP_POLICIES

PLOT_WIDTH = 760
LABEL_GAP = 48  # pixels between the centres of two capacity labels
POLICY_COLORS = dict(
    zip(SWEEP_POLICIES, ("#2b6cb0", "#c05621", "#2f855a", "#6b46c1", "#1a202c"), strict=True)
)


def _bytes(value: int | None) -> str:
    if value is None:
        return "-"
    for size, unit in ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if value >= size:
            return f"{value / size:.1f} {unit}"
    return f"{value} B"


def _capacities(sweep: CapacitySweep) -> list[int]:
    return sorted({p.capacity_tokens for p in sweep.points})


def _basis(sweep: CapacitySweep) -> str:
    geometry = ""
    if sweep.geometry is not None:
        geometry = f"; {sweep.geometry}: {sweep.bytes_per_token:,} KV bytes per token"
    return (
        f"vLLM blocks of {sweep.block_size} tokens; working set "
        f"{tokens_count(sweep.working_set_tokens)} tokens, where every policy hits the "
        f"unlimited ceiling of {percent(sweep.ceiling_hit_rate)}; knee: the smallest capacity "
        f"reaching {KNEE_FRACTION:.0%} of the curve's gain{geometry}"
    )


def print_planning(report: AuditReport, console: Console) -> None:
    """The sweep table (hit rate and prefill tokens per policy and capacity) and the routing
    table, when the audit ran them."""
    sweep, routing = report.sweep, report.routing
    if sweep is not None:
        cells = {(p.policy, p.capacity_tokens): p for p in sweep.points}
        for title in ("hit rate", "prefill tokens"):
            console.print(f"[bold]Capacity sweep[/]: {title} per eviction policy (* knee)")
            table = Table(show_edge=False, pad_edge=False)
            table.add_column("capacity", justify="right")
            if sweep.bytes_per_token is not None:
                table.add_column("KV memory", justify="right")
            for policy in SWEEP_POLICIES:
                table.add_column(policy, justify="right")
            for capacity in _capacities(sweep):
                row = [tokens_count(capacity)]
                if sweep.bytes_per_token is not None:
                    row.append(_bytes(capacity * sweep.bytes_per_token))
                for policy in SWEEP_POLICIES:
                    point = cells[(policy, capacity)]
                    knee = "*" if sweep.knees[policy] == capacity else " "
                    value = point.hit_rate if title == "hit rate" else point.prefill_tokens
                    shown = percent(value) if title == "hit rate" else tokens_count(value)
                    row.append(shown + knee)
                table.add_row(*row)
            console.print(table)
        console.print(f"  {_basis(sweep)}", soft_wrap=True)
    if routing is not None:
        _print_routing(routing, console)


def _routing_title(routing: Routing) -> str:
    bound = f", epsilon {routing.epsilon:g}" if routing.router == "prefix-aware" else ""
    capacity = (
        "unlimited"
        if routing.capacity_tokens is None
        else f"{tokens_count(routing.capacity_tokens)} tokens"
    )
    return (
        f"{len(routing.replicas)} replicas, {routing.router} router{bound}, vllm cache of "
        f"{capacity} each: hit rate {percent(routing.hit_rate)}, imbalance "
        f"{routing.imbalance:.2f} (busiest replica's prompt tokens / mean)"
    )


def _print_routing(routing: Routing, console: Console) -> None:
    console.print(f"[bold]Routing what-if[/]: {_routing_title(routing)}", soft_wrap=True)
    table = Table(show_edge=False, pad_edge=False)
    for name in ("replica", "requests", "prompt tokens", "hit rate"):
        table.add_column(name, justify="right")
    for index, replica in enumerate(routing.replicas):
        table.add_row(
            str(index),
            f"{replica.requests:,}",
            tokens_count(replica.prompt_tokens),
            percent(replica.hit_rate),
        )
    console.print(table)


def sweep_plot(sweep: CapacitySweep) -> str:
    """Hit rate against capacity (log scale), one line per policy, knees circled, the
    unlimited ceiling dashed."""
    left, top, plot_w, plot_h = 48, 10, PLOT_WIDTH - 190, 200
    capacities = _capacities(sweep)
    rates = [p.hit_rate for p in sweep.points] + [sweep.ceiling_hit_rate]
    low = math.floor(min(rates) * 10) / 10
    high = max(math.ceil(max(rates) * 10) / 10, low + 0.1)
    span = math.log(capacities[-1] / capacities[0]) if capacities[0] < capacities[-1] else 0.0

    def x(capacity: int) -> float:
        if not span:
            return left + plot_w / 2
        return left + plot_w * math.log(capacity / capacities[0]) / span

    def y(rate: float) -> float:
        return top + plot_h * (1 - (rate - low) / (high - low))

    body = [
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" '
        'stroke="#718096"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="#718096"/>',
        f'<line x1="{left}" y1="{y(sweep.ceiling_hit_rate):.1f}" x2="{left + plot_w}" '
        f'y2="{y(sweep.ceiling_hit_rate):.1f}" stroke="#a0aec0" stroke-dasharray="4 3">'
        f"<title>unlimited ceiling {percent(sweep.ceiling_hit_rate)}</title></line>",
    ]
    for step in range(round((high - low) * 10) + 1):
        rate = low + step / 10
        body.append(_text(left - 4, y(rate) + 4, f"{rate:.0%}", "end"))
    shown: float = -LABEL_GAP
    for capacity in capacities:  # a label too close to the last one shown is left out
        if x(capacity) - shown >= LABEL_GAP:
            shown = x(capacity)
            body.append(_text(shown, top + plot_h + 18, tokens_count(capacity), "middle"))
    body.append(_text(left + plot_w / 2, top + plot_h + 34, "KV capacity (tokens)", "middle"))
    for index, policy in enumerate(SWEEP_POLICIES):
        color = POLICY_COLORS[policy]
        points = sorted(
            (p for p in sweep.points if p.policy == policy), key=lambda p: p.capacity_tokens
        )
        line = " ".join(f"{x(p.capacity_tokens):.1f},{y(p.hit_rate):.1f}" for p in points)
        body.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{line}"/>')
        knee = next(p for p in points if p.capacity_tokens == sweep.knees[policy])
        body.append(
            f'<circle cx="{x(knee.capacity_tokens):.1f}" cy="{y(knee.hit_rate):.1f}" r="4" '
            f'fill="none" stroke="{color}"><title>{policy} knee: '
            f"{tokens_count(knee.capacity_tokens)} tokens, {percent(knee.hit_rate)}</title>"
            "</circle>"
        )
        legend_y = top + 14 * index
        body.append(
            f'<rect x="{left + plot_w + 12}" y="{legend_y}" width="10" height="10" fill="{color}"/>'
        )
        body.append(_text(left + plot_w + 26, legend_y + 9, policy))
    height = top + plot_h + 42
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{PLOT_WIDTH}" height="{height}" '
        f'viewBox="0 0 {PLOT_WIDTH} {height}">' + "".join(body) + "</svg>"
    )


def _text(x: float, y: float, text: str, anchor: str = "start") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}">{escape(text)}</text>'


def planning_html(report: AuditReport) -> str:
    """The sweep plot and the routing table as HTML sections ("" for what did not run)."""
    parts = []
    sweep, routing = report.sweep, report.routing
    if sweep is not None:
        parts += [
            "<h2>Capacity sweep</h2>",
            sweep_plot(sweep),
            f"<p>{escape(_basis(sweep))}.</p>",
        ]
    if routing is not None:
        rows = "".join(
            f"<tr><td class='n'>{index}</td><td class='n'>{r.requests:,}</td>"
            f"<td class='n'>{r.prompt_tokens:,}</td><td class='n'>{percent(r.hit_rate)}</td></tr>"
            for index, r in enumerate(routing.replicas)
        )
        parts += [
            "<h2>Routing what-if</h2>",
            f"<p>{escape(_routing_title(routing))}</p>",
            "<table><tr><th>replica</th><th>requests</th><th>prompt tokens</th>"
            f"<th>hit rate</th></tr>{rows}</table>",
        ]
    return "".join(parts)
