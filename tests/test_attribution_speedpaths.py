"""Attribution's shortcuts give exactly what the straightforward computation gives.

The reference here is attribution as first written: every request puts all its block keys
into an LRU map, hashes every message and compares whole token tuples.
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prefixlint import codes
from prefixlint.auditing.attribution import (
    Attributor,
    Divergence,
    Snapshot,
    _shared_units,
    as_session_opening,
    exact_head,
    head_key,
    index_block,
)
from prefixlint.auditing.message_chain import message_chain, signature
from prefixlint.auditing.prefix_index import PrefixIndex
from prefixlint.auditing.prefix_keys import BlockKeys
from prefixlint.lru import LRU
from prefixlint.request import ChatRequest, Component, Rendered
from prefixlint.sequences import common_prefix_length


class ReferenceIndex(LRU):
    """Block key -> the latest request that put it, least recently put forgotten first."""

    def put_all(self, keys, seq):
        for key in keys:
            self[key] = seq
            self.move_to_end(key)
        while len(self) > self.size:
            self.popitem(last=False)

    def holders(self, keys):
        found = []
        for key in keys:
            seq = self.get(key)
            if seq is None:
                break
            found.append(seq)
        return found


class ReferenceAttributor(Attributor):
    """``observe`` without shortcuts (the divergence itself is computed by the same code)."""

    def __init__(self, *, max_snapshots: int, max_index: int) -> None:
        super().__init__(max_snapshots=max_snapshots, max_index=max_index)
        self.keys = ReferenceIndex(max_index)

    def observe(self, request, rendered, units, unit_tokens, session):
        self.seq += 1
        units = tuple(units)
        talk = []
        if rendered is not None:
            parent = 0
            for message in request.messages:
                if message.get("role") not in codes.SYSTEM_ROLES:
                    parent = hash((parent, signature(message)))
                    talk.append(parent)
        block = index_block(unit_tokens)
        predecessor = self._predecessor(session, talk)
        same_conversation = predecessor is not None
        heads = None if rendered is None else (exact_head(request, rendered), head_key(request))
        if predecessor is None:
            keys = BlockKeys(units, block)
            for seq in self.keys.holders(keys):
                predecessor = self.snapshots.get(seq) or predecessor
            shared = common_prefix_length(predecessor.units, units) if predecessor else 0
            predecessor, shared = self._alike_head(
                heads, request, rendered, units, predecessor, shared
            )
        else:
            shared = common_prefix_length(predecessor.units, units)
            keys = BlockKeys(units, block, predecessor.keys, shared)
        if predecessor is None:
            divergence, conversation = Divergence(), self.seq
        else:
            divergence = self._diverge(
                predecessor, request, rendered, units, shared, unit_tokens, same_conversation
            )
            if session is not None and not same_conversation:
                as_session_opening(divergence)
            conversation = predecessor.conversation if same_conversation else self.seq
        snapshot = Snapshot(
            self.seq, request.line, conversation, request, rendered, units, keys, None
        )
        self.snapshots.remember(self.seq, snapshot)
        if session is not None:
            self.sessions.remember(session, self.seq)
        if talk:
            self.conversations.remember(talk[-1], self.seq)
        self.keys.put_all(keys, self.seq)
        if heads is not None:
            self.exact_heads.remember(heads[0], self.seq)
            self.heads.remember(heads[1], self.seq)
        return divergence, conversation

    def _predecessor(self, session, talk):
        if session is not None:
            seq = self.sessions.recall(session)
            return self.snapshots.recall(seq) if seq is not None else None
        for key in reversed(talk[1:]):
            seq = self.conversations.get(key)
            found = self.snapshots.recall(seq) if seq is not None else None
            if found is not None:
                return found
        return None


def render(messages) -> Rendered:
    """A toy rendering, one token per character, a component per message."""
    text, components = "", []
    for index, message in enumerate(messages):
        content = message.get("content")
        body = f"<{message['role']}>{content if isinstance(content, str) else repr(content)}"
        body += repr(message.get("tool_calls") or "")
        end = len(text) + len(body)
        components.append(Component(f"messages[{index}]", len(text), end, len(text), end))
        text += body
    end = len(text) + 4
    components.append(Component("generation_prompt", len(text), end, len(text), end))
    text += "<as>"
    # Token ids above one byte, so that packed tokens differ in more than their first byte.
    tokens = tuple(ord(char) * 257 for char in text)
    return Rendered(text, tokens, tuple(components), "toy")


WORDS = st.sampled_from(["a" * 20, "ab" * 9, "b" * 17, "hello world! " * 2, "x"])


@st.composite
def messages_steps(draw):
    """Requests of a few interleaved conversations: each grows, is edited, or starts over."""
    conversations: list[list[dict]] = []
    steps = []
    for line in range(draw(st.integers(1, 24))):
        choice = draw(st.integers(0, len(conversations)))
        if choice == len(conversations):
            system = {"role": "system", "content": draw(WORDS)}
            conversations.append([system, {"role": "user", "content": draw(WORDS)}])
        messages = conversations[choice]
        action = draw(st.sampled_from(["user", "tool", "edit", "copy", "reorder"]))
        if action == "user":
            messages.append({"role": "user", "content": draw(WORDS)})
        elif action == "tool":
            call = {"id": draw(WORDS), "function": {"name": "f", "arguments": draw(WORDS)}}
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": draw(WORDS)})
        elif action == "edit":
            index = draw(st.integers(0, len(messages) - 1))
            messages[index] = {**messages[index], "content": draw(WORDS)}
        elif action == "copy":
            # Equal messages, not the same objects.
            messages[:] = copy.deepcopy(messages)
        else:
            # Equal tool calls whose keys come in another order (another repr).
            messages[:] = [
                {**m, "tool_calls": [dict(reversed(c.items())) for c in m["tool_calls"]]}
                if m.get("tool_calls")
                else m
                for m in messages
            ]
        session = draw(st.sampled_from([None, None, f"s{choice}", "shared"]))
        steps.append((line, tuple(messages), session))
    return steps


LIMITS = st.tuples(st.sampled_from([1, 2, 3, 1024]), st.sampled_from([1, 2, 5, 12, 200_000]))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages_steps(), LIMITS)
def test_observe_matches_reference_on_text(steps, limits):
    max_snapshots, max_index = limits
    fast = Attributor(max_snapshots=max_snapshots, max_index=max_index)
    slow = ReferenceAttributor(max_snapshots=max_snapshots, max_index=max_index)
    for line, messages, session in steps:
        request = ChatRequest(line=line, format="openai-chat", messages=messages)
        rendered = render(messages)
        got = fast.observe(request, rendered, rendered.tokens, 1, session)
        assert got == slow.observe(request, rendered, rendered.tokens, 1, session)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.lists(st.integers(0, 2), max_size=12), st.sampled_from([None, "s"])),
        max_size=30,
    ),
    LIMITS,
)
def test_observe_matches_reference_on_block_hashes(requests, limits):
    max_snapshots, max_index = limits
    fast = Attributor(max_snapshots=max_snapshots, max_index=max_index)
    slow = ReferenceAttributor(max_snapshots=max_snapshots, max_index=max_index)
    for line, (units, session) in enumerate(requests):
        request = ChatRequest(line=line, format="mooncake", hash_ids=tuple(units))
        got = fast.observe(request, None, units, 4, session)
        assert got == slow.observe(request, None, units, 4, session)


def chained(units, block=2):
    return BlockKeys(tuple(units), block)


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 2), max_size=16), max_size=40),
    st.sampled_from([1, 2, 3, 5, 8, 100]),
)
def test_prefix_index_is_the_lru_map(sequences, limit):
    index, reference = PrefixIndex(limit), ReferenceIndex(limit)
    for seq, units in enumerate(sequences, start=1):
        keys = chained(units)
        per_key = reference.holders(keys)
        assert index.holders(keys) == [
            h for i, h in enumerate(per_key) if per_key[i - 1 : i] != [h]
        ]
        index.put(keys, seq)
        reference.put_all(keys, seq)
        held = [
            (key, holder) for holder, run in index.runs.items() for key in run.keys[run.start :]
        ]
        assert held == list(reference.items())
        assert index.size == len(reference)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ((1, 2, 3), (1, 2, 3)),
        ((1, 2, 3), (1, 2, 3, 4)),
        ((1, 2, 3), (1, 2, 3 + 2**40)),
        ((1, 2, 3), (1, 2, 3 + 256)),
        ((1, 2, 3), (1, 2 + 2**62, 3)),
        ((), (5,)),
        ((7,), (-7,)),
    ],
)
def test_shared_units_on_packed_tokens_is_the_token_prefix(before, after):
    def snapshot(tokens):
        rendered = Rendered("", tokens, (), "toy")
        return Snapshot(1, 1, 1, ChatRequest(1, "x"), rendered, tokens, [], None)

    first, second = snapshot(before), snapshot(after)
    expected = common_prefix_length(before, after)
    assert _shared_units(first, second.units, second.rendered) == expected
    # Units that are not the rendering's tokens are compared as given.
    assert _shared_units(first, (*before, 9), second.rendered) == len(before)


CALL = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}


@pytest.mark.parametrize(
    "change",
    [
        lambda m: m,
        lambda m: copy.deepcopy(m),
        lambda m: {**m, "content": "other"},
        lambda m: {**m, "role": "assistant"} if m["role"] == "user" else m,
        lambda m: (
            {**m, "tool_calls": [dict(reversed(c.items())) for c in m["tool_calls"]]}
            if m.get("tool_calls")
            else m
        ),
        lambda m: {**m, "content": [{"type": "text", "text": "hi"}]},
    ],
)
@pytest.mark.parametrize(
    "message",
    [
        {"role": "system", "content": "rules"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "c1", "content": "42"},
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
    ],
)
def test_chain_from_an_earlier_one_is_the_chain_from_scratch(message, change):
    earlier = [{"role": "system", "content": "rules"}, message, {"role": "user", "content": "hi"}]
    later = [earlier[0], change(message), earlier[2], {"role": "user", "content": "next"}]
    fresh = message_chain(later)
    for start in (earlier, earlier[:1], earlier[:2], later, []):
        assert message_chain(later, message_chain(start)) == fresh


def test_a_run_cut_down_to_half_its_keys_keeps_only_those():
    # Each request shares all its keys but the last with the one before: the earlier run
    # keeps one key of eleven, and not its request's units with it.
    index = PrefixIndex(1000)
    for seq in range(1, 30):
        index.put(chained([0] * 20 + [seq, seq]), seq)
    for run in index.runs.values():
        assert not isinstance(run.keys, BlockKeys) or run.start < len(run.keys) - run.start
    assert [len(run.keys) - run.start for run in index.runs.values()] == [1] * 28 + [11]
