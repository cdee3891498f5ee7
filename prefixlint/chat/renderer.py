"""Render a :class:`~prefixlint.request.ChatRequest` to the text and tokens a model would see.

``render(request, template="qwen3", tokenizer="qwen")`` is the default: the official Qwen3
chat template (``fixtures/chat_templates/qwen3.jinja``, as shipped with the Qwen3 models) in
non-thinking use, rendered the way transformers renders it (``trim_blocks``,
``lstrip_blocks``, ``tojson`` = ``json.dumps(ensure_ascii=False)``) with
``add_generation_prompt=True`` and ``enable_thinking=False``, so every prompt ends with
``<|im_start|>assistant\\n<think>\\n\\n</think>\\n\\n``. The template is reimplemented in Python
(:mod:`prefixlint.chat.qwen3`) so that each component's place is known; tests prove the
text equals the Jinja template's output character for character.

Messages are first brought into the shape chat templates expect, as vLLM's OpenAI server does
before it applies a template (``vllm/entrypoints/chat_utils.py``): content given as a list of
parts is joined into one string, text parts separated by ``"\\n"``; ``None`` content becomes
``""``. Two more mappings keep the tokens faithful to what the request meant: a ``developer``
message is a system message (the OpenAI name for it since o1), and a legacy ``function``
message is a ``tool`` message; reasoning logged as ``thinking`` or ``reasoning`` is
``reasoning_content``, as transformers aliases it. Non-text parts (images, files, audio)
render as Qwen-VL's ``<|vision_start|><|image_pad|><|vision_end|>`` placeholder: the text
model sees their position, not their bytes (``engine="vllm"``: one pad token per image
embedding, :mod:`prefixlint.chat.media`).

Providers that do not use ChatML still get Qwen-vocabulary tokens, as a proxy for their own
(undisclosed) tokenization, so that prefix lengths and divergence points are comparable:

- ``anthropic`` requests are serialised in Anthropic's documented prefix order, tools, then
  system, then messages: the system turn opens with the tool block and the system text follows
  it (template name ``qwen3+anthropic-order``).
- ``openai-responses`` requests carry ``instructions`` as ``system`` (done by the log reader);
  they render like chat completions.

``template="hf:PATH"`` renders with a local Hugging Face tokenizer's own chat template (see
:mod:`prefixlint.chat.hf`).

Components, in prefix order, cover the whole text: ``system`` (the request's ``system``
field), ``messages[i]`` (``request.messages[i]``, its role header and end marker included; a
run of tool results shares Qwen's one ``user`` turn, which opens in the first and closes in
the last), ``tools`` (the tool block's fixed header and footer, a name that can occur twice),
``tools[i]``, and ``generation_prompt``. A token belongs to the component holding its first
character, so component token ranges partition the tokens even where BPE merges across a
boundary.

Token ids come from a per-renderer memo (:mod:`prefixlint.chat.memo`): the text is cut
at the tokenizer's special tokens (``<|im_start|>``, ``<|im_end|>``, ``<tool_call>``, ...),
each stretch of ordinary text between two special tokens is encoded once and remembered (LRU,
bounded), and the ids are concatenated. A BPE tokenizer never merges across a special token,
so this equals encoding the whole text (``tests/test_chat_memo.py`` checks it). Above that,
each turn of the Qwen3 template (the system turn, a message) starts at a special token, so a
turn is rendered and encoded once per distinct message and context and reused whole by later
requests (see :class:`Renderer`; ``tests/test_render_speedpaths.py`` checks it).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

from prefixlint.chat.engines import (
    DEFAULT_ENGINE,
    EngineView,
    check_engine,
    engine_view,
    logged_template_kwargs,
)
from prefixlint.chat.errors import TemplateError
from prefixlint.chat.media import (
    DEFAULT_VISION,
    IMAGE_PAD,
    IMAGE_TOKENS,
    VISION_PROCESSORS,
    expand_media,
    media_items,
)
from prefixlint.chat.memo import SegmentEncoder
from prefixlint.chat.messages import (
    Message,
    component_names,
    content_text,
    marshalled,
    message_key,
    message_name,
    template_message,
    template_messages,
    template_role,
)
from prefixlint.chat.pieces import (
    Block,
    Placed,
    assemble,
    encode_block,
    join_blocks,
    separable,
)
from prefixlint.chat.qwen3 import (
    generation_prompt,
    last_query_index,
    qwen3_pieces,
    system_turn,
    turn_context,
    turn_text,
)
from prefixlint.lru import LRU
from prefixlint.request import ChatRequest, Component, Rendered
from prefixlint.sequences import SameItemsMemo
from prefixlint.tokenizers import Tokenizer, get_tokenizer

if TYPE_CHECKING:
    from prefixlint.chat.hf import HFChatTemplate

DEFAULT_TEMPLATE = "qwen3"


class Renderer:
    """Renders requests with one template and tokenizer, remembering tokens.

    The Qwen3 template renders the system turn and each message on its own, given a little
    context (:func:`~prefixlint.chat.qwen3.turn_context`), and every turn starts at a
    special token. So each turn is encoded once into a block and remembered (LRU), keyed by
    :func:`message_key` and its context, and a request costs one lookup per message plus
    joining the blocks' text, ids and packed ids. When a tokenizer gives no such separation,
    the request is encoded whole (:meth:`render_whole`), as is every ``hf:`` template.
    """

    def __init__(
        self,
        template: str = DEFAULT_TEMPLATE,
        tokenizer: Tokenizer | str | None = None,
        *,
        enable_thinking: bool = False,
        engine: str = DEFAULT_ENGINE,
        cache_size: int = 4096,
        image_tokens: int = IMAGE_TOKENS,
        vision_processor: str = DEFAULT_VISION,
    ) -> None:
        self.template = template
        self.engine = check_engine(engine)
        self.image_tokens = image_tokens
        self.vision = VISION_PROCESSORS[vision_processor]
        self._pad: int | None = None  # the pad token's id, -1 if it is no single token
        # A server runs the template as the request says; Qwen3 thinks unless told not to.
        self.enable_thinking = enable_thinking if engine == DEFAULT_ENGINE else True
        self._hf: HFChatTemplate | None = None
        if template.startswith("hf:"):
            from prefixlint.chat.hf import HFChatTemplate

            self._hf = HFChatTemplate(template[3:], tokenizer, enable_thinking=enable_thinking)
            self.tokenizer = self._hf.tokenizer
            self.encoder = self._hf.encoder
            return
        if template != DEFAULT_TEMPLATE:
            raise TemplateError(f"unknown chat template {template!r}: use qwen3 or hf:PATH")
        if tokenizer is None or isinstance(tokenizer, str):
            tokenizer = get_tokenizer(tokenizer or "qwen")
        self.tokenizer = tokenizer
        self.encoder = SegmentEncoder(tokenizer, cache_size=cache_size)
        self.turns: LRU[Hashable, Block] = LRU(cache_size)
        self._placed: Placed = LRU(cache_size)
        self._prompts = {
            thinking: encode_block([generation_prompt(thinking)], self.encoder)
            for thinking in (False, True)
        }
        self._tools_key: SameItemsMemo[tuple[dict[str, Any], ...], bytes | None] = SameItemsMemo(
            marshalled
        )

    def render(self, request: ChatRequest) -> Rendered:
        """The request as the engine's server renders it (see :mod:`prefixlint.chat.engines`)."""
        view = engine_view(request, self.engine)
        if self._hf is not None:
            kwargs = view.template_kwargs
            if self.engine == DEFAULT_ENGINE:
                kwargs = {"enable_thinking": self.enable_thinking}
            return self._media(self._finish(self._hf.render(view.request, kwargs), view), view)
        thinking = view.enable_thinking(self.enable_thinking)
        blocks, names = self._blocks(view.request, thinking)
        if separable(blocks):
            rendered = join_blocks(blocks, names, _template_name(request), self._placed)
        else:
            rendered = self.render_whole(view.request, thinking)
        return self._media(self._finish(rendered, view), view)

    def _media(self, rendered: Rendered, view: EngineView) -> Rendered:
        """vLLM: each media item's pad tokens and identity (:mod:`prefixlint.chat.media`)."""
        if self.engine != "vllm":
            return rendered
        if self._pad is None:
            pad = self.tokenizer.encode(IMAGE_PAD)
            self._pad = pad[0] if len(pad) == 1 else -1
        if self._pad not in rendered.tokens:
            return rendered
        items = media_items(view.request, self.vision, self.image_tokens)
        return expand_media(rendered, items, self._pad)

    def template_kwargs(self, request: ChatRequest) -> dict[str, Any]:
        """The ``chat_template_kwargs`` a server needs to render ``request`` as this renderer
        does: the logged ones, with ``enable_thinking`` as assumed (the transformers default
        assumes ``false``; an engine reads the request's own)."""
        logged = logged_template_kwargs(request)
        if self.engine != DEFAULT_ENGINE:
            return logged
        return {**logged, "enable_thinking": self.enable_thinking}

    def render_whole(self, request: ChatRequest, thinking: bool | None = None) -> Rendered:
        """Render with the Qwen3 template, encoding the prompt as one block."""
        pieces = qwen3_pieces(
            template_messages(request),
            component_names(request),
            request.tools,
            enable_thinking=self.enable_thinking if thinking is None else thinking,
            tools_first=request.format == "anthropic",
        )
        return assemble(pieces, self.encoder, _template_name(request))

    def _finish(self, rendered: Rendered, view: EngineView) -> Rendered:
        """``rendered`` with the engine's changes after the template: no generation prompt,
        the final message left open, or text appended (see :class:`EngineView`)."""
        if view.add_generation_prompt and not view.continue_final_message and not view.suffix:
            return rendered
        pieces = [(c.name, rendered.text[c.char_start : c.char_end]) for c in rendered.components]
        if not view.add_generation_prompt:
            pieces = [piece for piece in pieces if piece[0] != "generation_prompt"]
        if view.continue_final_message:
            pieces = open_final_message(pieces, view.request)
        if not view.suffix:
            return assemble(pieces, self.encoder, rendered.template)
        # SGLang encodes the appended text on its own and joins the ids.
        name = message_name(len(view.request.messages))
        return append_encoded(rendered, name, view.suffix, self.tokenizer)

    def _blocks(self, request: ChatRequest, thinking: bool) -> tuple[list[Block], list[str]]:
        """The request's non-empty blocks (system turn, messages, generation prompt), and
        the component name of each block's unnamed part."""
        messages = request.messages
        offset = request.system is not None
        roles = [template_role(message.get("role")) for message in messages]
        if offset:
            roles.insert(0, "system")
        has_system = bool(roles) and roles[0] == "system"
        blocks = [self._system_block(request, has_system)]
        names = [""]
        if not blocks[0].text:
            blocks, names = [], []
        last_query = last_query_index(
            roles, lambda index: content_text(messages[index - offset].get("content"))
        )
        for index in range(has_system, len(roles)):
            block = self._turn_block(
                messages[index - offset], turn_context(roles, index, last_query)
            )
            if block.text:
                blocks.append(block)
                names.append(message_name(index - offset))
        blocks.append(self._prompts[thinking])
        names.append("")
        return blocks, names

    def _system_block(self, request: ChatRequest, has_system: bool) -> Block:
        if request.system is not None:
            name, text = "system", request.system
        elif has_system:
            name, text = "messages[0]", content_text(request.messages[0].get("content"))
        else:
            name, text = "", None
        tools_first = request.format == "anthropic"
        tools = self._tools_key(request.tools)
        key = None if tools is None else ("system turn", name, text, tools, tools_first)
        block = None if key is None else self.turns.recall(key)
        if block is None:
            pieces = system_turn(name, text, request.tools, tools_first)
            block = encode_block(pieces, self.encoder)
            if key is not None:
                self.turns.remember(key, block)
        return block

    def _turn_block(self, message: Message, context: tuple[bool, bool]) -> Block:
        found = message_key(message)
        key = None if found is None else (found, context)
        block = None if key is None else self.turns.recall(key)
        if block is None:
            text = turn_text(template_message(message), context)
            block = encode_block([(None, text)], self.encoder)
            if key is not None:
                self.turns.remember(key, block)
        return block


