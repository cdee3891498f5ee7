"""What an inference server does to a logged OpenAI request before its chat template runs.

``--engine`` picks the server whose rendering the audit and the replay reproduce:

- ``transformers`` (the default): the request as logged, rendered the way
  ``apply_chat_template`` renders it with ``enable_thinking=False`` and a generation prompt;
  ``chat_template_kwargs`` and the other server parameters are not read.
- ``vllm``: vLLM's OpenAI server, ``vllm/entrypoints/chat_utils`` ``_postprocess_messages``
  (vLLM 0.33, read from ``vllm-project/vllm`` main, late 2026): each assistant tool call's
  ``arguments`` string is parsed into an object (empty, invalid JSON, or JSON that is not an
  object becomes ``{}``), so the template's ``tojson`` writes it back with its own spacing
  (``{"user_id": "x"}``); an empty ``tool_calls`` list is dropped. The request's
  ``chat_template_kwargs`` reach the template (``enable_thinking`` undefined means thinking on
  for Qwen3), ``add_generation_prompt`` (default true) and ``continue_final_message`` (default
  false: the last assistant message is left open, its end marker cut, as transformers'
  ``continue_final_message`` does) are honoured; ``cache_salt`` salts the first block (the
  ``vllm`` cache model).
- ``sglang``: SGLang's OpenAI server, ``python/sglang/srt/entrypoints/openai/serving_chat.py``
  ``_apply_jinja_template`` and ``_handle_last_assistant_message`` (``sgl-project/sglang``
  main, late 2026): ``arguments`` strings are parsed with ``orjson`` (an empty, ``null`` or
  ``None`` string is ``{}``, invalid JSON is a 400 error); a final assistant message with
  string content becomes a user message, or with ``continue_final_message`` is removed and
  its text appended after the generation prompt; ``chat_template_kwargs`` reach the template.
- ``llamacpp``: llama.cpp's ``llama-server`` (``ggml-org/llama.cpp`` at 0c1e5709, late 2026,
  checked against that server): a template that reads object arguments, as Qwen3's does, has
  ``supports_object_arguments`` (``common/jinja/caps.cpp``), so each tool call's
  ``arguments`` string is parsed into JSON (``common/chat.cpp``, ``func_args_not_string``)
  and written back by the template's ``tojson`` with ``", "`` and ``": "``; a string that is
  not JSON (an empty one too) is a 400 error. Each OpenAI tool is read into a name, a
  description (default ``""``) and parameters (default ``{}``) and written back as
  ``{"type": "function", "function": {"name", "description", "parameters"}}`` in that order,
  other fields dropped (``common_chat_tools_parse_oaicompat``,
  ``common_chat_tools_to_json_oaicompat``): a reordering of those keys never reaches the
  prompt, one inside ``parameters`` does. ``chat_template_kwargs`` and
  ``add_generation_prompt`` are read. llama.cpp tokenizes without NFC normalisation (the
  ``qwen-raw`` tokenizer).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from prefixlint.chat.errors import TemplateError
from prefixlint.chat.messages import Message
from prefixlint.request import ChatRequest

ENGINES = ("transformers", "vllm", "sglang", "llamacpp")
DEFAULT_ENGINE = "transformers"
# The tokenizer each engine uses with the Qwen vocabulary.
ENGINE_TOKENIZERS = {"llamacpp": "qwen-raw"}


@dataclass(frozen=True)
class EngineView:
    """A request as the engine hands it to the chat template, and how the template runs.

    ``template_kwargs`` are extra template variables (``chat_template_kwargs``); ``suffix``
    is text the engine appends after the rendered prompt (SGLang's ``continue_final_message``).
    """

    request: ChatRequest
    template_kwargs: dict[str, Any]
    add_generation_prompt: bool = True
    continue_final_message: bool = False
    suffix: str = ""

    def enable_thinking(self, default: bool) -> bool:
        """Qwen3's ``enable_thinking``: the request's, else ``default``."""
        return bool(self.template_kwargs.get("enable_thinking", default))


def engine_tokenizer(tokenizer: str | None, engine: str) -> str:
    """The tokenizer spec to use: the one given, else the engine's (``qwen`` by default)."""
    return tokenizer or ENGINE_TOKENIZERS.get(engine, "qwen")


def check_engine(engine: str) -> str:
    """``engine`` when known; a TemplateError naming the known ones otherwise."""
    if engine not in ENGINES:
        raise TemplateError(f"unknown engine {engine!r} (known: {', '.join(ENGINES)})")
    return engine


def engine_view(request: ChatRequest, engine: str) -> EngineView:
    """What ``engine``'s server makes of ``request`` before its chat template runs."""
    if engine == DEFAULT_ENGINE:
        return EngineView(request, {})
    params = request.params
    kwargs = logged_template_kwargs(request)
    generation = params.get("add_generation_prompt", True) is not False
    continues = params.get("continue_final_message") is True
    parse = {"vllm": _vllm_arguments, "llamacpp": _llamacpp_arguments}.get(
        engine, _sglang_arguments
    )
    messages = [_with_parsed_arguments(m, parse) for m in request.messages]
    if engine == "llamacpp":
        tools = tuple(_llamacpp_tool(tool) for tool in request.tools)
        view = replace(request, messages=tuple(messages), tools=tools)
        return EngineView(view, kwargs, generation)
    if engine == "vllm":
        if continues and generation:
            raise TemplateError(
                "vllm rejects add_generation_prompt together with continue_final_message"
            )
        view = replace(request, messages=tuple(messages))
        return EngineView(view, kwargs, generation, continues)
    suffix = ""
    if messages and messages[-1].get("role") == "assistant":
        content = messages[-1].get("content")
        if isinstance(content, str):
            if continues:
                suffix, messages = content, messages[:-1]
            else:
                messages[-1] = {"role": "user", "content": content}
    return EngineView(replace(request, messages=tuple(messages)), kwargs, generation, False, suffix)


def logged_template_kwargs(request: ChatRequest) -> dict[str, Any]:
    """The request's ``chat_template_kwargs`` (a copy), or an empty dict."""
    kwargs = request.params.get("chat_template_kwargs")
    return dict(kwargs) if isinstance(kwargs, dict) else {}


def _with_parsed_arguments(message: Message, parse: Callable[[object], object]) -> Message:
    """``message`` with its tool calls' ``arguments`` parsed by ``parse`` (a new dict; the
    logged one is shared and never changed)."""
    calls = message.get("tool_calls")
    if message.get("role") != "assistant" or not isinstance(calls, list):
        return message
    if not calls:
        return {k: v for k, v in message.items() if k != "tool_calls"}
    parsed: list[object] = []
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            parsed.append(call)
            continue
        arguments = parse(function.get("arguments"))
        parsed.append({**call, "function": {**function, "arguments": arguments}})
    return {**message, "tool_calls": parsed}


def _vllm_arguments(arguments: object) -> dict[str, Any]:
    """vLLM: an object stays; a string is parsed; anything that is not an object is ``{}``."""
    if isinstance(arguments, dict):
        return arguments
    if not arguments:
        return {}
    parsed = _loads(arguments) if isinstance(arguments, str) else arguments
    return parsed if isinstance(parsed, dict) else {}


def _sglang_arguments(arguments: object) -> object:
    """SGLang: a string is parsed (empty, ``null``, ``None``: ``{}``); invalid JSON fails."""
    if not isinstance(arguments, str):
        return arguments
    if arguments.strip() in ("", "null", "None"):
        return {}
    parsed = _loads(arguments.strip())
    if parsed is _INVALID:
        raise TemplateError("sglang rejects a tool call whose arguments are not valid JSON")
    return parsed


def _llamacpp_arguments(arguments: object) -> object:
    """llama.cpp: a string is parsed as JSON, whatever it holds; one that is not JSON fails."""
    if not isinstance(arguments, str):
        return arguments
    parsed = _loads(arguments)
    if parsed is _INVALID:
        raise TemplateError("llama-server rejects a tool call whose arguments are not valid JSON")
    return parsed


def _llamacpp_tool(tool: Any) -> Any:
    """llama.cpp: an OpenAI tool rebuilt from its name, description and parameters; a tool
    of another shape is left as logged."""
    if not isinstance(tool, dict):
        return tool
    function = tool.get("function")
    if tool.get("type") != "function" or not isinstance(function, dict):
        return tool
    name, description = function.get("name"), function.get("description", "")
    if not isinstance(name, str) or not isinstance(description, str):
        raise TemplateError("llama-server rejects a tool without a string name and description")
    parameters = function.get("parameters", {})
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


_INVALID = object()


@lru_cache(maxsize=8192)
def _loads(text: str) -> object:
    """``json.loads(text)``, or ``_INVALID``; remembered, as history repeats every call (the
    values are shared and never changed)."""
    try:
        return json.loads(text)
    except ValueError:
        return _INVALID
