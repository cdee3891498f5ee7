"""The public Python API: the same checks, fixes and audits the command line runs.

Everything here is re-exported from :mod:`prefixlint`; import it from there.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prefixlint.linting.config import Settings, load_settings
from prefixlint.linting.engine import FixMode, UnsupportedFile, check_file, check_text, fix_text
from prefixlint.linting.files import collect_files
from prefixlint.tokenizers import DEFAULT_TOKENIZER, get_tokenizer
from prefixlint.tokenview import Divergence, divergence
from prefixlint.types import Diagnostic

if TYPE_CHECKING:
    from prefixlint.auditing.results import AuditReport


def _settings(
    settings: Settings | None,
    select: Sequence[str] | None,
    ignore: Sequence[str] | None,
    tokenizer: str | None,
) -> Settings:
    """``settings`` (default: built-in defaults) with the given arguments overriding it."""
    settings = settings or Settings()
    if select is not None:
        settings = replace(settings, select=tuple(select))
    if ignore is not None:
        settings = replace(settings, ignore=tuple(ignore))
    if tokenizer is not None:
        settings = replace(settings, tokenizer=tokenizer)
    return settings


def check_source(
    text: str,
    path: str = "prompt.txt",
    *,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    tokenizer: str | None = None,
    settings: Settings | None = None,
) -> list[Diagnostic]:
    """Findings for ``text`` as if it were the file ``path`` (its suffix picks the checker).

    Raises ``ValueError`` when no checker handles files like ``path``.
    """
    try:
        return check_text(text, path, _settings(settings, select, ignore, tokenizer))
    except UnsupportedFile as exc:
        raise ValueError(str(exc)) from None


def fix_source(
    text: str,
    path: str = "prompt.txt",
    *,
    unsafe: bool = False,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    settings: Settings | None = None,
) -> str:
    """``text`` with the safe (and with ``unsafe``, also unsafe) fixes applied until stable."""
    chosen = _settings(settings, select, ignore, None)
    try:
        outcome = fix_text(text, path, chosen, FixMode(fix=True, unsafe=unsafe))
    except UnsupportedFile as exc:
        raise ValueError(str(exc)) from None
    if outcome.error:
        raise RuntimeError(outcome.error)
    return outcome.text


def check_paths(
    paths: Iterable[str | Path],
    *,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    tokenizer: str | None = None,
    settings: Settings | None = None,
) -> list[Diagnostic]:
    """Findings for every checkable file under ``paths``, in path order.

    Without ``settings``, the ``[tool.prefixlint]`` table of the nearest ``pyproject.toml``
    applies. Raises ``FileNotFoundError`` for a path that does not exist.
    """
    names = [str(p) for p in paths]
    if settings is None:
        settings, _ = load_settings(Path(names[0]) if names else Path.cwd())
    chosen = _settings(settings, select, ignore, tokenizer)
    files, errors = collect_files(names, chosen)
    if errors:
        raise FileNotFoundError(errors[0])
    findings: list[Diagnostic] = []
    for file in files:
        result = check_file(file, chosen)
        if result.error:
            raise OSError(result.error)
        findings.extend(result.diagnostics)
    return findings


def stable_prefix(
    first: str, second: str, *, tokenizer: str = DEFAULT_TOKENIZER, block_size: int = 16
) -> Divergence:
    """Where two renders of a prompt stop sharing characters and tokens.

    ``shared_tokens`` is the reusable prefix, ``token_index`` the first differing token
    (``None`` when the token sequences are equal), ``block_index`` its engine block.
    """
    return divergence(first, second, get_tokenizer(tokenizer), block_size)


def audit(
    logs: Sequence[str | Path],
    *,
    caches: Sequence[str] = ("vllm",),
    what_if: bool = True,
    **options: Any,  # forwarded to AuditOptions, whose fields have their own types
) -> AuditReport:
    """Audit request logs: hit rate per cache model, a cause per miss, what-if gains.

    ``options`` are the fields of :class:`prefixlint.auditing.options.AuditOptions`
    (``block_size``, ``capacity_tokens``, ``tokenizer``, ``template``, ...). Returns an
    :class:`prefixlint.auditing.results.AuditReport`.
    """
    from prefixlint.auditing.options import AuditOptions
    from prefixlint.auditing.pipeline import run_audit

    chosen = AuditOptions(caches=tuple(caches), what_if=what_if, **options)
    return run_audit([str(p) for p in logs], chosen)
