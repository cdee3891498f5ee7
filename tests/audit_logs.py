"""Generated request logs with known miss causes, for measuring the audit's attribution.

Every session is an airline-support conversation (user turn, tool call, tool result, answer,
...) logged turn by turn, in OpenAI chat-completions or Anthropic Messages form. A session
has at most one *breaker*: a change to its system prompt, tools, history or parameters that
starts at a given turn (see :data:`BREAKERS`). The ground truth is computed from the data,
not assumed: a request *breaks* when its system prompt, tools or model differ from its
session predecessor's, or when that predecessor's messages are not the start of its own; a
session's first request breaks when no earlier request of the log has the same system
prompt, tools and model. A break's cause is its session's breaker code; every other request
should be ``first-seen`` (new content only).

``generate_log(seed, sessions, fmt)`` returns the JSONL lines and the expected cause of each
line (``None``: no break).
"""

from __future__ import annotations

import copy
import json
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone

START = datetime(2026, 3, 2, 9, 0, 0, tzinfo=timezone.utc)
MODEL, OTHER_MODEL = "gpt-4o", "gpt-4o-mini"
REQUESTS_PER_SESSION = 6

SYSTEM_LINES = (
    "# Airline support policy",
    "",
    "You are the support agent of Skyways, a regional airline.",
    "",
    "- Confirm the booking reference before you change a reservation.",
    "- List the action and get an explicit yes before you book, change or cancel anything.",
    "- Never promise refunds that the fare rules do not allow.",
    "- Transfer the user to a human agent when a request is outside these rules.",
    "",
    "## Fares",
    "",
    "Basic economy cannot be changed. Economy and business can be changed for a fee of 75",
    "dollars per passenger, waived for gold members. Cancellations within 24 hours of booking",
    "are refunded in full to the original payment method.",
    "",
    "## Baggage",
    "",
    "Each passenger may check one bag in economy and two in business; extra bags cost 50",
    "dollars each. Gold members get one extra free bag.",
)
# Where a breaker inserts its line into the system prompt.
INSERT_AT = 3


def _tool(name: str, description: str, properties: dict, required: list[str]) -> dict:
    parameters = {"type": "object", "properties": properties, "required": required}
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


STRING = {"type": "string"}
TOOLS = (
    _tool(
        "get_reservation",
        "Look up a reservation by its booking reference.",
        {"reference": {"type": "string", "description": "Six letters, such as 'ZFA04Y'."}},
        ["reference"],
    ),
    _tool(
        "search_flights",
        "Find direct flights between two airports on a date.",
        {"origin": STRING, "destination": STRING, "date": {"type": "string", "format": "date"}},
        ["origin", "destination", "date"],
    ),
    _tool(
        "change_flight",
        "Move a reservation to another flight.",
        {"reference": STRING, "flight_number": STRING},
        ["reference", "flight_number"],
    ),
    _tool(
        "cancel_reservation",
        "Cancel a reservation and refund it under the fare rules.",
        {"reference": STRING, "reason": {"type": "string", "enum": ["change_of_plan", "other"]}},
        ["reference", "reason"],
    ),
    _tool(
        "add_baggage",
        "Add checked bags to a reservation.",
        {"reference": STRING, "bags": {"type": "integer", "minimum": 1}},
        ["reference", "bags"],
    ),
)
EXTRA_TOOL = _tool(
    "transfer_to_human",
    "Hand the conversation to a human agent.",
    {"summary": STRING},
    ["summary"],
)

ASKS = (
    "I need to move my flight from {a} to {b} to the day after.",
    "Can I add two bags to my trip to {b}?",
    "Please cancel my booking to {b}, my plans changed.",
    "What does it cost to change my {a} flight to business?",
)
FOLLOW_UPS = (
    "Yes, please go ahead.",
    "Which flights are there in the evening?",
    "And is the fee waived for me? I am a gold member.",
    "Thanks. Can you also check my return flight?",
    "That works. Please send me the confirmation.",
)
AIRPORTS = ("JFK", "SFO", "ORD", "SEA", "BOS", "DEN", "ATL", "LAX")


