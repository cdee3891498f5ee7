"""Database queries whose rows come back in no defined order: a SELECT of many rows without
ORDER BY, an ArangoDB AQL ``FOR ... RETURN`` without SORT, a Cypher ``MATCH ... RETURN``
without ORDER BY.

Without ``ORDER BY`` a database may return rows in any order, and it does change after
inserts, vacuums, reindexing or plan changes (whoz-oss/coday#1322: a tool list read from Neo4j
reordered after new integrations were added).
"""

from __future__ import annotations

import ast
import re

_COMMENT = re.compile(r"--[^\n]*|/\*.*?\*/", re.S)
_SELECT = re.compile(r"^\s*(?:with\b.*?\)\s*)?select\b(?P<columns>.*?)\bfrom\b", re.I | re.S)
_ORDER_BY = re.compile(r"\border\s+by\b", re.I)
_SINGLE_ROW = re.compile(r"\blimit\s+1\b|\bfetch\s+first\s+1\s+rows?\b", re.I)
_GROUP_BY = re.compile(r"\bgroup\s+by\b", re.I)
_AQL = re.compile(r"^\s*FOR\s+\w+\s+IN\b.*\bRETURN\b", re.I | re.S)
_AQL_SORT = re.compile(r"\bSORT\b", re.I)
_CYPHER = re.compile(r"^\s*(?:OPTIONAL\s+)?MATCH\b.*\bRETURN\b", re.I | re.S)
_AGGREGATE = re.compile(
    r"^\s*(?:(?:count|sum|min|max|avg)\s*\([^()]*\)(?:\s+as\s+\w+)?\s*,?\s*)+$", re.I
)


def query_text(node: ast.expr) -> str | None:
    """The static text of a query literal (f-string holes read as a placeholder)."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        return "".join(
            p.value if isinstance(p, ast.Constant) and isinstance(p.value, str) else "?"
            for p in node.values
        )
    return None


def is_unordered_query(node: ast.expr) -> bool:
    """A SELECT that can return several rows and has no ORDER BY."""
    text = query_text(node)
    if text is None:
        return False
    text = _COMMENT.sub(" ", text)
    if _AQL.match(text):
        return not _AQL_SORT.search(text) and not _SINGLE_ROW.search(text)
    if _CYPHER.match(text):
        return not _ORDER_BY.search(text) and not _SINGLE_ROW.search(text)
    match = _SELECT.match(text)
    if match is None or _ORDER_BY.search(text) or _SINGLE_ROW.search(text):
        return False
    return not (_AGGREGATE.match(match.group("columns")) and not _GROUP_BY.search(text))
