"""PFX401 in templates: CRLF, CR or mixed line endings.

The same prompt with ``\\r\\n`` instead of ``\\n`` is a different token sequence, so a template
checked out with CRLF on one machine and LF on another never shares a cached prefix; mixed
endings also change whenever an editor normalises the file. The fix writes every line break
as ``\\n``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from prefixlint import codes, registry
from prefixlint.context import RuleContext
from prefixlint.sources.templates import TemplateDocument
from prefixlint.types import Applicability, Diagnostic

CODE = codes.LINE_ENDINGS
_CARRIAGE_RETURN = re.compile(r"\r\n?")


@registry.register(CODE, "template")
def check(document: TemplateDocument, ctx: RuleContext) -> Iterator[Diagnostic]:
    text = document.text
    first = text.find("\r")
    if first == -1:
        return
    crlf = text.count("\r\n")
    cr = text.count("\r") - crlf
    lf = text.count("\n") - crlf
    kinds = [f"{n} {name}" for n, name in ((crlf, "CRLF"), (cr, "CR"), (lf, "LF")) if n]
    if len(kinds) > 1:
        message = f"mixed line endings ({', '.join(kinds)})"
    else:
        message = f"{'CRLF' if crlf else 'CR'} line endings"
    changes = [(m.start(), m.end(), "\n") for m in _CARRIAGE_RETURN.finditer(text)]
    fix = document.fix(changes, Applicability.SAFE, "Use LF line endings")
    yield registry.diagnostic(
        CODE,
        f"{message}: a prompt's line breaks must be the same bytes on every machine",
        document.span(first, first + 1),
        fix=fix,
    )