@dataclass(frozen=True)
class State:
    """What one request holds: system prompt lines, tools, messages and parameters."""

    system: tuple[str, ...]
    tools: tuple[dict, ...]
    messages: tuple[dict, ...]
    model: str = MODEL
    params: dict = field(default_factory=dict)
    # Further system messages after the system prompt (OpenAI), or system blocks (Anthropic).
    extra_system: tuple[str, ...] = ()

    def system_text(self) -> str:
        return "\n".join(self.system)


def conversation(rng: random.Random, ticket: int, requests: int) -> list[tuple[dict, ...]]:
    """The messages of each request of one session: the history up to a user turn or a
    tool result, growing by what the agent and the user said since."""
    a, b = rng.sample(AIRPORTS, 2)
    reference = "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(6))
    history = [
        {"role": "user", "content": f"Ticket {ticket}. " + rng.choice(ASKS).format(a=a, b=b)}
    ]
    prompts = []
    call = 0
    while len(prompts) < requests:
        prompts.append(tuple(history))
        if history[-1]["role"] == "user":
            call += 1
            arguments = json.dumps({"reference": reference, "detail": call})
            history.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": f"call_{ticket}_{call}",
                            "type": "function",
                            "function": {"name": "get_reservation", "arguments": arguments},
                        }
                    ],
                }
            )
            result = {"reference": reference, "route": f"{a}-{b}", "fare": "economy", "bags": 1}
            history.append(
                {
                    "role": "tool",
                    "tool_call_id": f"call_{ticket}_{call}",
                    "content": json.dumps(result),
                }
            )
        else:
            answer = f"Your reservation {reference} from {a} to {b} is in economy with one bag."
            history.append({"role": "assistant", "content": answer + " " + rng.choice(FOLLOW_UPS)})
            history.append({"role": "user", "content": rng.choice(FOLLOW_UPS)})
    return prompts


# A breaker: (state, request index in the session, first index it applies to, context) -> state.
Transform = Callable[[State, int, int, "Context"], State]


@dataclass
class Context:
    """Per-request facts a breaker may use: the request's time and a random source."""

    when: datetime
    rng: random.Random
    session: int


def _with_line(state: State, line: str, at: int = INSERT_AT) -> State:
    return replace(state, system=(*state.system[:at], line, *state.system[at:]))


def _from_start(make_line: Callable[[Context], str], at: int = INSERT_AT) -> Transform:
    """A line inserted into the system prompt (before line ``at``; -1: at the end) from the
    start turn on, its value made per request."""

    def apply(state: State, k: int, start: int, ctx: Context) -> State:
        if k < start:
            return state
        return _with_line(state, make_line(ctx), len(state.system) if at < 0 else at)

    return apply


def _system_message(make_text: Callable[[Context], str]) -> Transform:
    """A second system message (an Anthropic system block) from the start turn on."""

    def apply(state: State, k: int, start: int, ctx: Context) -> State:
        return replace(state, extra_system=(make_text(ctx),)) if k >= start else state

    return apply


def _until_start(line: str) -> Transform:
    """A fixed line in the system prompt that is removed at the start turn."""

    def apply(state: State, k: int, start: int, ctx: Context) -> State:
        return _with_line(state, line) if k < start else state

    return apply


def _replica_line(template: str, names: tuple[str, ...]) -> Transform:
    """A line naming the replica that served the request (one of ``names``, by request)."""

    def apply(state: State, k: int, start: int, ctx: Context) -> State:
        return _with_line(state, template.format(names[(ctx.session + k) % len(names)]))

    return apply


def _once(change: Callable[[State, Context], State]) -> Transform:
    """A change on the start turn only (the next request is back to normal)."""

    def apply(state: State, k: int, start: int, ctx: Context) -> State:
        return change(state, ctx) if k == start else state

    return apply


