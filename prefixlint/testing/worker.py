"""Run a prompt builder in this process and print its result as JSON.

``python -m prefixlint.testing.worker MODULE:FUNCTION`` reads ``{"args": [...], "kwargs":
{...}}`` on stdin. :func:`prefixlint.testing.assert_prefix_stable` starts it with different
``PYTHONHASHSEED`` values to catch prompts that depend on set or hash order.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable


def resolve(target: str) -> Callable[..., object]:
    """The function named by ``module:qualified.name``."""
    module_name, _, qualname = target.partition(":")
    if not module_name or not qualname:
        raise ValueError(f"builder must be given as 'module:function', not {target!r}")
    value: object = importlib.import_module(module_name)
    for part in qualname.split("."):
        value = getattr(value, part)
    if not callable(value):
        raise ValueError(f"builder {target!r} is not callable")
    return value


def main(argv: list[str] | None = None) -> int:
    """Run the builder ``argv[0]`` names on the arguments read from stdin."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m prefixlint.testing.worker MODULE:FUNCTION", file=sys.stderr)
        return 2
    request = json.load(sys.stdin)
    from prefixlint.testing.stability import to_json

    result = resolve(argv[0])(*request.get("args", ()), **request.get("kwargs", {}))
    json.dump(to_json(result), sys.stdout, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
