"""Rich markup to text, with colour only when asked for."""

from __future__ import annotations

import io
import os
import sys

from rich.console import Console


def wants_color(stream: object) -> bool:
    """Colour for a terminal, unless ``NO_COLOR`` is set (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream if stream is not None else sys.stdout, "isatty", None)
    return bool(isatty and isatty())


def to_text(markup: str, color: bool) -> str:
    """Render rich ``markup`` as plain text, or with ANSI colours when ``color``."""
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        force_terminal=color,
        no_color=not color,
        color_system="standard" if color else None,
        width=10_000,
        highlight=False,
        soft_wrap=True,
    )
    console.print(markup, end="")
    return buffer.getvalue()
