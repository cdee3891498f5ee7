"""The ``prefixlint`` command group: check, fix, rule, rules, tokens, audit, replay.

Each command lives in its own module of this package and is imported only when used, so
``check`` starts without loading the audit or the replay.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar, cast

import click

from prefixlint.linting.config import ConfigError
from prefixlint.tokenizers import TokenizerError

# A command's function, which option decorators return with an option added.
Callback = TypeVar("Callback", bound=Callable[..., Any])


class UserError(click.ClickException):
    """A usage or input error: printed as one line, exit code 2."""

    exit_code = 2


class PrefixlintGroup(click.Group):
    """Turns configuration and tokenizer errors from any command into :class:`UserError`.

    Commands are imported only when used (``prefixlint check`` loads no audit code).
    """

    lazy_commands: ClassVar[dict[str, tuple[str, str]]] = {
        "audit": ("prefixlint.cli.audit", "audit"),
        "check": ("prefixlint.cli.check", "check"),
        "fix": ("prefixlint.cli.check", "fix"),
        "replay": ("prefixlint.cli.replay", "replay"),
        "rule": ("prefixlint.cli.rules", "rule"),
        "rules": ("prefixlint.cli.rules", "list_rules"),
        "tokens": ("prefixlint.cli.tokens", "tokens"),
    }

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *self.lazy_commands])

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy_commands:
            module, attribute = self.lazy_commands[name]
            # The table names click commands.
            return cast(click.Command, getattr(importlib.import_module(module), attribute))
        return super().get_command(ctx, name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (ConfigError, TokenizerError) as exc:
            raise UserError(str(exc)) from None
        except BrokenPipeError:
            # The reader went away (``| head``): stop quietly, like other filters do.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(1)


@click.group(cls=PrefixlintGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="prefixlint")
def main() -> None:
    """Keep prompt prefixes stable so that prefix caches hit."""
