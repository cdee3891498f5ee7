"""Counts in messages: ``1 token``, ``2 tokens``, ``12,270 requests``."""

from __future__ import annotations


def counted(count: int, noun: str) -> str:
    """``count`` with thousands separators and ``noun``, plural unless the count is 1."""
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"
