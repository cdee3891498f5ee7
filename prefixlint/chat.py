"""Render a :class:`~prefixlint.request.ChatRequest` to the text and tokens a model would see.

``render(request, template="qwen3", tokenizer="qwen")`` is the default: the official Qwen3
chat template (``fixtures/chat_templates/qwen3.jinja``, as shipped with the Qwen3 models) in
non-thinking use, rendered the way transformers renders it (``trim_blocks``,
``lstrip_blocks``, ``tojson`` = ``json.dumps(ensure_ascii=False)``) with
``add_generation_prompt=True`` and ``enable_thinking=False``, so every prompt ends with
``<|im_start|>assistant\\n<think>\\n\\n</think>\\n\\n``. The template is reimplemented in Python
(:mod:`prefixlint.chat_formats.qwen3`) so that each component's place is known; tests prove the
text equals the Jinja template's output character for character.

Messages are first brought into the shape chat templates expect, as vLLM's OpenAI server does
before it applies a template (``vllm/entrypoints/chat_utils.py``): content given as a list of
parts is joined into one string, text parts separated by ``"\\n"``; ``None`` content becomes
``""``. Two more mappings keep the tokens faithful to what the request meant: a ``developer``
message is a system message (the OpenAI name for it since o1), and a legacy ``function``
message is a ``tool`` message; reasoning logged as ``thinking`` or ``reasoning`` is
``reasoning_content``, as transformers aliases it. Non-text parts (images, files, audio)
render as Qwen-VL's ``<|vision_start|><|image_pad|><|vision_end|>`` placeholder: the text
model sees their position, not their bytes.

Providers that do not use ChatML still get Qwen-vocabulary tokens, as a proxy for their own
(undisclosed) tokenization, so that prefix lengths and divergence points are comparable:

- ``anthropic`` requests are serialised in Anthropic's documented prefix order, tools, then
  system, then messages: the system turn opens with the tool block and the system text follows
  it (template name ``qwen3+anthropic-order``).
- ``openai-responses`` requests carry ``instructions`` as ``system`` (done by the log reader);
  they render like chat completions.

``template="hf:PATH"`` renders with a local Hugging Face tokenizer's own chat template (see
:mod:`prefixlint.chat_formats.hf`).

Components, in prefix order, cover the whole text: ``system`` (the request's ``system``
field), ``messages[i]`` (``request.messages[i]``, its role header and end marker included; a
run of tool results shares Qwen's one ``user`` turn, which opens in the first and closes in
the last), ``tools`` (the tool block's fixed header and footer, a name that can occur twice),
``tools[i]``, and ``generation_prompt``. A token belongs to the component holding its first
character, so component token ranges partition the tokens even where BPE merges across a
boundary.

Token ids come from a per-renderer memo (:mod:`prefixlint.chat_formats.memo`): the text is cut
at the tokenizer's special tokens (``<|im_start|>``, ``<|im_end|>``, ``<tool_call>``, ...),
each stretch of ordinary text between two special tokens is encoded once and remembered (LRU,
bounded), and the ids are concatenated. A BPE tokenizer never merges across a special token,
so this equals encoding the whole text (``tests/test_chat_memo.py`` checks it).
"""

from __future__ import annotations

from prefixlint.chat_formats import TemplateError
from prefixlint.chat_formats.memo import SegmentEncoder
from prefixlint.chat_formats.pieces import assemble
from prefixlint.chat_formats.qwen3 import qwen3_pieces, tojson
from prefixlint.request import ChatRequest, Rendered
from prefixlint.tokenizers import Tokenizer, get_tokenizer

DEFAULT_TEMPLATE = "qwen3"
IMAGE_PLACEHOLDER = "<|vision_start|><|image_pad|><|vision_end|>"
TEXT_PART_TYPES = frozenset({"text", "input_text", "output_text"})
ROLE_ALIASES = {"developer": "system", "function": "tool"}
# transformers (``_alias_reasoning_fields``) and vLLM accept reasoning under these names.
REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")


