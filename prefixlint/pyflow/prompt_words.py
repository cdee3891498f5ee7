"""What names and text say about prompts, with no parser: the request regions, the words
and spellings of request parts, and the text prefilter run before any parse.

:func:`may_hold_prompt` is a superset test: a file for which it is false cannot produce a
python finding, so it is not parsed at all.
"""

from __future__ import annotations

import itertools
import re

from prefixlint.vocabulary import split_words

SYSTEM = "system"
TOOLS = "tools"
EARLY = "early"
PROMPT = "prompt"
LAST = "last"
PREFIX_REGIONS = frozenset({SYSTEM, TOOLS, EARLY, PROMPT})

# The most static tokens PFX301 asks of ``str.format`` templates and system-side text.
TEMPLATE_STATIC_TOKENS = 128

USER_ROLES = frozenset({"user", "human"})
CHAT_ROLES = frozenset({"user", "human", "assistant", "ai", "tool", "function", "model"})

# Keyword arguments that carry system text in any framework (pydantic-ai, autogen, Gemini, ...).
SYSTEM_KEYWORDS = frozenset(
    {
        "system_prompt",
        "system_message",
        "system_instruction",
        "system_instructions",
        "instructions",
        "preamble",
        "developer_prompt",
    }
)
TOOL_KEYWORDS = frozenset({"tools", "functions"})
SYSTEM_DECORATORS = frozenset({"system_prompt", "instructions"})

API_METHODS = frozenset({"create", "parse", "stream", "count_tokens"})
# Amazon Bedrock's Converse API (``bedrock_runtime.converse(modelId=..., system=[...])``).
CONVERSE_METHODS = frozenset({"converse", "converse_stream"})
FRAMEWORKS = ("langchain", "langchain_core", "langchain_community", "llama_index")
# Packages whose calls take ``tools=`` meant for a model (beyond the request calls above).
AGENT_PACKAGES = frozenset(
    {
        *FRAMEWORKS, "pydantic_ai", "agents", "langgraph", "crewai", "autogen", "smolagents",
        "dspy", "camel", "autogen_agentchat", "qwen_agent",
    }
)  # fmt: skip
# Parts of a framework's qualified names that hold what it reports about a run (event-bus
# records, traces, callbacks, metrics), not what it sends: ``crewai.events....StartedEvent(
# tools=..., messages=...)`` describes a request. A class name ending in ``Event`` is one too.
TELEMETRY_PARTS = frozenset(
    {"events", "event", "telemetry", "tracing", "callbacks", "metrics", "logging", "observability"}
)
# Agent classes that take their system message as a positional argument: (package, class)
# -> the argument's index.
POSITIONAL_SYSTEM = {
    ("camel", "ChatAgent"): 0,
    ("autogen", "AssistantAgent"): 1,
    ("autogen", "ConversableAgent"): 1,
}
# Agent classes and builders that make their system prompt from keywords other than
# :data:`SYSTEM_KEYWORDS`: (package, name) -> the keywords.
KEYWORD_SYSTEM = {
    ("crewai", "Agent"): ("role", "goal", "backstory"),
    ("langgraph", "create_react_agent"): ("prompt", "state_modifier"),
}
MESSAGE_CLASSES = {
    "SystemMessage": "system",
    "HumanMessage": "user",
    "AIMessage": "assistant",
    "ToolMessage": "tool",
    "FunctionMessage": "tool",
    "ChatMessage": None,
}
_SYSTEM_WORDS = frozenset({"system", "instructions", "instruction", "preamble", "persona"})
_TEXT_HEADS = frozenset(
    {
        "prompt",
        "prompts",
        "message",
        "msg",
        "instructions",
        "instruction",
        "preamble",
        "persona",
        "text",
        "content",
        "template",
        "block",
        "blocks",
        "str",
        "string",
    }
)
_NOT_PREFIX_WORDS = frozenset(
    {
        "user",
        "human",
        "question",
        "query",
        "input",
        "suffix",
        "response",
        "answer",
        "output",
        "tokens",
        "token",
        "count",
        "len",
        "length",
        "id",
        "ids",
        "path",
        "file",
        "dir",
        "name",
        "names",
        "key",
        "url",
        "cache",
        "tokenizer",
        "enabled",
        "flag",
        "type",
        "kind",
        "role",
    }
)