def open_final_message(
    pieces: list[tuple[str, str]], request: ChatRequest
) -> list[tuple[str, str]]:
    """The pieces cut right after the final message's text, as transformers'
    ``continue_final_message`` cuts the rendered prompt (at the last occurrence of the
    message's stripped content)."""
    final = content_text(request.messages[-1].get("content")).strip() if request.messages else ""
    text = "".join(piece for _, piece in pieces)
    end = text.rfind(final) + len(final) if final and final in text else len(text)
    kept, position = [], 0
    for name, piece in pieces:
        if position >= end:
            break
        kept.append((name, piece[: end - position]))
        position += len(piece)
    return kept


def append_encoded(rendered: Rendered, name: str, text: str, tokenizer: Tokenizer) -> Rendered:
    """``rendered`` followed by ``text`` encoded on its own, as component ``name``."""
    ids = tuple(tokenizer.encode(text))
    component = Component(
        name,
        len(rendered.text),
        len(rendered.text) + len(text),
        len(rendered.tokens),
        len(rendered.tokens) + len(ids),
    )
    return Rendered(
        rendered.text + text,
        rendered.tokens + ids,
        (*rendered.components, component),
        rendered.template,
    )


def _template_name(request: ChatRequest) -> str:
    return "qwen3+anthropic-order" if request.format == "anthropic" else "qwen3"


