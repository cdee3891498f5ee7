"""What PFX101-PFX104 share in templates: which placeholders are volatile, what they cost, the fix.

A volatile placeholder (or a pasted "current date" line) costs the static text that follows
it in the stable part of the prompt: every render fills it differently, so every token after
it misses the cache. The stable part ends at the template's user section (or, for a value in a
prompt file, with that value), and at the first placeholder that carries per-request input
(``{{ question }}``): after that point the prompt differs per request anyway. A value after
that input and before the user section that as much static text follows as PFX301 reports
after an input (``template-min-static-tokens``; ``min-static-tokens`` in a user turn) is
reported too, as a warning and without a fix: once the input moves after the static text, as
PFX301 advises, the value breaks the cache where it stands. After a costly place before the
input, it is folded into that place's finding like any later place.

A place before most of the static text is an error (the rule's severity); one after most of
it, which leaves most of the prefix cached, is a warning. A place costs nothing worth reporting
when only other volatile lines (or a few words on its own line, like ``(UTC).``), closing tags,
empty wrappers and labels that introduce values (``</env>``, ``Customer email:``) follow it, or
when it sits in the template's final section, after the static text, with little static text
after it. The first costly place is the finding: it already costs everything after it, so the
costly places after it (of any enabled volatile rule) are folded into its message and its
``folded_lines``. A place whose line waives its code with ``noqa`` is reported on its own (for
the directive to suppress) and folds nothing; the next place leads.

The unsafe fix moves the finding's line to the end of the stable part, after the static
text, where it stops costing anything, and the folded lines with it, in order; it is offered
only when the first line is its own statement (not inside a loop, or inside an ``if`` whose
tags stand alone on the lines around it, which moves along). A folded line that cannot move
stays, and the fix's message names it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from prefixlint import codes, registry
from prefixlint.context import RuleContext
from prefixlint.linting.noqa import find_directives
from prefixlint.prose_language import prose_language
from prefixlint.rules.templates.pasted_memory import pasted_memories
from prefixlint.rules.templates.sections import headings, last_section_start
from prefixlint.sources.templates import (
    BLOCK,
    Placeholder,
    TemplateDocument,
    fence_at,
    fence_blocks,
    tokens,
)
from prefixlint.types import Applicability, Diagnostic, Fix, Severity
from prefixlint.vocabulary import (
    classify_call,
    classify_command,
    classify_filter,
    classify_name,
    is_request_input,
    local_names,
    names_other_owner,
    split_words,
)

VOLATILE_CODES = (codes.TIMESTAMP, codes.UNIQUE_ID, codes.PER_USER, codes.ENVIRONMENT)
WHAT = {
    codes.TIMESTAMP: "the current date or time",
    codes.UNIQUE_ID: "a unique id or random value",
    codes.PER_USER: "a per-user value",
    codes.ENVIRONMENT: "a snapshot of the environment",
}
_TAIL_WORDS = 3  # words of static text after a place on its own line that count as following it
_FINAL_SECTION_TOKENS = 48  # static tokens after a place in the final section it may cost
_WORDS = re.compile(r"[^\W\d_]{2,}")
_WRAPPER_LINE = re.compile(
    r"[ \t]*(?:</?[A-Za-z_][\w-]*(?:\s[^<>\n]*)?>|[^\W\d_][\w '’/()-]{0,40}:)[ \t]*\r?"
)
_IF_LINE = re.compile(r"\s*\{%[-+]?\s*if\b.*%\}\s*", re.DOTALL)
_ENDIF_LINE = re.compile(r"\s*\{%[-+]?\s*endif\s*[-+]?%\}\s*")

_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
    r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_WEEKDAY = r"(?:(?:Mon|Tues?|Wed(?:nes)?|Thu(?:rs)?|Fri|Sat(?:ur)?|Sun)(?:day)?,?\s)?"
_DATE_LITERAL = (
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|\d{1,2}/\d{1,2}/\d{2,4}|\d{1,2}[-.]\d{1,2}[-.]\d{4}|\d{4}/\d{2}/\d{2}"
    rf"|{_WEEKDAY}{_MONTH}\.?\s\d{{1,2}}(?:st|nd|rd|th)?,?\s\d{{4}}"
    rf"|{_WEEKDAY}\d{{1,2}}\s{_MONTH}\.?,?\s\d{{4}}"
    r"|\d{1,2}:\d{2}(?::\d{2})?(?:\s?[AaPp]\.?[Mm]\.?)?|\d{1,2}\s?[AaPp]\.?[Mm]\b\.?"
    r"|(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day\b"
    r"|\d{10}(?:\d{3})?\b"
    # a format mask written where the value goes: ``Current date: YYYY-MM-DD``
    r"|YYYY-MM-DD(?:[T ]HH:MM(?::SS)?)?|(?:DD|MM)[-/.](?:DD|MM)[-/.]YYYY"
)
# A positional field (``{}``, ``{0}``, ``%s``) filled with the date: ``The current date is {}.``
_POSITIONAL = r"\{\d?\}|%s\b"
# A date or time given as "the current one": a rendering pasted into the file, or a line that
# someone rewrites every day. A date alone ("since 2019", "released 2024-05-01") is static.
_AND_TIME = r"(?:\s+and\s+(?:time|hour)|\s*/\s*time)?"
# What says "now": today's date, the current (system, local, actual, ...) date and time. A
# few words may qualify it ("the current date and hour including timezone is", "the current
# time (UTC) is").
_NOW_NOUN = (
    rf"(?:today(?:'s|’s)?(?:\s+date{_AND_TIME})?|the\s+date\s+today|(?:the\s+)?current\s+"
    rf"(?:[a-z]+\s+)?(?:date{_AND_TIME}|time(?:stamp)?|datetime))"
    r"(?:\s+(?:in|including|with|for|of|at)(?:\s+[A-Za-z][\w-]*){1,2}|\s*\([^()\n]{1,20}\))?"
)
CURRENT_DATE_LINE = re.compile(
    rf"(?:\b(?:{_NOW_NOUN}|(?:it\s+is\s+)?now|timestamp|the\s+(?:date|time)|it)\**\s*"
    r"(?:,?\s*which\s+is\s*:?|is\s*:?|:|=)\s*\**\s*"
    r"(?:currently\s+)?|\bit['’]s\s+(?:currently\s+|now\s+)?|\bit\s+is\s+(?:currently|now)\s+)"
    rf"(?P<date>{_DATE_LITERAL}|{_POSITIONAL})",
    re.IGNORECASE,
)

# "the current date" followed straight by a long-form date (a month name): no "is" between.
CURRENT_DATE_BARE = re.compile(
    rf"\b(?:the\s+current|today['’]s(?:\s+current)?)\s+date\s+(?P<date>{_WEEKDAY}{_MONTH}\.?\s\d{{1,2}}"
    rf"(?:st|nd|rd|th)?,?\s\d{{4}}|{_WEEKDAY}\d{{1,2}}\s{_MONTH}\.?,?\s\d{{4}})",
    re.IGNORECASE,
)

# A moment written to the second (``2026-11-30T23:41:07Z``, ``2026-11-30 23:41:07 UTC``): the
# stamp of the run that wrote the file, not a date anyone states as a fact. A quoted one, or
# one on an indented code line, is a value in an example (a tool argument, a JSON record).
STAMP_TO_THE_SECOND = re.compile(
    r"^(?![ ]{4}|\t)[^\n]*?(?<![\w:.'\"`-])(?P<date>\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}"
    r"(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2}|[ \t]?UTC)?)(?![\w:.'\"`-])",
    re.MULTILINE,
)

# A word on a stamp's line, before it, that says the line shows an example.
_EXAMPLE_WORD = re.compile(r"\b(?:example|e\.g\.|sample|such\s+as|for\s+instance)", re.I)

# A line that is only a bare date label and a date (``Date: 30-11-2026``, ``Time: 09:12 UTC``):
# the header of a rendering, pasted with the date it was made. A qualified label
# (``Effective date:``, ``Release date:``) gives a date that is a fact, not the current one.
DATE_LABEL_LINE = re.compile(
    r"^[ \t]*(?:[-*][ \t]+)?(?:\*\*)?(?:date|time|date\s+and\s+time|date\s*/\s*time|datetime)"
    r"(?:\*\*)?[ \t]*:[ \t]*(?:\*\*)?[ \t]*"
    rf"(?P<date>(?:{_DATE_LITERAL})(?:,?[ \t]+(?:at[ \t]+)?(?:{_DATE_LITERAL}))?)"
    r"(?:[ \t]+(?-i:[A-Z]{2,5}))?[ \t]*\.?\r?$",
    re.IGNORECASE | re.MULTILINE,
)

# A "Label: value" line that pastes a value of the machine or the user: a label the vocabulary
# reads as volatile (``Working directory``, ``OS Version``, ``User email``) and a value of the
# shape that label holds (a path, an OS or shell name, yes/no; an email address, a time zone, a
# locale; an id). A label with free text after it (``Platform: use the web tool``) is prose.
_PASTED_FIELD = re.compile(
    r"^[ \t]*(?:[-*][ \t]+)?(?:\*\*)?(?P<label>[A-Za-z][A-Za-z' ]{1,40}?)(?:\*\*)?[ \t]*:[ \t]*"
    r"(?:\*\*)?`?(?P<value>[^\s`*][^\n`*]{0,80}?)`?(?:\*\*)?[ \t]*\r?$",
    re.MULTILINE,
)
_PASTED_VALUES = {
    codes.ENVIRONMENT: re.compile(
        r"(?:~|/|[A-Za-z]:\\)[^\s]*|(?:darwin|linux|windows|macos|win32|ubuntu|debian)\b[\w .-]*"
        r"|(?:bash|zsh|fish|powershell|pwsh|cmd\.exe)|yes|no|true|false",
        re.IGNORECASE,
    ),
    codes.PER_USER: re.compile(
        r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|[A-Z][a-z]+/[A-Z][A-Za-z_]+(?:/[A-Z][A-Za-z_]+)?"
        r"|[a-z]{2}[-_][A-Z]{2}"
    ),
    codes.UNIQUE_ID: re.compile(r"[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}|[0-9a-f]{12,}", re.I),
}
# "The user's email address is a@b.c": a pasted value said in a sentence.
_PASTED_SENTENCE = re.compile(
    r"\b(?:the\s+)?user(?:'s|’s)\s+(?P<label>email(?:\s+address)?|time\s*zone|locale)\s+is\s+"
    r"(?P<value>\S+?)[.,;]?(?=\s|$)",
    re.IGNORECASE,
)

_CONDITION = re.compile(
    r"\b(?:if|when|whenever|whether|unless|until|assume|assuming|suppose|e\.g\.|example)[\s,:]*$",
    re.IGNORECASE,
)
# A date line quoted after a condition or an example earlier in its sentence: ``For example,
# if <env> says "Today's date: 2025-07-01", ...``.
_QUOTED_EXAMPLE = re.compile(
    r"(?:\b(?:if|when|for\s+(?:example|instance)|such\s+as|says?|like)\b|\be\.g\.)[^.!?\n]{0,80}"
    r"[\"“'`][ \t]*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Volatile:
    """A volatile place in a template: ``text[start:end]``, of rule ``code``."""

    start: int
    end: int
    code: str
    shown: str


def extra_names(ctx: RuleContext, document: TemplateDocument) -> dict[str, list[str]]:
    """Each volatile code's ``extra-volatile-names`` option, and its names in the language of
    the document's prose."""
    local = local_names(prose_language(document.static_text))
    return {
        code: [*ctx.option(code, "extra-volatile-names"), *local.get(code, ())]
        for code in VOLATILE_CODES
    }