def _onwards(change: Callable[[State, Context], State]) -> Transform:
    """A change from the start turn on."""

    def apply(state: State, k: int, start: int, ctx: Context) -> State:
        return change(state, ctx) if k >= start else state

    return apply


def _system_edit(edit: Callable[[str], str]) -> Callable[[State, Context], State]:
    def change(state: State, ctx: Context) -> State:
        return replace(state, system=tuple(edit(line) for line in state.system))

    return change


def _first_blank_lost(state: State, ctx: Context) -> State:
    index = state.system.index("", 2)
    return replace(state, system=state.system[:index] + state.system[index + 1 :])


def _trailing_spaces(state: State, ctx: Context) -> State:
    system = list(state.system)
    system[4] += "  "
    return replace(state, system=tuple(system))


def _nbsp(line: str) -> str:
    return line.replace("regional airline", "regional\u00a0airline")


def _shuffled_tools(state: State, ctx: Context) -> State:
    tools = list(state.tools)
    while tools == list(state.tools):
        ctx.rng.shuffle(tools)
    return replace(state, tools=tuple(tools))


def _reversed_tools(state: State, ctx: Context) -> State:
    return replace(state, tools=tuple(reversed(state.tools)))


def _reordered_keys(state: State, ctx: Context) -> State:
    tools = copy.deepcopy(list(state.tools))
    function = tools[2]["function"]
    function["parameters"] = dict(reversed(list(function["parameters"].items())))
    return replace(state, tools=tuple(tools))


def _tool_description_spaces(state: State, ctx: Context) -> State:
    tools = copy.deepcopy(list(state.tools))
    function = tools[1]["function"]
    function["description"] = function["description"].replace("between two", "between  two")
    return replace(state, tools=tuple(tools))


def _tool_added(state: State, ctx: Context) -> State:
    return replace(state, tools=(*state.tools, EXTRA_TOOL))


def _tool_removed(state: State, ctx: Context) -> State:
    return replace(state, tools=state.tools[:-1])


def _first_user_edited(state: State, ctx: Context) -> State:
    messages = list(state.messages)
    messages[0] = {**messages[0], "content": messages[0]["content"] + " It is urgent."}
    return replace(state, messages=tuple(messages))


def _first_answer_edited(state: State, ctx: Context) -> State:
    messages = list(state.messages)
    index = next(i for i, m in enumerate(messages) if m["role"] == "assistant" and m["content"])
    messages[index] = {**messages[index], "content": "Done. Anything else?"}
    return replace(state, messages=tuple(messages))


def _first_answer_deleted(state: State, ctx: Context) -> State:
    messages = list(state.messages)
    index = next(i for i, m in enumerate(messages) if m["role"] == "assistant" and m["content"])
    del messages[index]
    return replace(state, messages=tuple(messages))


def _first_tool_result_elided(state: State, ctx: Context) -> State:
    messages = list(state.messages)
    index = next(i for i, m in enumerate(messages) if m["role"] == "tool")
    messages[index] = {**messages[index], "content": "[result elided]"}
    return replace(state, messages=tuple(messages))


def _arguments_compacted(state: State, ctx: Context) -> State:
    """Every tool call's arguments re-serialised without spaces, as another JSON library
    writes them."""
    messages = []
    for message in state.messages:
        if message.get("tool_calls"):
            calls = []
            for call in message["tool_calls"]:
                arguments = json.dumps(
                    json.loads(call["function"]["arguments"]), separators=(",", ":")
                )
                calls.append({**call, "function": {**call["function"], "arguments": arguments}})
            message = {**message, "tool_calls": calls}
        messages.append(message)
    return replace(state, messages=tuple(messages))


def _first_tool_result_cut(state: State, ctx: Context) -> State:
    messages = list(state.messages)
    index = next(i for i, m in enumerate(messages) if m["role"] == "tool")
    messages[index] = {**messages[index], "content": messages[index]["content"][:20]}
    return replace(state, messages=tuple(messages))


