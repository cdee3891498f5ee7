"""The command line; ``prefixlint = "prefixlint.cli:main"``."""

from prefixlint.cli.group import main

__all__ = ["main"]
