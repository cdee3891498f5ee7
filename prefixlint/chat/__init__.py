"""Chat requests to the text and tokens a model sees, with each component's place known.

:mod:`~prefixlint.chat.renderer` renders (Qwen3 by default, or a local Hugging Face chat
template through :mod:`~prefixlint.chat.hf`); :mod:`~prefixlint.chat.messages` brings logged
messages into template shape; :mod:`~prefixlint.chat.qwen3`, :mod:`~prefixlint.chat.pieces`
and :mod:`~prefixlint.chat.memo` are the template, its text pieces and the token memo;
:mod:`~prefixlint.chat.engines` is what each inference server does to a request first.
"""

from prefixlint.chat.engines import DEFAULT_ENGINE, ENGINES, engine_tokenizer
from prefixlint.chat.errors import TemplateError
from prefixlint.chat.messages import component_names, content_text, message_key, template_messages
from prefixlint.chat.renderer import DEFAULT_TEMPLATE, Renderer, get_renderer, render

__all__ = [
    "DEFAULT_ENGINE",
    "DEFAULT_TEMPLATE",
    "ENGINES",
    "Renderer",
    "TemplateError",
    "component_names",
    "content_text",
    "engine_tokenizer",
    "get_renderer",
    "message_key",
    "render",
    "template_messages",
]
