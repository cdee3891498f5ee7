"""The names that the checks and the audit share: rule codes, miss causes, roles, characters.

A rule's documentation lives in ``rules/PFXnnn.toml``; code that needs a rule's code takes it
from here, so a typo is a ``NameError`` instead of a finding nobody can select, and a test
checks that these constants and the TOML files name the same rules.
"""

from __future__ import annotations

from typing import Final

# Volatile values (PFX1xx).
TIMESTAMP: Final = "PFX101"
UNIQUE_ID: Final = "PFX102"
PER_USER: Final = "PFX103"
ENVIRONMENT: Final = "PFX104"
# Order and structure (PFX2xx).
UNORDERED: Final = "PFX201"
KEY_ORDER: Final = "PFX202"
RANDOM_SELECTION: Final = "PFX203"
TOOL_SET: Final = "PFX204"
# Layout and provider rules (PFX3xx).
LAYOUT: Final = "PFX301"
BELOW_MINIMUM: Final = "PFX302"
BREAKPOINT: Final = "PFX303"
TOOL_PLACEMENT: Final = "PFX304"
# Bytes (PFX4xx).
LINE_ENDINGS: Final = "PFX401"
WHITESPACE_DRIFT: Final = "PFX402"
INVISIBLE: Final = "PFX403"
GLUED: Final = "PFX404"
# History and chat templates (PFX5xx).
HISTORY_EDIT: Final = "PFX501"
SLIDING_WINDOW: Final = "PFX502"
NON_MONOTONIC: Final = "PFX503"
TOOL_OUTPUT: Final = "PFX504"
# Request parameters (PFX6xx).
PARAMETER_CHANGE: Final = "PFX601"
# About prefixlint's own input (PFX9xx).
UNUSED_NOQA: Final = "PFX901"
UNPARSABLE: Final = "PFX902"

# Causes of a miss that are not rules: what a cache model or the attribution can say.
FIRST_SEEN: Final = "first-seen"
CONTENT_CHANGED: Final = "content-changed"
ARGUMENTS_RESERIALISED: Final = "tool-arguments-reserialised"
EVICTED: Final = "evicted"
TTL_EXPIRED: Final = "ttl-expired"
BELOW_CACHE_MINIMUM: Final = "below-minimum"

# Roles whose messages are the system prompt (OpenAI's ``developer`` replaces ``system``).
SYSTEM_ROLES: Final = frozenset({"system", "developer"})

# Characters that look like nothing or like a plain space, each with its name and what a fix
# writes instead (PFX403 in templates; removed or made plain when the audit compares texts).
INVISIBLE_CHARACTERS: Final = {
    "\ufeff": ("byte-order mark", ""),
    "\u200b": ("zero-width space", ""),
    "\u200c": ("zero-width non-joiner", ""),
    "\u200d": ("zero-width joiner", ""),
    "\u2060": ("word joiner", ""),
    "\u00ad": ("soft hyphen", ""),
    "\u00a0": ("no-break space", " "),
    "\u202f": ("narrow no-break space", " "),
    "\u2007": ("figure space", " "),
}
# ``str.translate`` table writing every invisible character as its replacement.
PLAIN_TEXT: Final = {ord(char): plain for char, (_, plain) in INVISIBLE_CHARACTERS.items()}
