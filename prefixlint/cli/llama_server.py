"""The llama-server settings that the ``llamacpp`` cache model takes, as command-line options
with the server's own names (``--parallel``, ``--slot-prompt-similarity``, ``--cache-ram``,
``--cache-reuse``, ``--kv-unified``); shared by ``audit`` and ``replay``. Not given: the
server's defaults."""

from __future__ import annotations

from typing import Any

import click

from prefixlint.cli.group import Callback

OPTIONS = (
    click.option(
        "--parallel",
        "slots",
        type=click.IntRange(min=1),
        help="llama-server slots (llamacpp; default 4, as -np auto).",
    ),
    click.option(
        "--slot-prompt-similarity",
        type=click.FloatRange(0, 1),
        help="llama-server slot choice threshold (llamacpp; default 0.10).",
    ),
    click.option(
        "--cache-ram",
        "cache_ram_mib",
        type=click.IntRange(min=-1),
        help="llama-server host-RAM prompt cache in MiB, 0 off, -1 no limit (llamacpp; 8192).",
    ),
    click.option(
        "--cache-reuse",
        type=click.IntRange(min=0),
        help="llama-server min chunk to reuse by KV shifting, 0 off (llamacpp; default 0).",
    ),
    click.option(
        "--kv-unified/--no-kv-unified",
        default=None,
        help="llama-server unified KV cache (llamacpp; default: on when --parallel is not given).",
    ),
)
NAMES = ("slots", "slot_prompt_similarity", "cache_ram_mib", "cache_reuse", "kv_unified")


def llama_server_options(command: Callback) -> Callback:
    """Add the llama-server options to a click command."""
    for option in reversed(OPTIONS):
        command = option(command)
    return command


def llama_server_settings(options: dict[str, Any]) -> dict[str, Any]:
    """The llama-server settings among a command's parsed options (``None``: not given)."""
    return {name: options[name] for name in NAMES}