def placeholder_code(placeholder: Placeholder, extra: dict[str, list[str]]) -> str | None:
    """The volatile code of a placeholder: by what it calls, filters through, or names (the
    whole dotted name, else the object it is a field of); a shell command's output by the
    command."""
    if placeholder.command:
        return classify_command(placeholder.command)
    for callee in placeholder.calls:
        if code := classify_call(callee):
            return code
    for name in placeholder.filters:
        if code := classify_filter(name):
            return code
    for path in placeholder.paths:
        if code := classify_name(path, extra):
            return code
    for path in placeholder.paths:  # a field of a volatile object: ``user_profile.bio``
        parts = path.split(".")
        for end in range(len(parts) - 1, 0, -1):
            if names_other_owner(parts[end:]):
                continue  # ``state.branch.project.name``: the project's, not the branch's
            if code := classify_name(".".join(parts[:end]), extra):
                return code
    return None


def _labelled_code(
    document: TemplateDocument, placeholder: Placeholder, extra: dict[str, list[str]]
) -> str | None:
    """The date or environment code of the label that opens the placeholder's line when its
    name says nothing (``TODAY IS: {{year}}-{{month}}-{{day}}``, ``Host: {{h}}``)."""
    line_start = document.line_bounds(placeholder.start)[0]
    label = _LINE_LABEL.fullmatch(document.text, line_start, placeholder.start)
    if label is None or not document.parsed.static.is_literal(line_start, placeholder.start):
        return None
    words = label.group("words").split()[-3:]
    code = classify_name("_".join(words), extra)
    return code if code in (codes.TIMESTAMP, codes.ENVIRONMENT) else None


