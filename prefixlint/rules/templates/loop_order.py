"""What PFX201 and PFX203 share in templates: loops whose order changes between renders.

A loop (``{% for x in xs %}``, ``{{#each xs}}``), or a value set or printed from a list,
that draws its items at random (a ``shuffle``/``sample``/``random`` filter or helper) renders a
different prompt each time (PFX203). A loop over a collection that its template comment
says has no fixed order (``{# tools is a set[str] #}``, "filled by plugin discovery")
renders its items in an order that changes between processes (PFX201); a ``sort`` filter
on it fixes the order. Only loops in the stable part of the prompt count.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from prefixlint import codes, registry
from prefixlint.context import RuleContext
from prefixlint.rules.templates.volatile import stable_limit
from prefixlint.sources.templates import COMMENT, TemplateDocument, tokens
from prefixlint.types import Diagnostic
from prefixlint.vocabulary import split_words

# Words of a filter or helper that picks or reorders items at random.
_RANDOM_WORDS = frozenset(
    {"shuffle", "shuffled", "sample", "sampled", "random", "randomize", "randomise"}
)
# Words of a filter or helper that puts items in a fixed order.
_SORT_WORDS = frozenset({"sort", "sorted", "dictsort", "sortby", "order", "ordered"})
# A comment that says a collection has no fixed order: a Python set, a registry filled by
# discovery, a directory listing.
_UNORDERED_NOTE = re.compile(
    r"\b(?:frozen)?set\s*[\[(]|\bfrozenset\b|\b(?:is|are)\s+(?:a\s+)?(?:python\s+)?sets?\b"
    r"|\bunordered\b|\bno\s+(?:fixed|stable|defined|guaranteed)\s+order\b"
    r"|\b(?:plugin|entry[ -]?points?)\s+discovery\b|\bentry[ _-]points\b|\bdiscovery\s+order\b"
    r"|\bos\.(?:listdir|scandir|walk)\b|\bglob\b|\bhash\s+(?:seed|order)\b",
    re.IGNORECASE,
)
_ORDERED_NOTE = re.compile(r"\bsort(?:ed|s)?\b|\bordered\s+by\b|\bin\s+order\b", re.IGNORECASE)
_NOTE_LINES = 2  # lines above a loop that its comment may sit on


@dataclass(frozen=True)
class OrderSite:
    """A place in the stable part whose items come in a changing order (rule ``code``)."""

    start: int
    end: int
    code: str
    shown: str
    iterated: str


def order_sites(document: TemplateDocument, ctx: RuleContext) -> list[OrderSite]:
    """The loops and values of ``document`` whose order changes between renders, in order."""
    return document.shared("order", lambda: _find(document, ctx))


def _find(document: TemplateDocument, ctx: RuleContext) -> list[OrderSite]:
    limit = stable_limit(document, ctx)
    sites = []
    for start, end, expression, is_loop in document.iterations:
        if start >= limit:
            break
        names, operations = document.iterated(expression)
        words = {w for name in operations for w in split_words(name)}
        shown = document.text[start:end].strip()
        if words & _RANDOM_WORDS:
            sites.append(OrderSite(start, end, codes.RANDOM_SELECTION, shown, expression))
        elif (
            is_loop
            and names
            and not words & _SORT_WORDS
            and _noted_unordered(document, start, names)
        ):
            sites.append(OrderSite(start, end, codes.UNORDERED, shown, names[0]))
    return sites


def _noted_unordered(document: TemplateDocument, start: int, names: tuple[str, ...]) -> bool:
    """Whether a comment that names the iterated collection, on the loop's line or just above
    it, says the collection has no fixed order."""
    window = document.line_bounds(start)[0]
    for _ in range(_NOTE_LINES):
        if window > 0:
            window = document.line_bounds(window - 1)[0]
    roots = {name.split(".")[0] for name in names}
    for tag in document.tags_between(window, document.line_bounds(start)[1]):
        note = document.text[tag.start : tag.end]
        if (
            tag.kind == COMMENT
            and roots & set(re.findall(r"\w+", note))
            and _UNORDERED_NOTE.search(note)
            and not _ORDERED_NOTE.search(note)
        ):
            return True
    return False


_MESSAGES = {
    codes.RANDOM_SELECTION: (
        "`{shown}` draws its items at random: every render of the prompt differs from here on,"
        " so the {after} after it miss the cache (the cache keeps the {before} before it);"
        " pick the items once, in a fixed order"
    ),
    codes.UNORDERED: (
        "`{shown}` iterates `{iterated}`, which its comment says has no fixed order: the items"
        " change order between processes, and the {after} after it with them (the cache keeps"
        " the {before} before it); sort it (`| sort`)"
    ),
}


def order_findings(document: TemplateDocument, ctx: RuleContext, code: str) -> Iterator[Diagnostic]:
    """The findings of ``code`` (PFX201 or PFX203) in ``document``, one per loop or value."""
    limit = stable_limit(document, ctx)
    for site in order_sites(document, ctx):
        if site.code != code:
            continue
        before = document.static_tokens(0, site.start, ctx)
        after = document.static_tokens(site.start, limit, ctx)
        message = _MESSAGES[code].format(
            shown=site.shown if len(site.shown) <= 60 else site.shown[:57] + "...",
            iterated=site.iterated,
            after=tokens(after, "static"),
            before=tokens(before),
        )
        yield registry.diagnostic(
            code,
            message,
            document.span(site.start, site.end),
            stable_prefix_tokens=before,
            unstable_tokens=after,
        )
