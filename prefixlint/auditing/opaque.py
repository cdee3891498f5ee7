"""Short opaque tokens that differ between two requests: host names, replica names, hex ids.

``api-1.prod.internal`` / ``api-2.prod.internal``, ``billing-2`` / ``billing-3`` or
``9f3ab2`` / ``c41d07`` in a system prompt are values of the machine or deployment that
served the request, or ids: never an edit of the conversation. The code comes from the
words before the token on its line (``host:``, ``replica``, ``request id``), else from the
token's shape.
"""

from __future__ import annotations

import re
from functools import lru_cache

from prefixlint import codes, vocabulary

MAX_TOKEN_CHARS = 64
# ``@`` keeps an e-mail address one token: its domain is not a host that served the request.
_TOKEN_CHAR = re.compile(r"[A-Za-z0-9_.\-@]")
_HOST = re.compile(r"(?=.*[A-Za-z])[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)+")
_NUMBERED_NAME = re.compile(r"[A-Za-z][A-Za-z_]*(?:[-_]\d+)+")
_HEX = re.compile(r"(?=.*\d)(?=.*[a-fA-F])[0-9a-fA-F]{6,}")
_ID = re.compile(r"(?=(?:.*\d){3})(?=.*[A-Za-z])[A-Za-z0-9][\w-]{5,}")
_LABEL_WORD = re.compile(r"[A-Za-z]+")
_TOKEN_RUN = re.compile(r"[A-Za-z0-9_.\-@]+")
# A token worth a look holds a digit, or is dotted like a host name.
_OPAQUE = re.compile(r"\d|[A-Za-z]\.[A-Za-z]")
# Words before a token that say it names the machine or deployment that served the request.
ENVIRONMENT_WORDS = frozenset(
    {
        "host", "hostname", "server", "node", "replica", "pod", "instance", "machine",
        "worker", "region", "zone", "cluster", "shard", "datacenter", "container", "runner",
        "deployment", "backend", "pid", "environment", "env",
    }
)  # fmt: skip
ID_WORDS = frozenset(
    {"id", "ids", "token", "nonce", "trace", "span", "request", "uuid", "guid", "tag", "key"}
)


def token_span(text: str, offset: int) -> tuple[int, int]:
    """The run of token characters (letters, digits, ``_.-@``) around ``offset``, without
    trailing punctuation."""
    start = offset
    while start > 0 and _TOKEN_CHAR.match(text[start - 1]):
        start -= 1
    end = offset
    while end < len(text) and _TOKEN_CHAR.match(text[end]):
        end += 1
    while end > start and text[end - 1] in ".-_":
        end -= 1
    return start, max(end, start)


@lru_cache(maxsize=4096)
def context_code(label: str) -> str | None:
    """PFX102/PFX104 from the words before a token on its line (at most the last three);
    remembered per label, as a stamped line repeats its labels on every request."""
    words = [w.lower() for w in _LABEL_WORD.findall(label)][-3:]
    for size in range(len(words), 0, -1):
        code = vocabulary.classify_name(" ".join(words[-size:]))
        if code in (codes.UNIQUE_ID, codes.ENVIRONMENT):
            return code
    if words and words[-1] in ENVIRONMENT_WORDS:
        return codes.ENVIRONMENT
    if words and words[-1] in ID_WORDS:
        return codes.UNIQUE_ID
    return None


def shape_code(token: str) -> str | None:
    """PFX104 for a host name or a numbered name (``web-3``, ``ip-10-0-3-17``), PFX102 for a
    hex or mixed id."""
    if _HOST.fullmatch(token) or _NUMBERED_NAME.fullmatch(token):
        return codes.ENVIRONMENT
    if _HEX.fullmatch(token) or _ID.fullmatch(token):
        return codes.UNIQUE_ID
    return None


def opaque_code(a: str, b: str, offset: int, resync: int) -> str | None:
    """PFX102/PFX104 when ``a`` and ``b`` first differ (at ``offset``) inside one short token
    each, the texts agree again for ``resync`` characters after them (or to the end), and the
    context or shape of both tokens says what they are."""
    start, end_a = token_span(a, offset)
    _, end_b = token_span(b, offset)
    token_a, token_b = a[start:end_a], b[start:end_b]
    if not token_a or not token_b or max(len(token_a), len(token_b)) > MAX_TOKEN_CHARS:
        return None
    if a[end_a : end_a + resync] != b[end_b : end_b + resync]:
        return None
    label = a[a.rfind("\n", 0, start) + 1 : start]
    code = context_code(label)
    if code is not None:
        return code
    shape = shape_code(token_a)
    return shape if shape is not None and shape == shape_code(token_b) else None


def opaque_line_code(line: str, max_label: int) -> str | None:
    """PFX102/PFX104 when ``line`` is short labels and opaque tokens (``Served by host:
    api-1.prod.internal``, ``Replica: billing-2``, ``pid 4123 on replica 3``), each token named
    by the words before it, else by the line's label (``Environment: python 3.11.4``), else
    by its shape; the code of the first."""
    spans = []
    for token in _TOKEN_RUN.finditer(line):
        if not _OPAQUE.search(token.group()):
            continue
        start, end = token.start(), token.end()
        while end > start and line[end - 1] in ".-_":
            end -= 1
        spans.append((start, end))
    if not spans or any(end - start > MAX_TOKEN_CHARS for start, end in spans):
        return None
    if len(line) - sum(end - start for start, end in spans) > max_label:
        return None
    colon = line.find(":", 0, spans[0][0])
    labelled = context_code(line[:colon]) if colon > 0 else None
    found = [
        context_code(line[previous:start]) or labelled or shape_code(line[start:end])
        for previous, (start, end) in zip([0, *(end for _, end in spans)], spans, strict=False)
    ]
    return found[0] if all(found) else None