def _heading_code(document: TemplateDocument, placeholder: Placeholder) -> str | None:
    """A per-user value for a placeholder whose name says nothing, in a section whose heading
    is about the person the prompt addresses (``## The person you are talking to``, ``## User
    profile``: ``Role: {{ role }}``); the request's input there (``## User question``) is not."""
    found = document.shared("headings", lambda: headings(document.text))
    titles = [title for start, title in found if start < placeholder.start]
    if not titles or any(is_request_input(path) for path in placeholder.paths):
        return None
    words = set(split_words(titles[-1]))
    if words & _ADDRESSED and not words & _NOT_ABOUT_THEM:
        return codes.PER_USER
    return None


# Heading words for the person a prompt addresses, and for what is not about them (their
# request, or rules for handling people in general).
_ADDRESSED = frozenset({"user", "person", "customer", "human"})
_NOT_ABOUT_THEM = frozenset(
    {
        "input", "question", "questions", "message", "messages", "request", "requests",
        "query", "task", "prompt", "guidelines", "rules", "instructions", "policy", "handling",
        "support", "types", "roles", "interaction", "interactions", "data", "privacy",
    }
)  # fmt: skip


# A short label and a colon or ``is`` before a placeholder, at the start of its line.
_LINE_LABEL = re.compile(
    r"[ \t>*_#-]*(?:the[ \t]+)?(?P<words>[A-Za-z][A-Za-z \t]{0,40}?)[ \t]*(?::|[ \t]is:?)[ \t]*",
    re.IGNORECASE,
)


