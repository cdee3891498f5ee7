"""What a checker gets besides the text: the file, the enabled rules, options, the tokenizer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from prefixlint import registry
from prefixlint.limits import Limits
from prefixlint.tokenizers import DEFAULT_TOKENIZER, Tokenizer, get_tokenizer


class SourceError(Exception):
    """A file could not be parsed; reported as PFX902 at ``line``:``column``."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


@dataclass(frozen=True)
class RuleContext:
    """Settings that apply to one file being checked."""

    path: str
    enabled: frozenset[str]
    tokenizer_spec: str = DEFAULT_TOKENIZER
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    limits: Limits = field(default_factory=Limits)

    @property
    def tokenizer(self) -> Tokenizer:
        return get_tokenizer(self.tokenizer_spec)

    def option(self, code: str, key: str) -> Any:
        """A rule option: the user's value from config, else the default in the rule's TOML."""
        user = self.options.get(code, {})
        if key in user:
            return user[key]
        defaults = registry.doc(code).options
        if key not in defaults:
            raise KeyError(f"{code} has no option {key!r}")
        return defaults[key]

    def is_enabled(self, code: str) -> bool:
        return code in self.enabled