_TURN_WORDS = frozenset({"user", "human"})
# ``client.chat.completions.with_raw_response.create``: the same request, other return types.
RESPONSE_WRAPPERS = frozenset({"with_raw_response", "with_streaming_response"})
# Calls that set or make a system message: ``history.add_system_message(text)``,
# ``ChatMessage.from_system(text)``, ``agent.set_system_prompt(text)``.
SYSTEM_CALLEE = re.compile(
    r"^(?:(?:add|set|with|from|make|create|update)_system(?:_message|_prompt|_instructions?)?"
    r"|system_(?:message|prompt|instructions?))$"
)
CHAT_LISTS = frozenset({"messages", "msgs", "conversation", "history", "transcript"})
# Callees that make a message from ``(role, text)``: ``create_chat_message("system", text)``.
MESSAGE_MAKER = re.compile(r"message|msg|turn", re.I)
# Fields of a tool definition the model reads, and words that say a mapping is one.
TOOL_FIELDS = frozenset({"description", "inputs", "parameters"})
_TASK_WORDS = frozenset({"question", "query", "input", "response", "answer", "output"})


# A list typed as messages, or copied from one named like a conversation
# (``history.copy()``, ``messages[:]``, ``list(messages)``, ``deepcopy(self.transcript)``).
_MESSAGE_ANNOTATION = re.compile(r"""\[\s*["']?[\w.]*Message""")
_CONVERSATION_WORDS = ("messages", "history", "conversation", "transcript")
_COPIED = re.compile(r"(?:messages|history|conversation|transcript)(?:\.copy\(\)|\[:\])")
# ``deepcopy(`` ends in ``copy(``: a text matches with it where it matches without.
_COPIED_BY_CALL = re.compile(
    r"(?:list|copy)\(\s*[\w.]*(?:messages|history|conversation|transcript)\s*\)"
)


# Words without which a module says nothing of models or chats: a list it names ``messages``
# holds something else (a compiler's error messages, an event log's).
_CHAT_WORDS = (
    *("role", "assistant", "llm", "chat", "completion", "openai", "anthropic", "prompt"),
    *("agent", "conversation", "transcript", "tool_result", "tool_use", "tool_call"),
)


def mentions_chat(text: str) -> bool:
    """Whether ``text`` has a word of chat messages, models or prompts (any case), or a list
    annotated as messages."""
    lowered = text.lower()
    return any(word in lowered for word in _CHAT_WORDS) or bool(_MESSAGE_ANNOTATION.search(text))


def defines_message_list(text: str) -> bool:
    """Whether ``text`` has a message annotation, or a copy of a list named like a
    conversation.

    Each pattern is searched only where the text holds the literal parts every match of it
    has: a search tries the pattern at every offset, and most files have none of them.
    """
    if _MESSAGE_ANNOTATION.search(text):
        return True
    if not any(word in text for word in _CONVERSATION_WORDS):
        return False
    if (".copy()" in text or "[:]" in text) and _COPIED.search(text):
        return True
    return ("list(" in text or "copy(" in text) and _COPIED_BY_CALL.search(text) is not None