def volatile_places(document: TemplateDocument, ctx: RuleContext) -> list[Volatile]:
    """Every volatile placeholder and current-date literal of ``document``, in order."""
    return document.shared("volatile", lambda: _find_volatile(document, ctx))


def _find_volatile(document: TemplateDocument, ctx: RuleContext) -> list[Volatile]:
    extra = extra_names(ctx, document)
    places = []
    for placeholder in document.placeholders:
        code = (
            placeholder_code(placeholder, extra)
            or _labelled_code(document, placeholder, extra)
            or _heading_code(document, placeholder)
        )
        if code:
            shown = document.text[placeholder.start : placeholder.end]
            places.append(Volatile(placeholder.start, placeholder.end, code, shown))
    static = document.parsed.static
    matches = [*CURRENT_DATE_LINE.finditer(document.text)]
    matches += CURRENT_DATE_BARE.finditer(document.text)
    stamps = [
        m
        for m in STAMP_TO_THE_SECOND.finditer(document.text)
        if not _EXAMPLE_WORD.search(document.text, m.start(), m.start("date"))
    ]
    dated = [m for m in DATE_LABEL_LINE.finditer(document.text) if not _in_record(document.text, m)]
    labels = [*dated, *stamps]
    fences = fence_blocks(document.text) if labels else []
    matches += (m for m in labels if fence_at(fences, m.start()) is None)  # not example output
    for match in sorted(matches, key=lambda m: m.start("date")):
        start, end = match.span("date")
        line_start = document.text.rfind("\n", 0, match.start()) + 1
        if _CONDITION.search(document.text, line_start, match.start()):
            continue  # "if today is Friday, ...": a rule about dates, not a date
        if _QUOTED_EXAMPLE.search(
            document.text, max(line_start, match.start() - 120), match.start()
        ):
            continue  # 'if the header says "Today's date: ..."': an example of the line
        if static.is_literal(match.start(), end):
            places.append(Volatile(start, end, codes.TIMESTAMP, match.group(0)))
    places.extend(_pasted_values(document, extra))
    for start, end, shown in pasted_memories(document.text):
        if static.is_literal(start, end):
            places.append(Volatile(start, end, codes.PER_USER, shown))
    return sorted(places, key=lambda v: v.start)