_RENDERERS: dict[tuple[str, Tokenizer | str | None, bool, str, int, str], Renderer] = {}


def get_renderer(
    template: str = DEFAULT_TEMPLATE,
    tokenizer: Tokenizer | str | None = None,
    *,
    enable_thinking: bool = False,
    engine: str = DEFAULT_ENGINE,
    image_tokens: int = IMAGE_TOKENS,
    vision_processor: str = DEFAULT_VISION,
) -> Renderer:
    """A renderer shared per (template, tokenizer, thinking, engine, media sizing), so its
    memo is too."""
    key = (template, tokenizer, enable_thinking, engine, image_tokens, vision_processor)
    if key not in _RENDERERS:
        _RENDERERS[key] = Renderer(
            template,
            tokenizer,
            enable_thinking=enable_thinking,
            engine=engine,
            image_tokens=image_tokens,
            vision_processor=vision_processor,
        )
    return _RENDERERS[key]


def render(
    request: ChatRequest,
    *,
    template: str = DEFAULT_TEMPLATE,
    tokenizer: Tokenizer | str | None = None,
    enable_thinking: bool = False,
    engine: str = DEFAULT_ENGINE,
) -> Rendered:
    """Render ``request`` to text, tokens and components (see the module docstring)."""
    renderer = get_renderer(template, tokenizer, enable_thinking=enable_thinking, engine=engine)
    return renderer.render(request)
