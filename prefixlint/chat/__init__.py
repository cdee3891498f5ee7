"""Chat requests to the text and tokens a model sees, with each component's place known.

:mod:`~prefixlint.chat.renderer` renders (Qwen3 by default, or a local Hugging Face chat
template through :mod:`~prefixlint.chat.hf`); :mod:`~prefixlint.chat.messages` brings logged
messages into template shape; :mod:`~prefixlint.chat.qwen3`, :mod:`~prefixlint.chat.pieces`
and :mod:`~prefixlint.chat.memo` are the template, its text pieces and the token memo.
"""

from prefixlint.chat.errors import TemplateError
from prefixlint.chat.messages import component_names, content_text, message_key, template_messages
from prefixlint.chat.renderer import DEFAULT_TEMPLATE, Renderer, get_renderer, render

__all__ = [
    "DEFAULT_TEMPLATE",
    "Renderer",
    "TemplateError",
    "component_names",
    "content_text",
    "get_renderer",
    "message_key",
    "render",
    "template_messages",
]