# A ``key: value`` line of a record, its key in snake case (``order_number: 2020230``).
_RECORD_FIELD = re.compile(r"[ \t]*(?:[-*][ \t]+)?[a-z][a-z0-9]*_[a-z0-9_]*[ \t]*:[ \t]*\S")


def _in_record(text: str, match: re.Match[str]) -> bool:
    """Whether a ``date: ...`` line is a field of a record written out in full (an order in an
    example: a snake-case field on the line before or after it), not a header of the prompt."""
    start = text.rfind("\n", 0, max(match.start() - 1, 0)) + 1
    before = text[start : max(match.start() - 1, start)]
    after_start = text.find("\n", match.end())
    after = text[after_start + 1 : text.find("\n", after_start + 1)] if after_start >= 0 else ""
    return any(_RECORD_FIELD.match(line) for line in (before, after))


def _pasted_values(document: TemplateDocument, extra: dict[str, list[str]]) -> Iterator[Volatile]:
    """Values of the machine or the user pasted after a label that names them (outside fenced
    code, where such lines are examples of output)."""
    text, static = document.text, document.parsed.static
    matches = [*_PASTED_FIELD.finditer(text), *_PASTED_SENTENCE.finditer(text)]
    fences = fence_blocks(text) if matches else []
    for match in matches:
        if fence_at(fences, match.start()) is not None:
            continue  # ``cwd: /Users/me/proj`` in an example of a tool's output
        code = classify_name("_".join(match.group("label").split()), extra)
        shape = _PASTED_VALUES.get(code or "")
        start, end = match.span("value")
        if code is None or shape is None or not shape.fullmatch(match.group("value")):
            continue
        if static.is_literal(match.start(), match.end()):
            shown = match.group(0).strip()
            yield Volatile(start, end, code, shown)


def stable_limit(document: TemplateDocument, ctx: RuleContext) -> int:
    """Where the stable part ends: the user section, or the first per-request input."""
    first_input = document.first_input(ctx.option(codes.LAYOUT, "input-names"))
    limit = document.prefix_end
    if first_input is not None:
        limit = min(limit, document.line_bounds(first_input.start)[0])
    return limit


