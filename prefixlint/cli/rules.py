"""``prefixlint rule CODE`` and ``prefixlint rules``: the rules' own documentation."""

from __future__ import annotations

import json
import sys

import click

from prefixlint import registry
from prefixlint.cli.group import UserError
from prefixlint.output.style import wants_color


@click.command()
@click.argument("code")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text")
def rule(code: str, output_format: str) -> None:
    """Explain a rule: what it flags, why it matters, how it is fixed."""
    try:
        doc = registry.doc(code.upper())
    except KeyError:
        raise UserError(f"unknown rule code {code!r}; see `prefixlint rules`") from None
    if output_format == "json":
        data = {
            "code": doc.code,
            "name": doc.name,
            "summary": doc.summary,
            "severity": doc.severity.value,
            "fix": doc.fix,
            "status": doc.status,
            "since": doc.since,
            "explanation": doc.render_markdown(),
            "options": doc.options,
            "sources": sorted(registry.registered_codes().get(doc.code, ())),
        }
        click.echo(json.dumps(data, indent=2))
    elif wants_color(sys.stdout):
        from rich.console import Console
        from rich.markdown import Markdown

        Console().print(Markdown(doc.render_markdown()))
    else:
        click.echo(doc.render_markdown(), nl=False)


@click.command(name="rules")
@click.option("--format", "output_format", type=click.Choice(["table", "json"]), default="table")
def list_rules(output_format: str) -> None:
    """List every rule with its code, name, fix availability and summary."""
    docs = registry.rule_docs().values()
    if output_format == "json":
        rows = [
            {
                "code": d.code,
                "name": d.name,
                "severity": d.severity.value,
                "fix": d.fix,
                "status": d.status,
                "since": d.since,
                "summary": d.summary,
            }
            for d in docs
        ]
        click.echo(json.dumps(rows, indent=2))
        return
    width = max((len(d.name) for d in docs), default=4)
    for d in docs:
        status = "" if d.status == "stable" else f"[{d.status}] "
        click.echo(f"{d.code}  {d.name:<{width}}  fix:{d.fix:<9}  {status}{d.summary}")
