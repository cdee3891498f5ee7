"""Rule registry: documentation from ``rules/*.toml``, checkers from ``prefixlint/rules``.

A rule's documentation, severity and examples live in one TOML file per code (the single
source for ``prefixlint rule CODE`` and for the example tests). Its logic lives in Python
modules under ``prefixlint/rules`` that register checkers with :func:`register`, one per kind
of source the rule understands (``"template"``, ``"python"``, ``"chat-template"``).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TypeVar

from prefixlint.types import Diagnostic, Fix, Severity, Span

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

FIX_AVAILABILITY = ("none", "sometimes", "always")
# A preview rule runs only when preview is on (``--preview``, ``preview = true``), as in ruff.
RULE_STATUSES = ("preview", "stable")


@dataclass(frozen=True)
class RuleDoc:
    """What ``rules/PFXnnn.toml`` says about one rule."""

    code: str
    name: str
    summary: str
    severity: Severity
    fix: str
    what: str
    why: str
    example: str
    use_instead: str
    fix_safety: str
    status: str = "stable"
    since: str = "0.1.0"
    options: dict[str, object] = field(default_factory=dict)
    examples: tuple[dict[str, object], ...] = ()

    def render_markdown(self) -> str:
        """The rule's documentation as Markdown, for ``prefixlint rule CODE``."""
        parts = [f"# {self.name} ({self.code})", "", self.summary, ""]
        availability = "not available" if self.fix == "none" else f"{self.fix} available"
        parts.append(f"Fix is {availability}.")
        parts += ["", f"Status: {self.status}, since prefixlint {self.since}."]
        parts += ["", "## What it does", self.what.strip()]
        parts += ["", "## Why is this bad?", self.why.strip()]
        if self.example.strip():
            parts += ["", "## Example", "```", self.example.rstrip("\n"), "```"]
        if self.use_instead.strip():
            parts += ["", "Use instead:", "```", self.use_instead.rstrip("\n"), "```"]
        parts += ["", "## Fix safety", self.fix_safety.strip()]
        if self.options:
            parts += ["", "## Options"]
            parts += [f"- `{key}` (default `{value!r}`)" for key, value in self.options.items()]
        return "\n".join(parts) + "\n"


def rules_dir() -> Path:
    """Where the rule TOML files are: inside the wheel, or at the top of a source checkout."""
    packaged = Path(__file__).parent / "_rules"
    return packaged if packaged.is_dir() else Path(__file__).parent.parent / "rules"


def _parse_doc(path: Path) -> RuleDoc:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    doc = data.get("doc", {})
    fix = data.get("fix", "none")
    if fix not in FIX_AVAILABILITY:
        raise ValueError(f"{path}: fix must be one of {FIX_AVAILABILITY}, not {fix!r}")
    status = data.get("status", "stable")
    if status not in RULE_STATUSES:
        raise ValueError(f"{path}: status must be one of {RULE_STATUSES}, not {status!r}")
    since = data.get("since", "")
    if not re.fullmatch(r"\d+\.\d+\.\d+", since):
        raise ValueError(f"{path}: since must be the version that added the rule, like 0.1.0")
    return RuleDoc(
        code=data["code"],
        name=data["name"],
        summary=data["summary"],
        severity=Severity(data.get("severity", "error")),
        fix=fix,
        what=doc.get("what", ""),
        why=doc.get("why", ""),
        example=doc.get("example", ""),
        use_instead=doc.get("use_instead", ""),
        fix_safety=doc.get("fix_safety", "This rule has no fix."),
        status=status,
        since=since,
        options=data.get("options", {}),
        examples=tuple(data.get("examples", ())),
    )


@cache
def rule_docs() -> dict[str, RuleDoc]:
    """Every documented rule, by code, in code order."""
    docs = {}
    for path in sorted(rules_dir().glob("PFX*.toml")):
        doc = _parse_doc(path)
        if doc.code != path.stem:
            raise ValueError(f"{path}: code {doc.code!r} does not match the file name")
        docs[doc.code] = doc
    return docs


def doc(code: str) -> RuleDoc:
    try:
        return rule_docs()[code]
    except KeyError:
        raise KeyError(f"unknown rule code {code!r}") from None


Checker = Callable[..., Iterable[Diagnostic]]
_CHECKERS: dict[str, list[tuple[str, Checker]]] = {}