def _line_region(document: TemplateDocument, place: Volatile) -> tuple[int, int]:
    start = document.line_bounds(place.start)[0]
    end = document.line_bounds(max(place.end - 1, place.start))[1]
    return start, end


def _static_follows(
    document: TemplateDocument, lines: list[tuple[int, int]], limit: int
) -> list[bool]:
    """For each volatile line, whether non-blank static text follows it before ``limit``
    (text on other volatile lines does not count: those move to the end too)."""
    follows = [False] * len(lines)
    found = False
    for index in range(len(lines) - 1, -1, -1):
        gap_start = lines[index][1]
        gap_end = min(lines[index + 1][0], limit) if index + 1 < len(lines) else limit
        if gap_start < gap_end and not _only_wrappers(document.static_between(gap_start, gap_end)):
            found = True
        follows[index] = found
    return follows


def _only_wrappers(static: str) -> bool:
    """Whether ``static`` holds only blank lines, markup tag lines (``</env>``, an empty
    ``<diff>`` wrapper) and short labels that introduce a value (``Customer email:``):
    nothing worth caching."""
    return all(not line.strip() or _WRAPPER_LINE.fullmatch(line) for line in static.split("\n"))


@dataclass(frozen=True)
class Costly:
    """A volatile place worth reporting: its document and line, and the static tokens before
    and after (with those of the prompt file's other stable values; ``following`` of them
    after its own). ``after_input`` is the per-request input it follows, for a place after the
    end of the stable part that a large block of static text still follows."""

    document: TemplateDocument
    place: Volatile
    region: tuple[int, int]
    before: int
    after: int
    following: int
    others_follow: bool
    after_input: Placeholder | None = None


def _costly_places(document: TemplateDocument, ctx: RuleContext) -> list[Costly]:
    """The volatile places (of enabled codes) that cost static text, in order. A value of a
    prompt file's stable part that does not end there also costs the stable values after it."""
    places = [p for p in volatile_places(document, ctx) if p.code in ctx.enabled]
    limit = stable_limit(document, ctx)
    preceding, following = document.chain_tokens(ctx) if places else (0, 0)
    if limit < len(document.text):
        following = 0  # the stable part ends in this value
    lines = sorted({_line_region(document, p) for p in places})
    follows = dict(zip(lines, _static_follows(document, lines, limit), strict=True))
    final_start = _final_section_start(document, limit)
    costly = []
    for place in places:
        if place.start >= limit:
            if item := _after_input(document, ctx, place):
                costly.append(item)
            continue
        region = _line_region(document, place)
        tail = document.static_between(place.end, region[1])
        before = document.static_tokens(0, place.start, ctx) + preceding
        after = document.static_tokens(place.end, limit, ctx) + following
        quiet = not (follows[region] or following) and len(_WORDS.findall(tail)) < _TAIL_WORDS
        if quiet or (place.start >= final_start and after < _FINAL_SECTION_TOKENS):
            # Cheap where the stable part now ends, at the input, but not once the input
            # moves after the static text that follows it.
            if item := _after_input(document, ctx, place):
                costly.append(item)
            continue
        costly.append(Costly(document, place, region, before, after, following, follows[region]))
    return costly


def _after_input(document: TemplateDocument, ctx: RuleContext, place: Volatile) -> Costly | None:
    """A place after the template's first per-request input (or just before it, in the final
    section of what is stable until the input), before its user section, that as much static
    text follows as PFX301 reports after an input: the input already changes the prompt there,
    but once it moves after the static text (PFX301's advice), this value breaks the cache
    where it stands."""
    first_input = document.first_input(ctx.option(codes.LAYOUT, "input-names"))
    if first_input is None or place.start >= document.prefix_end:
        return None
    key = "min-static-tokens" if document.prefix_end == 0 else "template-min-static-tokens"
    after = document.static_tokens(place.end, document.prefix_end, ctx)
    if after < int(ctx.option(codes.LAYOUT, key)):
        return None
    before = document.static_tokens(0, place.start, ctx)
    region = _line_region(document, place)
    return Costly(document, place, region, before, after, 0, True, after_input=first_input)