def part_text(part) -> str:
    """One content part as text: text parts as is, media as a placeholder, data as JSON."""
    if isinstance(part, str):
        return part
    if isinstance(part, dict) and "type" in part:
        if part["type"] in TEXT_PART_TYPES:
            return str(part.get("text", ""))
        return IMAGE_PLACEHOLDER
    if isinstance(part, dict) and set(part) == {"text"}:
        return str(part["text"])
    return tojson(part)


def content_text(content) -> str:
    """The text a chat template sees for a message's ``content``.

    A string stays as is, None is empty, a list of parts is joined by newlines (vLLM), and
    structured data without a part ``type`` (a tool result logged as an object) is JSON.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part_text(part) for part in content)
    return part_text(content)


def template_messages(request: ChatRequest) -> list[dict]:
    """The request's messages as a chat template receives them, system prompt first."""
    messages = []
    if request.system is not None:
        messages.append({"role": "system", "content": request.system})
    for message in request.messages:
        prepared = dict(message)
        role = prepared.get("role")
        prepared["role"] = ROLE_ALIASES.get(role, role)
        prepared["content"] = content_text(prepared.get("content"))
        reasoning = next((message[k] for k in REASONING_FIELDS if message.get(k) is not None), None)
        if reasoning is not None:
            prepared["reasoning_content"] = reasoning
        messages.append(prepared)
    return messages


def component_names(request: ChatRequest) -> list[str]:
    """Names of :func:`template_messages` entries, as components: ``system``, ``messages[i]``."""
    names = ["system"] if request.system is not None else []
    names.extend(f"messages[{i}]" for i in range(len(request.messages)))
    return names


class Renderer:
    """Renders requests with one template and tokenizer, remembering segment tokens."""

    def __init__(
        self,
        template: str = DEFAULT_TEMPLATE,
        tokenizer: Tokenizer | str | None = None,
        *,
        enable_thinking: bool = False,
        cache_size: int = 4096,
    ) -> None:
        self.template = template
        self.enable_thinking = enable_thinking
        if template.startswith("hf:"):
            from prefixlint.chat_formats.hf import HFChatTemplate

            self._hf = HFChatTemplate(template[3:], tokenizer, enable_thinking=enable_thinking)
            self.tokenizer = self._hf.tokenizer
            self.encoder = self._hf.encoder
            return
        if template != DEFAULT_TEMPLATE:
            raise TemplateError(f"unknown chat template {template!r}: use qwen3 or hf:PATH")
        self._hf = None
        if tokenizer is None or isinstance(tokenizer, str):
            tokenizer = get_tokenizer(tokenizer or "qwen")
        self.tokenizer = tokenizer
        self.encoder = SegmentEncoder(tokenizer, cache_size=cache_size)

    def render(self, request: ChatRequest) -> Rendered:
        if self._hf is not None:
            return self._hf.render(request)
        anthropic_order = request.format == "anthropic"
        pieces = qwen3_pieces(
            template_messages(request),
            component_names(request),
            request.tools,
            enable_thinking=self.enable_thinking,
            tools_first=anthropic_order,
        )
        name = "qwen3+anthropic-order" if anthropic_order else "qwen3"
        return assemble(pieces, self.encoder, name)


_RENDERERS: dict[tuple, Renderer] = {}


def get_renderer(
    template: str = DEFAULT_TEMPLATE,
    tokenizer: Tokenizer | str | None = None,
    *,
    enable_thinking: bool = False,
) -> Renderer:
    """A renderer shared per (template, tokenizer, thinking), so its memo is shared too."""
    key = (template, tokenizer, enable_thinking)
    if key not in _RENDERERS:
        _RENDERERS[key] = Renderer(template, tokenizer, enable_thinking=enable_thinking)
    return _RENDERERS[key]


def render(
    request: ChatRequest,
    *,
    template: str = DEFAULT_TEMPLATE,
    tokenizer: Tokenizer | str | None = None,
    enable_thinking: bool = False,
) -> Rendered:
    """Render ``request`` to text, tokens and components (see the module docstring)."""
    return get_renderer(template, tokenizer, enable_thinking=enable_thinking).render(request)