def _sliding_window(state: State, ctx: Context) -> State:
    return replace(state, messages=state.messages[-4:])


def _other_model(state: State, ctx: Context) -> State:
    return replace(state, model=OTHER_MODEL)


@dataclass(frozen=True)
class Breaker:
    """A cache breaker: its name, the cause the audit must give, its first turn, how."""

    name: str
    code: str
    start: int
    apply: Transform
    # The log formats that can carry it (Anthropic tool calls hold objects, not strings).
    formats: tuple[str, ...] = ("openai", "anthropic")


def _time(ctx: Context) -> str:
    return ctx.when.strftime("%Y-%m-%d %H:%M:%S UTC")


def _time_line(ctx: Context) -> str:
    return f"Current date and time: {_time(ctx)}"


BREAKERS: tuple[Breaker, ...] = (
    # Volatile values inserted into the system prompt (from the first request or later),
    # replaced on every request, or removed.
    Breaker(
        "insert-datetime-first",
        "PFX101",
        0,
        _from_start(lambda c: f"Current date and time: {_time(c)}"),
    ),
    Breaker(
        "insert-datetime-later",
        "PFX101",
        2,
        _from_start(lambda c: f"Current date and time: {_time(c)}"),
    ),
    Breaker(
        "insert-time-sentence",
        "PFX101",
        1,
        _from_start(lambda c: f"The time now is {c.when:%H:%M:%S}."),
    ),
    Breaker(
        "insert-request-id-first",
        "PFX102",
        0,
        _from_start(lambda c: f"Request ID: {uuid.UUID(int=c.rng.getrandbits(128))}"),
    ),
    Breaker(
        "insert-request-id-later",
        "PFX102",
        3,
        _from_start(lambda c: f"Request ID: {uuid.UUID(int=c.rng.getrandbits(128))}"),
    ),
    Breaker(
        "append-iso-time",
        "PFX101",
        1,
        _from_start(lambda c: f"Generated at {c.when:%Y-%m-%dT%H:%M:%SZ}", -1),
    ),
    Breaker(
        "prepend-long-date",
        "PFX101",
        0,
        _from_start(lambda c: f"Now: {c.when:%A, %B %d, %Y %H:%M:%S}", 0),
    ),
    Breaker(
        "insert-epoch", "PFX101", 2, _from_start(lambda c: f"Timestamp: {int(c.when.timestamp())}")
    ),
    Breaker(
        "insert-request-token",
        "PFX102",
        1,
        _from_start(lambda c: f"Request: req_{c.rng.getrandbits(48):012x}", -1),
    ),
    Breaker(
        "insert-trace-hex",
        "PFX102",
        1,
        _from_start(lambda c: f"Trace: {c.rng.getrandbits(64):016x}"),
    ),
    Breaker(
        "conversation-id",
        "PFX102",
        2,
        _from_start(lambda c: f"Conversation ID: conv_{c.rng.getrandbits(40):010x}", -1),
    ),
    Breaker(
        "release-path",
        "PFX104",
        0,
        _replica_line("Working directory: /srv/app/releases/{}", ("20260301", "20260302")),
    ),
    Breaker("system-message-time-later", "PFX101", 2, _system_message(_time_line)),
    Breaker("remove-date", "PFX101", 3, _until_start("Today's date: 2026-03-02.")),
    Breaker("remove-request-id", "PFX102", 2, _until_start("Request ID: req_8fJ2kL9xQ")),
    # Values that differ between replicas: host names, replica names, hex ids.
    Breaker(
        "host-name",
        "PFX104",
        0,
        _replica_line(
            "Served by host: {}",
            ("api-1.prod.internal", "api-2.prod.internal", "api-3.prod.internal"),
        ),
    ),
    Breaker(
        "host-shape",
        "PFX104",
        0,
        _replica_line("This conversation runs on ip-10-0-{}-17.ec2.internal.", ("3", "4", "9")),
    ),
    Breaker(
        "server-ip",
        "PFX104",
        0,
        _replica_line("Server: ip-172-31-{}-10", ("5", "6", "7")),
    ),
    Breaker("replica-name", "PFX104", 0, _replica_line("Replica: {}", ("billing-2", "billing-3"))),
    Breaker(
        "worker-name",
        "PFX104",
        0,
        _replica_line("Worker {} answers this queue.", ("support-7", "support-8", "support-9")),
    ),
    Breaker(
        "deploy-hex", "PFX102", 0, _replica_line("Session token {}", ("9f3ab2", "c41d07", "7be5e1"))
    ),
    # Tools.
    Breaker("tool-order", "PFX201", 2, _once(_shuffled_tools)),
    Breaker("tool-key-order", "PFX202", 2, _once(_reordered_keys)),
    # A whole session that differs from the others from its first request on.
    Breaker("session-tool-order", "PFX201", 0, _onwards(_reversed_tools)),
    Breaker("session-key-order", "PFX202", 0, _onwards(_reordered_keys)),
    Breaker("session-blank-line-lost", "PFX402", 0, _onwards(_first_blank_lost)),
    Breaker("tool-added", "PFX204", 3, _onwards(_tool_added)),
    Breaker("tool-removed", "PFX204", 2, _onwards(_tool_removed)),
    Breaker("tool-description-spaces", "PFX402", 1, _once(_tool_description_spaces)),
    # Whitespace and encoding.
    Breaker("blank-line-lost", "PFX402", 3, _once(_first_blank_lost)),
    Breaker("trailing-spaces", "PFX402", 2, _once(_trailing_spaces)),
    Breaker("crlf", "PFX401", 2, _once(_system_edit(lambda line: line + "\r"))),
    Breaker("nbsp", "PFX403", 1, _once(_system_edit(_nbsp))),
    # History.
    Breaker("edited-history", "PFX501", 3, _onwards(_first_user_edited)),
    Breaker("edited-answer", "PFX501", 4, _onwards(_first_answer_edited)),
    Breaker("deleted-history", "PFX501", 4, _onwards(_first_answer_deleted)),
    Breaker("rewritten-tool-result", "PFX504", 3, _onwards(_first_tool_result_elided)),
    Breaker(
        "arguments-reserialised",
        "tool-arguments-reserialised",
        3,
        _onwards(_arguments_compacted),
        formats=("openai",),
    ),
    Breaker("truncated-tool-result", "PFX504", 4, _onwards(_first_tool_result_cut)),
    Breaker("sliding-window", "PFX502", 4, _onwards(_sliding_window)),
    # Parameters.
    Breaker("model-switch-once", "PFX601", 2, _once(_other_model)),
    Breaker("model-switch", "PFX601", 3, _onwards(_other_model)),
)