C = TypeVar("C", bound=Checker)


def register(code: str, source: str) -> Callable[[C], C]:
    """Decorator: ``checker`` finds ``code`` in sources of kind ``source``."""

    def decorate(checker: C) -> C:
        _CHECKERS.setdefault(source, []).append((code, checker))
        return checker

    return decorate


# The sub-package of ``prefixlint.rules`` that holds each source kind's checkers.
RULE_PACKAGES = {"template": "templates", "python": "python", "chat-template": "chat_template"}


@cache
def load_rule_modules(source: str | None = None) -> None:
    """Import the checker modules of one source kind (or of all) so that they register.

    Loading by kind keeps a template-only run from importing libcst and the Python analysis.
    """
    import prefixlint.rules as package

    kinds = [source] if source is not None else list(RULE_PACKAGES)
    for kind in kinds:
        name = f"{package.__name__}.{RULE_PACKAGES[kind]}"
        module = importlib.import_module(name)
        for info in pkgutil.walk_packages(module.__path__, name + "."):
            importlib.import_module(info.name)


def checkers(source: str, enabled: Iterable[str]) -> list[tuple[str, Checker]]:
    """The registered checkers for ``source`` whose code is in ``enabled``."""
    load_rule_modules(source)
    wanted = set(enabled)
    return [(code, fn) for code, fn in _CHECKERS.get(source, []) if code in wanted]


def registered_codes() -> dict[str, set[str]]:
    """Code -> the source kinds it has checkers for."""
    load_rule_modules()
    out: dict[str, set[str]] = {}
    for source, entries in _CHECKERS.items():
        for code, _ in entries:
            out.setdefault(code, set()).add(source)
    return out


def matches(code: str, selectors: Iterable[str]) -> bool:
    """Whether ``code`` is selected by any of ``selectors`` (code prefixes, or ``ALL``)."""
    return any(sel == "ALL" or code.startswith(sel) for sel in selectors)


def _most_specific(code: str, selectors: Sequence[str]) -> int:
    """The length of the longest selector matching ``code`` (``ALL``: 0; none: -1)."""
    return max((0 if s == "ALL" else len(s) for s in selectors if matches(code, [s])), default=-1)


@dataclass(frozen=True)
class Selection:
    """One layer of rule selection: the configuration file's, or the command line's.

    A layer with ``select`` starts over from it; one without changes the layer below with its
    ``extend_select`` and ``ignore``. Within a layer a longer code prefix wins over a shorter.
    """

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()


def resolve_selection(layers: Iterable[Selection], *, preview: bool = False) -> frozenset[str]:
    """The enabled rule codes after applying ``layers`` in order, ruff-style.

    Preview rules are left out unless ``preview`` is on, however they are selected.
    """
    enabled: set[str] = set()
    for layer in layers:
        if layer.select is not None:
            enabled = set()
        for code in rule_docs():
            chosen = _most_specific(code, (*(layer.select or ()), *layer.extend_select))
            dropped = _most_specific(code, layer.ignore)
            if chosen >= 0 and chosen > dropped:
                enabled.add(code)
            elif dropped >= 0 and dropped >= chosen:
                enabled.discard(code)
    docs = rule_docs()
    return frozenset(c for c in enabled if preview or docs[c].status != "preview")


def select_codes(
    select: Sequence[str] = ("ALL",),
    ignore: Sequence[str] = (),
    extend_select: Sequence[str] = (),
    *,
    preview: bool = False,
) -> frozenset[str]:
    """The enabled rule codes for a single layer of selection (see :func:`resolve_selection`)."""
    layer = Selection(tuple(select), tuple(ignore), tuple(extend_select))
    return resolve_selection([layer], preview=preview)


def diagnostic(
    code: str,
    message: str,
    span: Span,
    *,
    fix: Fix | None = None,
    stable_prefix_tokens: int | None = None,
    unstable_tokens: int | None = None,
    **extra: object,
) -> Diagnostic:
    """Build a :class:`Diagnostic` for ``code`` with its documented name and severity."""
    d = doc(code)
    return Diagnostic(
        code=code,
        name=d.name,
        message=message,
        span=span,
        severity=d.severity,
        fix=fix,
        stable_prefix_tokens=stable_prefix_tokens,
        unstable_tokens=unstable_tokens,
        extra=extra,
    )