def volatile_findings(
    document: TemplateDocument, ctx: RuleContext, code: str
) -> Iterator[Diagnostic]:
    """The findings of ``code`` (one of PFX101-PFX104) in ``document``. The values of a
    prompt file's stable part are one prompt: their findings are found together, once, and
    each is returned with the value it lands in."""
    chain = document.stable_chain or (document,)
    lead = chain[0]
    found = lead.shared("findings", lambda: _findings(chain, ctx))
    return iter([d for owner, d in found if owner is document and d.code == code])


def _findings(
    chain: tuple[TemplateDocument, ...], ctx: RuleContext
) -> list[tuple[TemplateDocument, Diagnostic]]:
    """The first costly place is the finding: from it on, nothing of the prompt is cached, so
    the costly places after it (of any enabled volatile code, in this value or a later one of
    the stable part) are folded into it. ``noqa`` on the finding's line suppresses it with what
    is folded into it (what ``--add-noqa`` writes stays quiet); a later place whose line
    waives its code, or a place of a code the file waives (``noqa-file``), is reported on its
    own, for the directive to suppress, and is not folded."""
    directives = find_directives(chain[0].file_text, chain[0].path)

    def waived(item: Costly, file_level: bool) -> bool:
        line = item.document.span(item.place.start, item.place.end).line
        return any(
            d.covers(item.place.code)
            and d.file_level == file_level
            and (file_level or d.line == line)
            for d in directives
        )

    found: list[tuple[TemplateDocument, Diagnostic]] = []
    candidates: list[Costly] = []
    for item in (item for document in chain for item in _costly_places(document, ctx)):
        if waived(item, file_level=True):
            found.append((item.document, _finding(ctx, item, [], with_fix=False)))
        else:
            candidates.append(item)
    if not candidates:
        return found
    first, *later = candidates
    folded = []
    for item in later:
        if waived(item, file_level=False):
            found.append((item.document, _finding(ctx, item, [], with_fix=False)))
        else:
            folded.append(item)
    with_fix = first.after_input is None
    found.append((first.document, _finding(ctx, first, folded, with_fix=with_fix)))
    return found


def _finding(ctx: RuleContext, first: Costly, rest: list[Costly], *, with_fix: bool) -> Diagnostic:
    """The finding at ``first``, with ``rest`` folded into it. Its fix moves lines to the end
    of the stable part, so there is none when stable values follow ``first``'s own."""
    document = first.document
    code = first.place.code
    if first.after_input is not None:
        line = document.span(first.after_input.start, first.after_input.end).line
        shown = document.text[first.after_input.start : first.after_input.end]
        message = (
            f"`{_shown(first.place)}` puts {WHAT[code]} before {tokens(first.after, 'static')}"
            f" that could be cached once the per-request `{_shorten(shown)}` (line {line})"
            f" moves after them (PFX301): then every render still recomputes them from here"
        )
    else:
        message = (
            f"`{_shown(first.place)}` puts {WHAT[code]} in the stable part of the prompt: every"
            f" render recomputes the {tokens(first.after, 'static')} after it (the cache keeps"
            f" the {tokens(first.before)} before it)"
        )
    lines = [item.document.span(item.place.start, item.place.end).line for item in rest]
    if rest:
        folded = ", ".join(
            f"`{_shown(item.place)}` (line {line})" for item, line in zip(rest, lines, strict=True)
        )
        message += f"; and {len(rest)} more after it: {folded}"
    fix = None
    if with_fix and first.others_follow and not first.following:
        regions = [first.region]
        regions += [
            item.region for item in rest if item.others_follow and item.document is document
        ]
        fix = move_lines_fix(document, regions, stable_limit(document, ctx))
    found = registry.diagnostic(
        code,
        message,
        document.span(first.place.start, first.place.end),
        fix=fix,
        stable_prefix_tokens=first.before,
        unstable_tokens=first.after,
        folded_lines=lines,
    )
    # Past the middle of the stable part, most of it is still cached: a warning; and after
    # content that already varies per request, a date is at most a warning.
    if first.after_input is None and first.after >= first.before:
        return found
    return replace(found, severity=Severity.WARNING)