def name_region(name: str) -> str | None:
    """The region a variable, attribute or function name says its value is for, if any."""
    words = split_words(name)
    if not words:
        return None
    # ``USER_PROMPT`` is a user turn's; in ``USER_MEMORY_EXTRACTION_PROMPT`` the word says
    # what the prompt is about.
    blocked = _NOT_PREFIX_WORDS.intersection(words) - _qualifiers(words)
    # ``QUERY_REWRITE_SYSTEM_PROMPT`` is a system prompt (for a step about the query).
    if blocked and not (_SYSTEM_WORDS.intersection(words) and blocked <= _TASK_WORDS):
        return None
    head = words[-1]
    if head == "tools" or words[-2:] in (
        ("tool", "schemas"),
        ("tool", "definitions"),
        ("tool", "defs"),
        ("tool", "specs"),
    ):
        return TOOLS
    if head not in _TEXT_HEADS:
        return None
    if _SYSTEM_WORDS.intersection(words):
        return SYSTEM
    if "prompt" in words or "prompts" in words:
        return PROMPT
    return None


def _qualifiers(words: tuple[str, ...] | list[str]) -> set[str]:
    """The turn words (``user``, ``human``) that qualify another word than a turn's text:
    ``user`` of ``user_memory_prompt``, not of ``user_prompt``, ``user_message_template``,
    ``user_turn_prompt`` or ``user_query_prompt``."""
    turn = _TEXT_HEADS | _NOT_PREFIX_WORDS | {"turn", "turns"}
    found = {w for w, after in itertools.pairwise(words) if w in _TURN_WORDS and after not in turn}
    return found - {w for w, after in itertools.pairwise(words) if after in turn}


def text_region(name: str) -> str | None:
    """Like :func:`name_region`, and ``LAST`` for a user turn's prompt (``USER_PROMPT``)."""
    region = name_region(name)
    if region is not None:
        return region
    words = split_words(name)
    if words and words[-1] in ("prompt", "template") and _TURN_WORDS.intersection(words):
        return None if (_NOT_PREFIX_WORDS - _TURN_WORDS).intersection(words) else LAST
    return None


