"""Chat templates: Jinja programs that turn ``messages`` and ``tools`` into a prompt."""

from __future__ import annotations

import re
from pathlib import PurePath

_JINJA_SUFFIXES = {".jinja", ".jinja2", ".j2"}
_MESSAGES_LOOP = re.compile(r"\{%-?\s*for\s+\w+\s+in\s+(?:loop_)?messages\b")


def looks_like_chat_template(path: str, text: str) -> bool:
    """A ``tokenizer_config.json`` with a ``chat_template``, or Jinja that loops over messages."""
    name = PurePath(path).name.lower()
    if name == "tokenizer_config.json":
        return '"chat_template"' in text
    if PurePath(name).suffix in _JINJA_SUFFIXES:
        return bool(_MESSAGES_LOOP.search(text)) and "add_generation_prompt" in text
    return False
