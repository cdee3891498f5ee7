"""vLLM server settings shared by ``audit`` and ``replay``.

``--lora-modules``: the served LoRA adapters, as vLLM's OpenAI server takes them
(``vllm/entrypoints/openai/cli_args.py``, ``LoRAParserAction``): ``name=path`` or a JSON
object with ``name`` and ``path``; a request whose ``model`` is an adapter's name runs with
that adapter. Only the names matter to the cache.

``--vision-processor`` and ``--image-tokens``: the pad tokens each image part becomes (see
:mod:`prefixlint.chat.media`). vLLM counts them from the image's size with the model's image
processor; an image the log holds inline is sized from its header with the named
processor's geometry, any other (a remote URL) is ``--image-tokens``.
"""

from __future__ import annotations

import json

import click

from prefixlint.chat.media import DEFAULT_VISION, IMAGE_TOKENS, VISION_PROCESSORS
from prefixlint.cli.group import Callback


def adapter_name(value: str) -> str:
    """The adapter name in one ``--lora-modules`` value."""
    if value.lstrip().startswith("{"):
        try:
            data = json.loads(value)
        except json.JSONDecodeError as exc:
            raise click.BadParameter(f"{value!r}: invalid JSON: {exc}") from None
        name = data.get("name") if isinstance(data, dict) else None
        if not isinstance(name, str) or not name:
            raise click.BadParameter(f"{value!r}: a JSON LoRA module needs a name")
        return name
    name, sep, path = value.partition("=")
    if not sep or not name or not path:
        raise click.BadParameter(f"{value!r}: expected name=path or a JSON object")
    return name


def _names(_ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]) -> frozenset[str]:
    return frozenset(adapter_name(value) for value in values)


def vllm_server_options(command: Callback) -> Callback:
    """Add ``--lora-modules`` (repeatable; its value is a name set), ``--image-tokens`` and
    ``--vision-processor``."""
    lora = click.option(
        "--lora-modules",
        multiple=True,
        callback=_names,
        metavar="NAME=PATH",
        help="A LoRA adapter the vLLM server serves (repeatable): requests naming it get "
        "its own cache namespace.",
    )
    image = click.option(
        "--image-tokens",
        type=click.IntRange(min=1),
        default=IMAGE_TOKENS,
        show_default=True,
        help="Pad tokens per image or audio part whose size the log does not hold (--engine vllm).",
    )
    vision = click.option(
        "--vision-processor",
        type=click.Choice(sorted(VISION_PROCESSORS)),
        default=DEFAULT_VISION,
        show_default=True,
        help="The Qwen-VL image processor that sizes images held inline as data (--engine vllm).",
    )
    return lora(image(vision(command)))