# What the sinks above need in a file's text, checked before parsing (``may_hold_prompt``).
# Every pattern starts with one literal, never an alternation, ``\b`` or ``\w`` (alternatives
# are patterns of their own): the regex engine then scans with a fast search for the literal
# instead of trying every position, five to a thousand times faster. A word boundary that
# matters is a lookbehind after the literal (``del(?<!\wdel)``); being a superset test, a
# pattern may otherwise match a little more than its sink needs.
_LITERALS = ("langchain", "llama_index", "bind_tools", ".demos", ".converse(")
_ROLE_KEYS = ('"role"', "'role'")
# All end "agent(" (lowered). A keyword agent also needs one of its keywords in the text.
_AGENT_CALLS = tuple(sorted({f"{name}(" for _, name in POSITIONAL_SYSTEM}))
# The keywords that make a system prompt, by the name of the call that takes them.
KEYWORD_SYSTEM_BY_NAME = {name: keywords for (_, name), keywords in KEYWORD_SYSTEM.items()}
_KEYWORD_AGENT_CALLS = {
    f"{name}(": tuple(re.compile(rf"{word}\s*=(?!=)") for word in keywords)
    for name, keywords in KEYWORD_SYSTEM_BY_NAME.items()
}
_COMPLETIONS_CALL, _MESSAGES_CALL, _RESPONSES_CALL = (
    re.compile(rf"{word}\s*\.\s*(?:create|parse|stream|count_tokens)\s*\(")
    for word in ("completions", "messages", "responses")
)
_SYSTEM_CALLS = (re.compile(r"_system\w*\s*\("), re.compile(r"system_(?:message|prompt)\w*\s*\("))
_ROLE_KEYWORD = re.compile(r"""role\s*=\s*["'](?:system|developer)["']\s*[,)]""")
_ROLE_ARGUMENT = re.compile(r"""\(\s*["'](?:system|developer)["']\s*[,)]""")
_DECORATOR = re.compile(r"@\s*[\w.]+\.(?:system_prompt|instructions)\b")
# A tool spelled out for a model (``sinks.is_tool_definition``): its schema's keys.
_TOOL_SCHEMAS = (
    re.compile(r"""parameters["']\s*:"""),
    re.compile(r"""input_schema["']\s*:"""),
    re.compile(r"parameters\s*="),
    re.compile(r"""function["']\s*,"""),
)
# A tool's field set when it is made (``self.inputs = {...}``, ``sinks._tool_field``).
_SELF_TOOL_FIELD = re.compile(r"self\.(?:description|inputs|parameters)\s*=(?!=)")
# A class renamed after it is made (``_Schema.__name__ = ...``): a tool's name (sinks).
_CLASS_RENAME = re.compile(r"\.__name__(?<=\w\.__name__)\s*=(?!=)")
# A message copied and its text rewritten (``copy.content = ...``, sinks._copied_message).
_CONTENT_SET = re.compile(r"\.content(?<=\w\.content)\s*\+?=(?!=)")
_COPY_CALL = re.compile(r"copy\s*\(")
# A prompt word and the rest of its identifier, where an assignment, annotation or call
# follows (the only places :func:`_named_text` looks at); one pattern per word, so that each
# starts with a literal.
_NAME_WORDS = tuple(
    re.compile(rf"{word}\w*(?=\s*[:=(+])")
    for word in ("prompt", "system", "instruction", "preamble", "persona", "tool", "functions")
)
_ASSIGNED = re.compile(r"\w*\s*(?::[^\n=]*)?\+?=(?!=)")
# ``name: T = default,`` ends a line of a signature: a parameter, not a sink.
_ANNOTATED_PARAMETER = re.compile(r"\w*\s*:[^\n=]*=[^\n]*,[ \t]*(?:#[^\n]*)?$", re.MULTILINE)
_DEFINED = re.compile(r"\w*\s*\(")
_DEF_BEFORE = re.compile(r"\bdef\s+\w*$")
# Conversation memories and trimmers of agent frameworks that keep only the newest messages, by
# the package they come from: the first message sent moves once the window is full. (LlamaIndex's
# ``ChatMemoryBuffer`` is left out: every chat engine makes one, its limit near the context size.)
WINDOW_MEMORIES = {
    "ConversationBufferWindowMemory": "langchain",
    "ConversationTokenBufferMemory": "langchain",
    "ConversationSummaryBufferMemory": "langchain",
    "trim_messages": "langchain",
    "BufferedChatCompletionContext": "autogen",
    "TokenLimitedChatCompletionContext": "autogen",
    "ChatHistoryTruncationReducer": "semantic_kernel",
}
_HISTORY_WORDS = ("messages", "conversation", "transcript")
# What the class of a condenser of conversations is named for (``RecentEventsCondenser``).
SHRINKER_CLASSES = ("Condenser", "Reducer", "Compressor", "Trimmer", "Truncator", "Compactor")
# A file with one of these words may edit a conversation (a ``history`` rebuilt with its
# messages' content rewritten, too).
_HISTORY_GATE = (*_HISTORY_WORDS, "history")
# A conversation compacted into a new list (``pyflow.compaction``): a summary joined to messages
# (``summary + tail``, ``system + [summary_msg]``), a selection kept (``if id(m) in kept_ids``).
_COMPACTIONS = (
    re.compile(r"summar\w*\]?\s*\+"),
    re.compile(r"condensed\w*\]?\s*\+"),
    re.compile(r"\+\s*\[?\s*\w*(?:summar|condensed)"),
    re.compile(r"in[ \t]+(?:sorted\()?[\w.]*(?:keep|kept|retain|preserve|selected)"),
)
_HISTORY_TAIL = r"""\s*
    (?: (?:\[[^\]\n]*\]\s*){1,2}=(?!=)                # messages[i] = ..., messages[i][k] = ...
      | \.(?:insert|pop|remove|clear)\s*\(              # messages.insert(0, ...), .clear()
      | \s*=\s*(?:\[|[\w.]*(?:messages|conversation|transcript)\s*\[)  # rebuilt or sliced
      | \[\s*-[^\]\n]*:\s*\]                            # a tail window
      | \[\s*[a-z_]\w*\s*:\s*\]                           # a moving start
      | \s*=\s*(?:await\s+)?[\w.]*(?:trim|truncat|split|compress|summar|condens|compact
        |fit|prune|filter)\w*\s*\( )                       # cut by a call"""
