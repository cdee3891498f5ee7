"""PFX403 in templates: byte-order marks, zero-width characters, no-break spaces, non-NFC text.

These look like nothing (or like a plain space) but are different tokens, and they come and go
as text is copied between editors, web pages and terminals, so the prompt changes without
anyone seeing it. Text that is not in Unicode NFC form tokenizes differently on engines that
normalise (Hugging Face tokenizers, vLLM, SGLang) and on those that do not (llama.cpp).

A zero-width joiner or non-joiner between two non-ASCII characters is part of an emoji or of
a script's spelling and is left alone. Each character is one finding per file, at its first
place, with its later places folded in (a file that writes no-break spaces between its words
gets one finding, not one per word). Fixes are safe: remove the character, write a plain
space, or write the line in NFC form.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from prefixlint import codes, registry
from prefixlint.codes import INVISIBLE_CHARACTERS
from prefixlint.context import RuleContext
from prefixlint.rules.templates.folding import fold_sites, folded_fix, folded_lines_text
from prefixlint.sources.templates import TemplateDocument
from prefixlint.types import Applicability, Diagnostic

CODE = codes.INVISIBLE
_JOINERS = frozenset({"\u200c", "\u200d"})
_FINDER = re.compile("[" + "".join(INVISIBLE_CHARACTERS) + "]")


@registry.register(CODE, "template")
def check(document: TemplateDocument, ctx: RuleContext) -> Iterator[Diagnostic]:
    yield from _invisible(document)
    yield from _not_nfc(document)


def _joins_non_ascii(text: str, index: int) -> bool:
    before = text[index - 1] if index else ""
    after = text[index + 1] if index + 1 < len(text) else ""
    return before > "\x7f" and after > "\x7f"


def _invisible(document: TemplateDocument) -> Iterator[Diagnostic]:
    """One finding per invisible character kind, at its first place, the later places of the
    same character folded into it and its fix."""
    text = document.text
    sites: dict[str, list[tuple[int, int]]] = {}
    for match in _FINDER.finditer(text):
        char, index = match.group(0), match.start()
        if char in _JOINERS and _joins_non_ascii(text, index):
            continue
        sites.setdefault(char, []).append((index, index + 1))
    found = [
        _invisible_finding(document, char, group)
        for char, places in sites.items()
        for group in fold_sites(document, CODE, places)
    ]
    yield from sorted(found, key=lambda d: (d.span.line, d.span.column))


def _invisible_finding(
    document: TemplateDocument, char: str, sites: list[tuple[int, int]]
) -> Diagnostic:
    what, replacement = INVISIBLE_CHARACTERS[char]
    action = "Remove the" if not replacement else "Write a plain space for the"
    plural = "s" if len(sites) > 1 else ""
    changes = [(start, end, replacement) for start, end in sites]
    fix = folded_fix(document, changes, f"{action} {what}{plural} (U+{ord(char):04X})")
    first = document.span(*sites[0]).line
    later = (document.span(*site).line for site in sites[1:])
    lines_after = [line for line in dict.fromkeys(later) if line != first]
    message = f"invisible {what} (U+{ord(char):04X}): an unseen character that changes the tokens"
    if len(sites) > 1:
        message += f", {len(sites)} times in the file"
    message += folded_lines_text(lines_after)
    return registry.diagnostic(
        CODE, message, document.span(*sites[0]), fix=fix, folded_lines=lines_after
    )


def _not_nfc(document: TemplateDocument) -> Iterator[Diagnostic]:
    text = document.text
    if text.isascii() or unicodedata.is_normalized("NFC", text):
        return
    start = 0
    while start < len(text):
        newline = text.find("\n", start)
        end = len(text) if newline == -1 else newline
        line = text[start:end]
        if not line.isascii() and not unicodedata.is_normalized("NFC", line):
            first = next((i for i, c in enumerate(line) if unicodedata.combining(c)), 1)
            change = [(start, end, unicodedata.normalize("NFC", line))]
            fix = document.fix(change, Applicability.SAFE, "Write the line in NFC form")
            yield registry.diagnostic(
                CODE,
                "text not in Unicode NFC form: it tokenizes differently on engines that"
                " normalise and on those that do not",
                document.span(start + max(first - 1, 0), end),
                fix=fix,
            )
        start = end + 1