def breaker(name: str) -> Breaker:
    return next(b for b in BREAKERS if b.name == name)


# ------------------------------------------------------------------ log formats


def openai_body(state: State) -> dict:
    system = [state.system_text(), *state.extra_system]
    body = {"model": state.model, "messages": [{"role": "system", "content": t} for t in system]}
    body["messages"] += [dict(m) for m in state.messages]
    body["tools"] = list(state.tools)
    body.update(state.params)
    return body


def _anthropic_message(message: dict) -> dict:
    if message["role"] == "tool":
        block = {"type": "tool_result", "tool_use_id": message["tool_call_id"]}
        return {"role": "user", "content": [{**block, "content": message["content"]}]}
    if message.get("tool_calls"):
        blocks = [
            {
                "type": "tool_use",
                "id": call["id"],
                "name": call["function"]["name"],
                "input": json.loads(call["function"]["arguments"]),
            }
            for call in message["tool_calls"]
        ]
        return {"role": "assistant", "content": blocks}
    return {"role": message["role"], "content": message["content"]}


def anthropic_body(state: State) -> dict:
    tools = [
        {
            "name": t["function"]["name"],
            "description": t["function"]["description"],
            "input_schema": t["function"]["parameters"],
        }
        for t in state.tools
    ]
    return {
        "model": state.model.replace("gpt-4o", "claude-sonnet-4-5"),
        "max_tokens": 1024,
        "system": [{"type": "text", "text": t} for t in (state.system_text(), *state.extra_system)],
        "tools": tools,
        "messages": [_anthropic_message(m) for m in state.messages],
        **state.params,
    }