# The verbs of a call that cuts a conversation (``pyflow.compaction``).
_CUT_VERBS = ("trim", "truncat", "split", "fit", "prune", "filter")
_HISTORY_EDITS = (
    *(re.compile(word + _HISTORY_TAIL, re.VERBOSE) for word in _HISTORY_WORDS),
    re.compile(r"del(?<!\wdel)\s+[\w.]*(?:messages|conversation|transcript)"),
    re.compile(r"content(?<=[\"']content)[\"']\]\s*=(?!=)"),
    re.compile(r"\.content\s*=(?!=)"),
    re.compile(r"""return\s*\{[^}]*?["'](?:messages|conversation|transcript)["']\s*:"""),
    *_COMPACTIONS,
    # The exchanges a conversation memory keeps, edited (self.runs.pop(0)).
    *(
        re.compile(word + r"\.(?:pop|insert|remove)\s*\(")
        for word in ("runs", "rounds", "turns", "exchanges", "interactions")
    ),
    # A conversation cut in place by a call (prune_history(messages, max_turns)).
    *(
        re.compile(verb + r"\w*\(\s*[\w.]*(?:messages|history|conversation|transcript)")
        for verb in _CUT_VERBS
    ),
    # A stored conversation fetched with a cap on its newest messages (get_messages(limit=20)).
    *(
        re.compile(word + r"\w*\s*\([^()]*?(?:limit|last_n|max_|num_)\w*\s*=(?!=)")
        for word in ("messages", "history", "turns")
    ),
)
# Edits of a list that holds messages by its type (``memory: list[Message]``) or a copy of it.
_MESSAGE_ANNOTATIONS = tuple(
    re.compile(rf"""{word}\[\s*["']?[\w.]*Message""") for word in ("list", "List", "Sequence")
)
_TYPED_EDITS = (
    re.compile(r"\.(?:insert|pop|remove)\s*\("),
    re.compile(r"del(?<!\wdel)\s+\w"),
    re.compile(r"\]\s*\.\s*(?:content|blocks|text|parts)\s*\+?=(?!=)"),
    re.compile(r"=\s*\w*message\("),  # an element replaced by a new message
    *_COMPACTIONS,
)
# The start of a doctest line up to a match (``    >>> prompt = ...``, ``...     {"role": ...``):
# anything after ``>>>``, or ``...`` and at most an opening brace. In code that parses,
# ``>>>`` (``>>`` then ``>``) is never valid, and ``...`` is never followed by an identifier,
# a string or a brace, so the line is in a docstring (a library's examples), not code.
_DOCTEST_BEFORE = re.compile(r"[ \t]*(?:>>>[^\n]*|\.\.\.[ \t]+\{?[ \t]*)")
# A constant that holds no prompt text, ending its line or a keyword argument
# (``add_generation_prompt=True,``).
_TRIVIAL_VALUE = re.compile(
    r"\s*(?:none|not_given|omit|true|false|\d+|''|\"\"|\[\]|\{\})\s*(?:#|$|[,)])", re.M
)


