"""Checkers for Python source that builds prompts (documents from ``prefixlint.sources.python``)."""
