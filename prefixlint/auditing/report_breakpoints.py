"""The ``cache_control`` advice in each report format: JSON data, a terminal table, HTML."""

from __future__ import annotations

from html import escape
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from prefixlint.auditing.results import BreakpointValue, CacheControlAdvice
from prefixlint.plural import counted

BASIS = (
    "each breakpoint replayed alone through the anthropic model; net saved in base input "
    "tokens = 0.9 x read - 0.25 x written (5m TTL) or 1.0 x written (1h)"
)
COLUMNS = ("component", "ttl", "position", "writes", "reads", "net saved")


def breakpoint_dict(value: BreakpointValue) -> dict[str, Any]:
    return {
        "component": value.component,
        "token_position": value.token_position,
        "ttl": value.ttl,
        "requests": value.requests,
        "writes": value.writes,
        "reads": value.reads,
        "write_tokens": value.write_tokens,
        "read_tokens": value.read_tokens,
        "below_minimum": value.below_minimum,
        "minimum_tokens": value.minimum_tokens,
        "net_tokens_saved": value.net_tokens_saved,
        "pays": value.pays,
        "recommended": value.recommended,
        "problem": value.problem,
        "volatile_component": value.volatile_component,
    }


def advice_dict(advice: CacheControlAdvice | None) -> dict[str, Any] | None:
    if advice is None:
        return None
    return {
        "requests": advice.requests,
        "candidates": [breakpoint_dict(v) for v in advice.candidates],
        "logged": [breakpoint_dict(v) for v in advice.logged],
        "basis": BASIS,
    }


def _cells(value: BreakpointValue) -> tuple[str, ...]:
    return (
        value.component,
        value.ttl,
        f"{value.token_position:,}",
        f"{value.writes:,}",
        f"{value.reads:,}",
        f"{value.net_tokens_saved:+,.0f}",
    )


def _verdict(value: BreakpointValue, logged: bool) -> str:
    if logged:
        return value.problem or "pays"
    if value.recommended:
        return "place here"
    if value.below_minimum == value.requests:
        return f"below the {value.minimum_tokens:,}-token minimum"
    return "pays" if value.pays else "does not pay"


def print_breakpoints(advice: CacheControlAdvice | None, console: Console) -> None:
    if advice is None:
        return
    for title, values, logged in (
        (
            f"Where cache_control pays ({counted(advice.requests, 'request')})",
            advice.candidates,
            False,
        ),
        ("cache_control breakpoints the log places", advice.logged, True),
    ):
        if not values:
            continue
        table = Table(title=title, title_justify="left")
        for column in COLUMNS:
            table.add_column(column, justify="left" if column in ("component", "ttl") else "right")
        table.add_column("verdict")
        for value in values:
            table.add_row(*_cells(value), _verdict(value, logged))
        console.print(table)
    console.print(Text(f"  {BASIS}", style="dim"), soft_wrap=True)


def breakpoints_html(advice: CacheControlAdvice | None) -> str:
    if advice is None:
        return ""
    parts = [f"<h2>Where cache_control pays ({counted(advice.requests, 'request')})</h2>"]
    head = "".join(f"<th>{c}</th>" for c in COLUMNS) + "<th>verdict</th>"
    for title, values, logged in (
        ("", advice.candidates, False),
        ("<h3>Breakpoints the log places</h3>", advice.logged, True),
    ):
        if not values:
            continue
        rows = "".join(
            "<tr>"
            + "".join(
                f"<td{'' if i < 2 else ' class=n'}>{escape(cell)}</td>"
                for i, cell in enumerate(_cells(value))
            )
            + f"<td>{escape(_verdict(value, logged))}</td></tr>"
            for value in values
        )
        parts.append(f"{title}<table><tr>{head}</tr>{rows}</table>")
    parts.append(f"<p>{escape(BASIS)}.</p>")
    return "".join(parts)