def _shown(place: Volatile) -> str:
    return _shorten(place.shown)


def _shorten(shown: str) -> str:
    return shown if len(shown) <= 60 else shown[:57] + "..."


def _final_section_start(document: TemplateDocument, limit: int) -> int:
    """Start of the stable part's final section when static text comes before it, else the
    limit (a template that is one section has no final section apart from the rest)."""
    start = last_section_start(document.text, limit)
    if start == 0 or not _WORDS.search(document.static_between(0, start)):
        return limit
    return start


def move_line_fix(document: TemplateDocument, region: tuple[int, int], limit: int) -> Fix | None:
    """Move the lines ``text[region]`` to the end of the stable part, if that is sound."""
    return move_lines_fix(document, [region], limit)


def move_lines_fix(
    document: TemplateDocument, regions: list[tuple[int, int]], limit: int
) -> Fix | None:
    """Move the lines of the first region, and of each later one that can move with it, to the
    end of the stable part, in their order (None if the first cannot move). A later line that
    cannot move (inside a loop) stays, and the fix's message names it."""
    target = limit if limit >= len(document.text) else document.line_bounds(limit)[0]
    if document.block_depth(target) != 0:
        return None
    moving: list[tuple[int, int]] = []
    staying: list[int] = []
    for index, region in enumerate(regions):
        movable = _movable_region(document, region)
        if movable is not None and moving and movable[0] < moving[-1][1]:
            if movable[1] <= moving[-1][1]:
                continue  # on a line that already moves (two values on one line)
            movable = None  # overlaps the lines before it: not a unit
        if movable is None or target < movable[1]:
            if index == 0:
                return None
            staying.append(document.span(region[0], region[0]).line)
            continue
        moving.append(movable)
    pieces = [document.text[start:end] for start, end in moving]
    moved = "".join(piece if piece.endswith("\n") else piece + "\n" for piece in pieces)
    if target >= len(document.text):
        text = document.text
        target = len(text) - 1 if text.endswith("\n") else len(text)
        moved = "\n" + moved.removesuffix("\n")
    changes = [(start, end, "") for start, end in moving] + [(target, target, moved)]
    message = "Move the line" + ("s" if len(moving) > 1 else "") + " to the end of the stable part"
    message += " of the prompt"
    if staying:
        shown = ", ".join(str(line) for line in staying)
        message += f" (line{'s' if len(staying) > 1 else ''} {shown} cannot move and stay)"
    return document.fix(changes, Applicability.UNSAFE, message)


def _movable_region(document: TemplateDocument, region: tuple[int, int]) -> tuple[int, int] | None:
    """``region``, widened to a lone ``{% if %}`` around it, if the lines can move as a unit
    (else None)."""
    start, end = region
    if any(t.kind == BLOCK for t in document.tags_between(start, end)):
        return None
    depth = document.block_depth(start)
    if depth == 0:
        return start, end
    if depth != 1 or start == 0 or end >= len(document.text):
        return None
    above = document.line_bounds(start - 1)
    below = document.line_bounds(end)
    lone_if = _IF_LINE.fullmatch(document.text[above[0] : above[1]])
    lone_endif = _ENDIF_LINE.fullmatch(document.text[below[0] : below[1]])
    if lone_if and lone_endif and document.block_depth(above[0]) == 0:
        return above[0], below[1]
    return None
