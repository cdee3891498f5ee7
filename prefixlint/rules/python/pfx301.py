"""PFX301 in Python: per-request input comes before a large static block of the same text."""

from __future__ import annotations

from prefixlint import registry
from prefixlint.pyflow.layout import Layout

CODE = "PFX301"


@registry.register(CODE, "python")
def check(document, ctx):
    min_tokens = ctx.option(CODE, "min-static-tokens")
    layout = Layout(document, ctx.option(CODE, "input-names"))
    for found in layout.misplaced(min_chars=min_tokens):
        tokenizer = ctx.tokenizer
        static = len(tokenizer.encode(found.static))
        if static < min_tokens:
            continue
        yield registry.diagnostic(
            CODE,
            f"`{found.label}` comes before {static:,} tokens of static text in "
            f"{found.sink.description}; those tokens are recomputed for every request. Put "
            "the static text first and the input after it",
            found.span(document),
            stable_prefix_tokens=len(tokenizer.encode(found.before)),
            unstable_tokens=static,
        )
