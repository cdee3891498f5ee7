"""Per-file check results kept on disk, like ``.ruff_cache``: a file whose text, path,
prefixlint version and effective settings are unchanged is not checked again.

The folder (``.prefixlint_cache`` in the project root unless ``cache-dir``, ``--cache-dir`` or
``PREFIXLINT_CACHE_DIR`` says otherwise) holds a ``CACHEDIR.TAG``, a ``.gitignore`` of ``*``,
and one JSON file per result under a folder for the version. Entries are plain JSON read back
field by field (never unpickled), and any entry that does not read back is a miss.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import prefixlint
from prefixlint.linting.config import Settings
from prefixlint.types import Applicability, Diagnostic, Edit, Fix, Severity, Span

DEFAULT_FOLDER = ".prefixlint_cache"
ENVIRONMENT_VARIABLE = "PREFIXLINT_CACHE_DIR"
_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by prefixlint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)


def cache_folder(settings: Settings, given: str | None = None) -> Path:
    """Where results are kept: ``given`` (``--cache-dir``), the environment, the setting, or
    ``.prefixlint_cache`` in the project root; relative paths are from the root."""
    chosen = given or os.environ.get(ENVIRONMENT_VARIABLE) or settings.cache_dir
    return Path(settings.root) / (chosen or DEFAULT_FOLDER)


@dataclass(frozen=True)
class ResultCache:
    """The results of one version and settings in ``folder``; picklable for workers."""

    folder: str
    settings_key: str

    @classmethod
    def open(cls, folder: Path, settings: Settings) -> ResultCache:
        """The cache in ``folder``, created with its tag and ``.gitignore`` if new."""
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in (("CACHEDIR.TAG", _TAG), (".gitignore", "*\n")):
            marker = folder / name
            if not marker.exists():
                marker.write_text(text, encoding="utf-8")
        settings_key = hashlib.sha256(repr(settings).encode()).hexdigest()
        versioned = folder / prefixlint.__version__
        versioned.mkdir(exist_ok=True)
        return cls(str(versioned), settings_key)

    def _entry(self, path: str, text: str) -> Path:
        digest = hashlib.sha256()
        for part in (self.settings_key, path, text):
            digest.update(part.encode("utf-8", "surrogatepass"))
            digest.update(b"\0")
        return Path(self.folder) / f"{digest.hexdigest()}.json"

    def get(self, path: str, text: str) -> list[Diagnostic] | None:
        """The diagnostics kept for ``text`` at ``path``, or ``None`` on a miss."""
        try:
            data = json.loads(self._entry(path, text).read_text(encoding="utf-8"))
            return [_diagnostic(item) for item in data]
        except (OSError, ValueError, TypeError, KeyError):
            return None

    def put(self, path: str, text: str, diagnostics: list[Diagnostic]) -> None:
        """Keep ``diagnostics``; results that do not fit in JSON, or a full disk, are skipped."""
        try:
            data = json.dumps([_record(d) for d in diagnostics])
            back = [_diagnostic(item) for item in json.loads(data)]
        except (TypeError, ValueError):
            return
        if [(d, d.extra) for d in back] != [(d, d.extra) for d in diagnostics]:
            return  # tuples in ``extra`` would come back as lists
        entry = self._entry(path, text)
        try:
            handle, temporary = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(data)
            os.replace(temporary, entry)
        except OSError:
            return


def _record(d: Diagnostic) -> dict[str, Any]:
    s = d.span
    fix = d.fix
    return {
        "code": d.code,
        "name": d.name,
        "message": d.message,
        "span": [s.path, s.line, s.column, s.end_line, s.end_column],
        "severity": d.severity.value,
        "fix": None
        if fix is None
        else {
            "edits": [[e.start, e.end, e.replacement] for e in fix.edits],
            "applicability": fix.applicability.value,
            "message": fix.message,
        },
        "stable_prefix_tokens": d.stable_prefix_tokens,
        "unstable_tokens": d.unstable_tokens,
        "extra": d.extra,
    }


def _diagnostic(item: dict[str, Any]) -> Diagnostic:
    path, line, column, end_line, end_column = item["span"]
    fix = item["fix"]
    return Diagnostic(
        code=str(item["code"]),
        name=str(item["name"]),
        message=str(item["message"]),
        span=Span(str(path), int(line), int(column), int(end_line), int(end_column)),
        severity=Severity(item["severity"]),
        fix=None
        if fix is None
        else Fix(
            tuple(Edit(int(a), int(b), str(r)) for a, b, r in fix["edits"]),
            Applicability(fix["applicability"]),
            str(fix["message"]),
        ),
        stable_prefix_tokens=item["stable_prefix_tokens"],
        unstable_tokens=item["unstable_tokens"],
        extra=dict(item["extra"]),
    )
