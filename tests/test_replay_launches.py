import math
from concurrent.futures import Future

import pytest
from slot_server import slot_server

from prefixlint.cache import CacheQuery
from prefixlint.replay.launches import Launch, LaunchWatch, SlotState, read_slots
from prefixlint.replay.server import EngineClient, ServerReply, send_in_order, timed_queries


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            [{"id": 0, "is_processing": True, "id_task": 7}, {"id": 1, "is_processing": False}],
            (SlotState(7, True), SlotState(None, False)),
        ),
        ([{"is_processing": False, "id_task": None}], (SlotState(None, False),)),
        ([], None),
        ({"slots": []}, None),
        (["slot"], None),
        ([{"is_processing": 1, "id_task": 7}], None),
        ([{"id_task": 7}], None),
        ([{"is_processing": True, "id_task": "7"}], None),
        ([{"is_processing": True, "id_task": True}], None),
        ([{"is_processing": True, "id_task": 7.0}], None),
    ],
)
def test_read_slots(data, expected):
    assert read_slots(data) == expected


def S(*slots):
    """A look at the slots: ``(task, processing)`` pairs, or None for a look that failed."""
    return None if slots == (None,) else tuple(SlotState(t, p) for t, p in slots)


class Script:
    """Looks that return the scripted slots one after another (the last one again), and a
    reply that is answered once ``answer_after`` looks were taken."""

    def __init__(self, looks, answer_after=math.inf):
        self.looks, self.taken, self.answer_after = list(looks), 0, answer_after
        self.reply: Future = Future()

    def __call__(self):
        look = self.looks[min(self.taken, len(self.looks) - 1)]
        self.taken += 1
        if self.taken > self.answer_after and not self.reply.done():
            self.reply.set_result(None)
        return look


@pytest.mark.parametrize(
    ("looks", "answer_after", "expected", "looks_taken"),
    [
        # The request's task shows, running, at the third look.
        ([S((5, False), (None, False)), S((5, False), (None, False)), S((5, False), (9, True))],
         math.inf, [frozenset({0})], 3),
        # Launched and over between two looks: the slot shows it as its last task.
        ([S((5, False)), S((5, False)), S((9, False))], math.inf, [frozenset()], 3),
        # A failed look is not a launch; the next one is.
        ([S((5, False)), S(None), S((9, True))], math.inf, [frozenset({0})], 3),
        # Answered without a launch (the server refused it before its queue): one more look
        # once the answer is in, then nothing.
        ([S((5, False)), S((5, False))], 2, [None], 4),
        # Answered while every look failed: nothing.
        ([S((5, False)), S(None)], 1, [None], 3),
        # Two requests: the first still runs when the second shows.
        ([S((None, False), (None, False)), S((3, True), (None, False)), S((3, True), (8, True))],
         math.inf, [frozenset({0}), frozenset({0, 1})], 3),
        # Two requests: the first is over when the second takes its slot.
        ([S((None, False)), S((3, True)), S((8, True))],
         math.inf, [frozenset({0}), frozenset({1})], 3),
        # A slot never used shows no task: nothing new.
        ([S((4, True), (None, False)), S((4, True), (None, False))], 3, [None], 5),
    ],
)  # fmt: skip
def test_watch_gives_each_request_the_first_new_task(looks, answer_after, expected, looks_taken):
    script = Script(looks, answer_after)
    watch = LaunchWatch.start(script)
    assert watch is not None
    launches = [watch.wait(i, script.reply, poll_s=0.0) for i in range(len(expected))]
    assert [None if a is None else a.running for a in launches] == expected
    assert script.taken == looks_taken


def test_a_server_without_slots_gets_no_watch():
    assert LaunchWatch.start(Script([S(None)])) is None


def reply(started, latency, launch=None, timings=None):
    return ServerReply(4, 0, "cached", latency, started_s=started, timings=timings, launch=launch)


AFTER = math.nextafter(1.5, math.inf)


@pytest.mark.parametrize(
    ("replies", "expected"),
    [
        # Seen still running at the next launch, though its answer came before that look:
        # kept running until just after it.
        ([reply(8.0, 1.0, Launch(8.125, frozenset({0}))),
          reply(8.25, 2.0, Launch(9.5, frozenset({0, 1})))],
         [(0, 0.125, AFTER), (1, 1.5, 2.25)]),
        # Seen over at the next launch, though its answer came after that look: over then.
        ([reply(8.0, 2.0, Launch(8.125, frozenset({0}))),
          reply(8.25, 2.0, Launch(9.5, frozenset({1})))],
         [(0, 0.125, 1.5), (1, 1.5, 2.25)]),
        # The same replies never seen on a slot: taken when sent, over when answered.
        ([reply(8.0, 2.0), reply(8.25, 2.0)], [(0, 0.0, 2.0), (1, 0.25, 2.25)]),
        # An earlier request not seen on a slot is not moved by a later launch.
        ([reply(8.0, 2.0), reply(8.25, 2.0, Launch(9.5, frozenset({1})))],
         [(0, 0.0, 2.0), (1, 1.5, 2.25)]),
        # Answered before the next launch and not running there: left as it was.
        ([reply(8.0, 1.0, Launch(8.125, frozenset({0}))),
          reply(8.25, 2.0, Launch(9.5, frozenset({1})))],
         [(0, 0.125, 1.0), (1, 1.5, 2.25)]),
        # Three in flight: the first runs through both later launches, the second is over
        # at the third's.
        ([reply(8.0, 0.5, Launch(8.125, frozenset({0}))),
          reply(8.25, 2.0, Launch(8.375, frozenset({0, 1}))),
          reply(8.5, 1.5, Launch(9.5, frozenset({0, 2})))],
         [(0, 0.125, AFTER), (1, 0.375, 1.5), (2, 1.5, 2.0)]),
        # Seen on a slot: taken then, not when its server time says (0.5); released halfway
        # through its last pass.
        ([reply(8.0, 2.0, Launch(8.75, frozenset({0})), timings=(100, 1500.0, 0.0))],
         [(0, 0.75, 1.25)]),
    ],
)  # fmt: skip
def test_timed_queries_follow_what_the_slots_showed(replies, expected):
    queries = [CacheQuery(tokens=[i]) for i in range(len(replies))]
    order = timed_queries(queries, replies)
    assert [(i, q.timestamp, q.finish) for i, q in order] == expected


def slow_even(request: int) -> float:
    """Even requests render for 0.3 s, so the odd one sent after each reaches the queue first
    unless the client waits for the launch."""
    return 0.3 if request % 2 == 0 else 0.0


@pytest.mark.parametrize(
    ("slots_mode", "watched"),
    [("slots", True), ("missing", False), ("off", False), ("garbage", False)],
)
def test_sends_reach_the_queue_in_order_only_when_launches_are_seen(slots_mode, watched):
    bodies = [{"messages": [{"role": "user", "content": f"request {n}"}]} for n in range(4)]
    with (
        slot_server(slow_even, slots_mode=slots_mode) as (url, state),
        EngineClient(url, timeout=10.0, retries=0) as client,
    ):
        replies = list(send_in_order(client, bodies, concurrency=2, gap_s=0.02))
    assert [r.error for r in replies] == [None] * 4
    assert [r.launch is not None for r in replies] == [watched] * 4
    if watched:
        assert state["launched"] == [0, 1, 2, 3]
    else:
        assert state["launched"][:2] == [1, 0]
