"""Read logged LLM requests (JSONL) into :class:`~prefixlint.request.ChatRequest` objects.

``read_log(path_or_dash, format="auto")`` streams a JSONL file (``.gz`` by suffix or by its
magic bytes; ``-`` reads stdin) one line at a time and yields, per line, either a
``ChatRequest`` or a :class:`SkippedLine` with a one-line reason. It never raises on a bad
line: ``lines read == requests + skipped`` (a blank line is skipped with reason
``blank line``). It raises :class:`LogReadError` only when the file cannot be opened, is not
valid gzip, or is past a size limit (:mod:`prefixlint.sources.logs.limits`: a line over the
line limit is skipped). Fields of the wrong type (a ``role`` that is a list, a ``model`` that
is an object, a lone surrogate) skip the line with a reason
(:mod:`prefixlint.sources.logs.shape`).

A line is a raw request body, or an envelope ``{"timestamp", "session_id", "route",
"request", "response"}``. Envelope variants accepted: ``ts``/``time``/``created_at`` for the
time (ISO 8601 string, or epoch seconds, milliseconds, microseconds or nanoseconds, told
apart by magnitude); ``metadata.session_id``, then ``user`` (envelope, then body) for the
session; ``path``/``endpoint`` for the route. Anthropic's ``metadata.user_id`` in the body is
used when nothing else names a session.

Formats, detected per line (``format=`` forces one):

``openai-chat``
    ``messages`` (kept as logged; legacy ``function_call`` and ``function`` messages become
    ``tool_calls`` and ``tool`` messages), ``tools`` (legacy ``functions`` are wrapped as
    ``{"type": "function", "function": ...}``). Usage: ``usage.prompt_tokens``,
    ``usage.prompt_tokens_details.cached_tokens`` (or top-level ``usage.cached_tokens``,
    DeepSeek's ``prompt_cache_hit_tokens``), ``cache_write_tokens`` in either place.
``openai-responses``
    ``instructions`` -> ``system``; ``input`` as a string (one user message) or items:
    messages (``input_text``/``output_text`` parts become text parts), ``function_call`` ->
    assistant ``tool_calls``, ``function_call_output`` -> ``tool`` messages, ``reasoning``
    summaries -> the next assistant message's ``reasoning_content``; other item types are
    ignored. Usage: ``usage.input_tokens``, ``usage.input_tokens_details.cached_tokens``.
``anthropic``
    ``system`` (string, or text blocks joined by ``"\\n"``), ``tools`` (``cache_control``
    removed), ``messages`` whose blocks map as: ``text`` -> text part, ``thinking`` ->
    ``reasoning_content``, ``tool_use`` -> ``tool_calls`` (arguments kept as the ``input``
    object), ``tool_result`` -> a ``tool`` message (placed before the rest of that user
    turn), images/documents -> non-text parts. Every ``cache_control`` (on a tool, a system
    block, a message block, or top-level for automatic caching, which marks the last message)
    becomes a ``cache_breakpoints`` entry ``(component, ttl)`` with ttl 300, or 3600 for
    ``"1h"``. Usage: ``input_tokens + cache_read_input_tokens + cache_creation_input_tokens``
    is the prompt; cached = read, written = creation.
``litellm``
    LiteLLM's ``StandardLoggingPayload``: ``messages`` (a string is one user message),
    ``model``, ``model_parameters`` (``tools`` and other prefix-relevant parameters),
    ``startTime`` (epoch seconds), ``trace_id`` (session), ``response.usage`` (OpenAI shape,
    plus ``cache_read_input_tokens``/``cache_creation_input_tokens`` when the backend is
    Anthropic), else top-level ``prompt_tokens``.
``langfuse``
    A Langfuse ``GENERATION`` observation (see :mod:`~prefixlint.sources.logs.langfuse`):
    ``input``, ``model``, ``modelParameters``, ``startTime``, ``sessionId``, ``usageDetails``.
``otel``
    One OpenTelemetry span per line, attributes as a JSON object or as OTLP
    ``[{"key", "value": {"stringValue" | "intValue" | ...}}]`` (an OTLP ``resourceSpans``
    document holding exactly one span is unwrapped). Read: ``gen_ai.system_instructions``,
    ``gen_ai.input.messages`` (parts ``text``, ``tool_call``, ``tool_call_response``;
    structured or a JSON string), ``gen_ai.tool.definitions``, ``gen_ai.request.model``,
    ``gen_ai.conversation.id`` (or ``session.id``), ``gen_ai.usage.input_tokens``,
    ``gen_ai.usage.cache_read.input_tokens`` / ``gen_ai.usage.cache_creation.input_tokens``
    (and the older ``..._input_tokens`` spellings); the older flattened
    ``gen_ai.prompt.N.role``/``.content``/``.tool_calls.M.{id,name,arguments}``/
    ``.tool_call_id`` with ``llm.request.functions.N.{name,description,parameters}``; and the
    1.2x events ``gen_ai.{system,user,assistant,tool}.message`` (``content``,
    ``tool_calls``, ``id`` in attributes or body). Time: ``startTimeUnixNano`` or
    ``start_time``.
``openinference``
    One OpenInference (Arize Phoenix) span per line (see
    :mod:`~prefixlint.sources.logs.openinference`): ``llm.input_messages``, ``llm.tools``,
    ``llm.invocation_parameters``, ``llm.model_name``, ``session.id``, ``llm.token_count.*``,
    ``start_time``; attributes flattened, nested or as OTLP key/values.
``mooncake``
    ``timestamp`` (milliseconds), ``input_length``, ``output_length``, ``hash_ids``: no text.

Timestamps are normalised to epoch seconds (Mooncake's relative milliseconds to seconds).
``params`` keeps every request field except the prompt content (``messages``, ``tools``,
``system``, ...), ``model`` and fields that only steer sampling or transport
(:data:`SAMPLING_FIELDS`). ``metadata`` keeps the logged ``metadata`` object (the body's, else
the envelope's) for ``--session-key metadata.FIELD``.
"""

from prefixlint.sources.logs.base import FORMATS, LogReadError, SkippedLine, parse_timestamp
from prefixlint.sources.logs.detect import detect_format
from prefixlint.sources.logs.openai_chat import openai_chat_messages
from prefixlint.sources.logs.reader import read_log
from prefixlint.sources.logs.records import parse_line, parse_record

__all__ = [
    "FORMATS",
    "LogReadError",
    "SkippedLine",
    "detect_format",
    "openai_chat_messages",
    "parse_line",
    "parse_record",
    "parse_timestamp",
    "read_log",
]
