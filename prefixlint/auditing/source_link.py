"""Link a logged cache miss to the line of template or Python code that caused it.

``audit --source DIR`` checks DIR and indexes its static text: in a template or prompt file
the text before each placeholder, in Python the string pieces before each interpolated value
(f-strings, ``%``/``format`` fields, ``replace`` markers, a string followed by ``+``). A miss
whose requests first differ at character *c* is linked to the pieces whose text ends the
rendered prompt just before *c* (the value that changed is the one that follows them), and to
the findings that ``check`` reports on that line. Reading Python means parsing it with
``ast``: nothing is imported or run.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from prefixlint import codes
from prefixlint.lines import LineIndex
from prefixlint.linting.config import Settings
from prefixlint.linting.engine import FileResult, check_file
from prefixlint.linting.files import collect_files
from prefixlint.lru import LRU
from prefixlint.sources.python import parsed_quietly
from prefixlint.types import Diagnostic

# Static text this long, ending right before the changed value, identifies its source.
KEY_CHARS = 12
# How far before the first differing character the changed value may start.
VALUE_REACH = 96
# Placeholders in templates and prompt strings: Jinja and mustache, ${x}, {x}, %(x)s.
PLACEHOLDER = re.compile(
    r"\{\{.*?\}\}|\{%.*?%\}|\$\{[^}\n]*\}|\{[A-Za-z_$][\w.$ ]*(?:[!:][^{}\n]*)?\}|%\([\w.]+\)[a-z]",
    re.S,
)
# A finding of these families names what changed better than the audit's generic causes.
REFINING_FAMILIES = ("PFX1", "PFX2", "PFX4")
GENERIC_CAUSES = frozenset({codes.HISTORY_EDIT, "content-changed"})
PARSE_ERROR = codes.UNPARSABLE
MEMO_SIZE = 65_536


@dataclass(frozen=True)
class SourceRef:
    """A source line a miss is linked to, with the code of the finding there (or the miss's
    own cause when ``check`` reports nothing on that line)."""

    path: str
    line: int
    code: str
    finding: bool


@dataclass(frozen=True)
class Anchor:
    """Static text that ends where a dynamic value starts, at ``path:line``."""

    text: str
    path: str
    line: int


def template_anchors(path: str, text: str) -> Iterator[Anchor]:
    """The text before each placeholder of a template or prompt file, on the placeholder's line."""
    lines = LineIndex(text)
    previous = 0
    for match in PLACEHOLDER.finditer(text):
        if match.start() > previous:
            yield Anchor(text[previous : match.start()], path, lines.position(match.start())[0])
        previous = match.end()


def python_anchors(path: str, text: str) -> Iterator[Anchor]:
    """The string pieces of a Python file that a dynamic value follows, on that value's line."""
    tree = parsed_quietly(text)
    if tree is None:
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            pieces = node.values
            for before, value in itertools.pairwise(pieces):
                if isinstance(value, ast.FormattedValue) and _text(before):
                    yield Anchor(_text(before), path, value.value.lineno)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and _text(node.left):
            if not _text(node.right):
                yield Anchor(_text(node.left), path, node.right.lineno)
        elif isinstance(node, ast.Constant) and _text(node):
            yield from template_anchors_in_string(_text(node), path, node.lineno)


def template_anchors_in_string(value: str, path: str, first_line: int) -> Iterator[Anchor]:
    """Anchors of a string constant that holds placeholders (``format``, ``%``, markers)."""
    for anchor in template_anchors(path, value):
        line = first_line + anchor.line - 1 if "\n" in value else first_line
        yield Anchor(anchor.text, path, line)


def _text(node: ast.AST) -> str:
    """The string a constant node holds, else ``""``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return ""


class SourceIndex:
    """The static text and the findings of a source tree, for linking misses to lines."""

    def __init__(self, anchors: Iterable[Anchor], findings: Iterable[Diagnostic]) -> None:
        self._by_key: dict[str, list[Anchor]] = defaultdict(list)
        for anchor in anchors:
            if len(anchor.text) >= KEY_CHARS:
                self._by_key[anchor.text[-KEY_CHARS:]].append(anchor)
        self._findings: dict[tuple[str, int], list[Diagnostic]] = defaultdict(list)
        for finding in findings:
            self._findings[finding.span.path, finding.span.line].append(finding)
        # Misses of one breaker share their window: each is matched once (bounded).
        self._memo: LRU[tuple[str, str], tuple[SourceRef, ...]] = LRU(MEMO_SIZE)

    @classmethod
    def build(cls, paths: Sequence[str], settings: Settings | None = None) -> SourceIndex:
        """Check ``paths`` and index their static text; unreadable files are passed over."""
        settings = settings or Settings()
        files, _errors = collect_files(paths, settings, False)
        return cls.from_results([check_file(path, settings) for path in files])

    @classmethod
    def from_results(cls, results: Iterable[FileResult]) -> SourceIndex:
        """Index files that were checked already (``check --with-log``).

        A file the check could not parse (PFX902: a syntax error, or past a depth or size
        limit) gives no anchors: its text is never handed to a parser here either.
        """
        anchors: list[Anchor] = []
        findings: list[Diagnostic] = []
        for result in results:
            findings.extend(result.diagnostics)
            unparsable = any(d.code == PARSE_ERROR for d in result.diagnostics)
            if result.text is not None and not unparsable:
                python = result.path.endswith((".py", ".pyi"))
                reader = python_anchors if python else template_anchors
                anchors.extend(reader(result.path, result.text.replace("\r\n", "\n")))
        return cls(anchors, findings)

    def locate(self, before: str, cause: str) -> tuple[SourceRef, ...]:
        """The source lines whose static text ends ``before`` (the prompt up to the first
        differing character), nearest the difference first; empty when none matches."""
        window = before[-(VALUE_REACH + 4 * KEY_CHARS) :]
        key = (window, cause)
        found: tuple[SourceRef, ...] | None = self._memo.recall(key)
        if found is None:
            found = self._locate(window, cause)
            self._memo.remember(key, found)
        return found

    def _locate(self, window: str, cause: str) -> tuple[SourceRef, ...]:
        lowest = max(KEY_CHARS, len(window) - VALUE_REACH)
        for end in range(len(window), lowest - 1, -1):
            found = [
                anchor
                for anchor in self._by_key.get(window[end - KEY_CHARS : end], ())
                if window[:end].endswith(anchor.text[-4 * KEY_CHARS :])
                or anchor.text.endswith(window[:end])
            ]
            if found:
                places = dict.fromkeys((a.path, a.line) for a in found)
                return tuple(self._ref(path, line, cause) for path, line in places)
        return ()

    def _ref(self, path: str, line: int, cause: str) -> SourceRef:
        findings = self._findings.get((path, line), [])
        same = [f for f in findings if f.code == cause]
        chosen = same or [f for f in findings if f.code.startswith(REFINING_FAMILIES)]
        if chosen:
            return SourceRef(path, line, chosen[0].code, True)
        return SourceRef(path, line, cause, False)


def refined_cause(cause: str, refs: Sequence[SourceRef]) -> str:
    """The miss's cause, or the code of the finding it is linked to where the code knows
    better: when the audit's cause is generic (an edit of the history, changed content), or
    of the same family but guessed from the text alone (``api-3b1d8`` reads like an id; the
    code says it is ``socket.gethostname()``, PFX104)."""
    for ref in refs:
        if not ref.finding or not ref.code.startswith(REFINING_FAMILIES):
            continue
        if cause in GENERIC_CAUSES or ref.code[:4] == cause[:4]:
            return ref.code
    return cause