FORMATS = {
    "openai": ("/v1/chat/completions", openai_body),
    "anthropic": ("/v1/messages", anthropic_body),
}


# ------------------------------------------------------------------ the log


@dataclass(frozen=True)
class Planned:
    """One request of the log: when, which session, its state and its expected cause."""

    when: datetime
    session: int
    breaker: Breaker | None
    state: State
    expected: str | None


def _expected(state: State, previous: State | None, seen: set[str], code: str | None) -> str | None:
    """The breaker's code when ``state`` breaks from ``previous`` (see the module doc)."""
    head = json.dumps([state.system, state.extra_system, state.tools, state.model])
    if previous is None:
        return None if head in seen or not seen else code
    continues = state.messages[: len(previous.messages)] == previous.messages
    same_head = (
        json.dumps([previous.system, previous.extra_system, previous.tools, previous.model]) == head
    )
    return None if continues and same_head else code


def plan(
    seed: int, sessions: int, breakers: tuple[Breaker, ...] = BREAKERS, fmt: str = "openai"
) -> list[Planned]:
    """The requests of a log of ``sessions`` sessions in format ``fmt``, interleaved by time.

    Session 0 has no breaker; the others take the breakers that ``fmt`` can carry in turn
    (every breaker once in every ``len(breakers) + 1`` sessions, the rest clean).
    """
    breakers = tuple(b for b in breakers if fmt in b.formats)
    rng = random.Random(seed)
    events = []
    for session in range(sessions):
        chosen = (
            None
            if session % (len(breakers) + 1) == 0
            else breakers[session % (len(breakers) + 1) - 1]
        )
        # Session 0 opens the log: every clean head is seen before any breaker's.
        when = START + timedelta(seconds=session * 30)
        for k, messages in enumerate(conversation(rng, 4000 + session, REQUESTS_PER_SESSION)):
            when += timedelta(seconds=rng.randint(2, 20))
            events.append((when, session, k, chosen, messages))
    events.sort(key=lambda e: (e[0], e[1]))
    planned, previous, seen = [], {}, set()
    for when, session, k, chosen, messages in events:
        state = State(SYSTEM_LINES, TOOLS, messages)
        if chosen is not None:
            ctx = Context(when, random.Random(f"{seed}-{session}-{k}"), session)
            state = chosen.apply(state, k, chosen.start, ctx)
        code = chosen.code if chosen else None
        expected = _expected(state, previous.get(session), seen, code)
        seen.add(json.dumps([state.system, state.extra_system, state.tools, state.model]))
        previous[session] = state
        planned.append(Planned(when, session, chosen, state, expected))
    return planned


def log_line(request: Planned, fmt: str) -> str:
    route, make_body = FORMATS[fmt]
    body = make_body(request.state)
    envelope = {
        "timestamp": request.when.isoformat().replace("+00:00", "Z"),
        "session_id": f"s{request.session}",
        "route": route,
        "request": body,
    }
    return json.dumps(envelope, ensure_ascii=False)


def generate_log(seed: int, sessions: int, fmt: str) -> tuple[list[str], list[str | None]]:
    """JSONL lines of a generated log and the expected cause of each (``None``: no break)."""
    planned = plan(seed, sessions, fmt=fmt)
    return [log_line(p, fmt) for p in planned], [p.expected for p in planned]