def _named_text(text: str, lowered: str) -> bool:
    """A prompt-like name that is assigned a value, passed by keyword, or defined as a function
    (outside doctest examples)."""
    for match in itertools.chain.from_iterable(p.finditer(lowered) for p in _NAME_WORDS):
        start, end = match.span()
        while start > 0 and (lowered[start - 1].isalnum() or lowered[start - 1] == "_"):
            start -= 1
        if _in_doctest(lowered, start):
            continue
        identifier = text[start:end]
        if _DEFINED.match(lowered, end) and _DEF_BEFORE.search(lowered, max(0, start - 80), start):
            if name_region(identifier) is not None:
                return True
            continue
        assigned = _ASSIGNED.match(lowered, end)
        if assigned is None or _ANNOTATED_PARAMETER.match(lowered, end):
            continue
        if _TRIVIAL_VALUE.match(lowered, assigned.end()):
            continue
        keyword = identifier in SYSTEM_KEYWORDS or identifier in TOOL_KEYWORDS
        if keyword or text_region(identifier) is not None:
            return True
    return False


def may_hold_prompt(text: str) -> bool:
    """Whether ``text`` has what a sink, a prompt-named value or a history edit needs.

    A superset test: a file for which it is false cannot produce a python finding.

    Most files have none of a few words that the patterns need (``role``, ``system``,
    ``message``, ``completion``): one search of the lowercased text for such a word stands in
    for every pattern that needs it.
    """
    if any(literal in text for literal in _LITERALS):
        return True
    if any(name in text for name in WINDOW_MEMORIES):
        return True
    if any(name in text for name in SHRINKER_CLASSES):
        return True
    lowered = text.lower()
    system, message = "system" in lowered, "message" in lowered
    if "role" in lowered and (_role_key(text) or _ROLE_KEYWORD.search(text)):
        return True
    if (system or "developer" in lowered) and _ROLE_ARGUMENT.search(text):
        return True
    if system and _found(_SYSTEM_CALLS, text):
        return True
    if "completion" in lowered and ("completion(" in text or _COMPLETIONS_CALL.search(text)):
        return True
    if (message and _MESSAGES_CALL.search(text)) or _RESPONSES_CALL.search(text):
        return True
    if "agent(" in lowered and _agent_call(text):
        return True
    decorated = (system and ".system_prompt" in text) or ".instructions" in text
    if decorated and _DECORATOR.search(text):
        return True
    if "description" in text and _found(_TOOL_SCHEMAS, text):
        return True
    if "self." in text and _SELF_TOOL_FIELD.search(text):
        return True
    if ".__name__" in text and _CLASS_RENAME.search(text):
        return True
    if ".content" in text and _CONTENT_SET.search(text) and _COPY_CALL.search(text):
        return True
    if _named_text(text, lowered):
        return True
    if any(word in lowered for word in _HISTORY_GATE) and _found_in_code(_HISTORY_EDITS, lowered):
        return True
    return message and _found(_MESSAGE_ANNOTATIONS, text) and _found(_TYPED_EDITS, lowered)


def _agent_call(text: str) -> bool:
    """Whether ``text`` calls an agent class or builder that takes a system prompt."""
    if any(call in text for call in _AGENT_CALLS):
        return True
    return any(
        call in text and _found(keywords, text) for call, keywords in _KEYWORD_AGENT_CALLS.items()
    )


def _role_key(text: str) -> bool:
    """Whether ``text`` has a ``"role"`` key outside doctest examples (a library's docstrings
    show chat messages to its users)."""
    for key in _ROLE_KEYS:
        start = text.find(key)
        while start != -1:
            if not _in_doctest(text, start):
                return True
            start = text.find(key, start + len(key))
    return False


def _in_doctest(text: str, start: int) -> bool:
    """Whether the line of ``text`` up to ``start`` is a doctest prompt (``>>> x = ...``)."""
    return _DOCTEST_BEFORE.fullmatch(text, text.rfind("\n", 0, start) + 1, start) is not None


def _found_in_code(patterns: tuple[re.Pattern[str], ...], text: str) -> bool:
    """Whether one of ``patterns`` matches ``text`` outside doctest examples."""
    return any(
        not _in_doctest(text, match.start())
        for pattern in patterns
        for match in pattern.finditer(text)
    )


def _found(patterns: tuple[re.Pattern[str], ...], text: str) -> bool:
    return any(pattern.search(text) for pattern in patterns)
