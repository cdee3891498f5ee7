"""llama-server's slots and host-RAM prompt cache, on hand-computed cases.

Tokens are small integers; ``cached`` is the server's ``n_past`` (the longest common prefix
with the slot it picks, one less when that covers the whole prompt).
"""

import json
from pathlib import Path

from prefixlint.cache import CacheQuery, make_cache_model
from prefixlint.cache.base import unit_bytes

A = list(range(1, 101))  # 100 tokens
B = list(range(1001, 1101))
C = list(range(2001, 2101))


def serve(model, *prompts):
    return [model.process(CacheQuery(tokens=p)).cached_tokens for p in prompts]


def held(tokens):
    return unit_bytes(tokens)


def test_defaults_are_the_servers():
    model = make_cache_model("llamacpp")
    assert (model.slot_count, model.similarity, model.cache_ram_mib) == (4, 0.10, 8192)
    assert model.cache_idle_slots and model.kv_unified
    # An explicit --parallel leaves the KV cache per slot (server.cpp), unless --kv-unified.
    assert not make_cache_model("llamacpp", slots=4).kv_unified
    assert make_cache_model("llamacpp", slots=2, kv_unified=True).kv_unified


def test_an_exact_repeat_reuses_all_but_the_last_token():
    assert serve(make_cache_model("llamacpp"), [1, 2, 3, 4], [1, 2, 3, 4]) == [0, 3]


def test_lru_takes_the_last_of_equally_old_slots():
    model = make_cache_model("llamacpp", slots=3, cache_ram_mib=0)
    serve(model, A)
    assert [slot.tokens == held(A) for slot in model.slots] == [False, False, True]


def test_slot_chosen_by_similarity():
    # Two slots, no prompt cache: each conversation keeps its slot.
    model = make_cache_model("llamacpp", slots=2, cache_ram_mib=0)
    assert serve(model, A, B, [*A, 7, 8], [*B, 9]) == [0, 0, 100, 100]


def test_below_the_similarity_threshold_the_lru_slot_is_taken():
    # The slot holds A; the prompt shares 1 token of 20 (0.05 <= 0.10): the other, empty,
    # slot is the least recently used one, and nothing is reused.
    model = make_cache_model("llamacpp", slots=2, cache_ram_mib=0)
    prompt = [1, *list(range(500, 519))]
    assert serve(model, A, prompt) == [0, 0]
    # With one slot, LRU gives the same slot back, and its common prefix still counts.
    model = make_cache_model("llamacpp", slots=1, cache_ram_mib=0)
    assert serve(model, A, prompt) == [0, 1]


def test_the_prompt_cache_restores_a_saved_prompt_for_a_new_session():
    # One slot. B evicts A from the slot (saved to RAM: nothing there fits B); A + [7]
    # comes back: the slot holds B (no similarity), B is saved and A restored: 100 reused.
    model = make_cache_model("llamacpp", slots=1)
    assert serve(model, A, B, [*A, 7]) == [0, 0, 100]
    assert list(model.entries) == [held(B)]
    # Without the prompt cache, A is lost.
    model = make_cache_model("llamacpp", slots=1, cache_ram_mib=0)
    results = [model.process(CacheQuery(tokens=p)) for p in (A, B, [*A, 7])]
    assert results[2].cached_tokens == 0
    assert (results[2].miss_reason, results[2].longest_available) == ("evicted", 100)


def test_a_slot_that_would_keep_under_half_is_saved_and_a_better_entry_restored():
    model = make_cache_model("llamacpp", slots=1)
    short = A[:20] + list(range(200, 230))  # 50 tokens sharing 20 with A
    # short: similarity 20/50 = 0.4 picks the slot, which keeps 20/100 < 0.5: A is saved;
    # A keeps only 0.2 of itself for short (< 0.25): not restored; 20 reused.
    assert serve(model, A, short) == [0, 20]
    assert list(model.entries) == [held(A)]
    # A + [7]: similarity 20/101 picks the slot, which keeps 20/50 < 0.5: short is saved and
    # A (keeps 1.0, similarity 100/101, both better than the slot's) restored.
    assert serve(model, [*A, 7]) == [100]
    assert list(model.entries) == [held(short)]


def test_saving_skips_what_the_cache_holds_and_drops_what_the_slot_extends():
    model = make_cache_model("llamacpp", slots=1)
    serve(model, A[:50], B)  # A[:50] saved when B takes the slot
    serve(model, A)  # B saved, A[:50] restored (50 reused), then the slot holds A
    assert list(model.entries) == [held(B)]
    serve(model, C)  # A saved
    assert list(model.entries) == [held(B), held(A)]
    serve(model, [*A[:50], 5])  # C saved; A restored (keeps 0.5, similarity 50/51)
    assert list(model.entries) == [held(B), held(C)]
    serve(model, B)  # the slot (A[:50] + [5]) is saved, B restored
    assert list(model.entries) == [held(C), held([*A[:50], 5])]


def test_the_size_limit_drops_the_oldest_entries():
    # 1 MiB per token and 150 MiB: two 100-token entries do not fit, one does.
    model = make_cache_model(
        "llamacpp", slots=1, cache_ram_mib=150, kv_bytes_per_token=1024 * 1024, ctx_tokens=0
    )
    assert serve(model, A, B, C, A) == [0, 0, 0, 0]
    # A was saved at B, B at C (A dropped), C at the second A (B dropped).
    assert list(model.entries) == [held(C)]


def test_idle_slots_are_saved_and_cleared_when_a_task_starts():
    model = make_cache_model("llamacpp", slots=2, kv_unified=True)
    serve(model, A)  # slot 1 (LRU tie: the last)
    serve(model, B)  # slot 0; slot 1 is idle: A saved and, with the unified KV, cleared
    assert [slot.tokens for slot in model.slots] == [held(B), b""]
    assert list(model.entries) == [held(A)]
    # A's next turn: no slot is similar, slot 1 is the LRU one, A is restored from RAM.
    assert serve(model, [*A, 7]) == [100]
    # Without a unified KV cache (an explicit --parallel) the idle slot keeps its tokens,
    # and A's next turn finds it there by similarity.
    model = make_cache_model("llamacpp", slots=2)
    serve(model, A, B)
    assert [slot.tokens for slot in model.slots] == [held(B), held(A)]
    assert list(model.entries) == [held(A)]
    assert serve(model, [*A, 7]) == [100]
    assert list(model.entries) == [held(A), held(B)]


def test_server_settings_reach_the_model_from_audit_and_replay():
    from pathlib import Path

    from click.testing import CliRunner

    from prefixlint.auditing import AuditOptions
    from prefixlint.auditing.options import new_cache_model
    from prefixlint.cli import main
    from prefixlint.replay.sim import cache_params

    assert cache_params("llamacpp", slots=2, cache_ram_mib=0, slot_prompt_similarity=None) == {
        "slots": 2,
        "cache_ram_mib": 0,
    }
    # Other models do not take them.
    assert cache_params("vllm", slots=2, cache_ram_mib=0) == {}
    options = AuditOptions(slots=2, slot_prompt_similarity=0.5, cache_ram_mib=0)
    model = new_cache_model("llamacpp", options)
    assert (model.slot_count, model.similarity, model.cache_ram_mib) == (2, 0.5, 0)
    assert not model.cache_idle_slots  # they need the prompt cache
    log = Path(__file__).parent.parent / "fixtures" / "logs" / "tau_openai_clean.jsonl"
    args = ["audit", str(log), "--cache", "llamacpp", "--parallel", "2", "--cache-ram", "0"]
    assert CliRunner().invoke(main, [*args, "--no-what-if"]).exit_code == 0


def test_a_shared_system_prompt_puts_every_session_on_one_slot():
    # Four slots, but a new conversation shares 90 of its 100 tokens with the slot holding
    # another one: similarity 0.9 > 0.10 picks that slot, which keeps 90/100 (>= 0.5), so
    # nothing is saved and the first conversation's tokens are overwritten.
    model = make_cache_model("llamacpp", cache_ram_mib=0)
    first, second = [*A[:90], *range(300, 310)], [*A[:90], *range(400, 410)]
    assert serve(model, first, second, [*first, 1]) == [0, 90, 90]


def test_a_slot_over_the_size_limit_is_not_saved():
    # 1 MiB per token, 150 MiB: a 200-token slot alone is over the limit, so alloc skips it
    # (server-task.cpp at 0c1e5709) and its next turn finds nothing to restore.
    model = make_cache_model(
        "llamacpp", slots=1, cache_ram_mib=150, kv_bytes_per_token=1024 * 1024, ctx_tokens=0
    )
    long = list(range(5000, 5200))
    assert serve(model, long, B) == [0, 0]
    assert list(model.entries) == []
    # The long prompt again: B is saved (100 MiB fits), nothing holds the long one.
    assert serve(model, [*long, 1]) == [0]
    assert list(model.entries) == [held(B)]


def test_the_token_limit_can_empty_the_prompt_cache():
    # No size limit, a 50-token context: A (100 tokens) is saved at B, then dropped by the
    # token limit at once; nothing is kept "to have one", so A's next turn reuses nothing.
    model = make_cache_model("llamacpp", slots=1, cache_ram_mib=-1, ctx_tokens=50)
    assert serve(model, A, B, [*A, 7]) == [0, 0, 0]
    assert list(model.entries) == []


def test_the_keep_fraction_is_computed_in_single_precision():
    # The slot holds A (100 tokens); a 97-token prompt shares its first 50. The server's
    # f_keep = (f_sim * 97) / 100 with f_sim = 50/97 in float is 0.49999997 < 0.5, so the
    # prompt cache is updated and A saved (it keeps 0.5 of itself, not more than the slot's
    # own 0.5: not restored). In exact arithmetic f_keep would be 0.5 and nothing saved.
    model = make_cache_model("llamacpp", slots=1)
    assert serve(model, A, [*A[:50], *range(7000, 7047)]) == [0, 50]
    assert list(model.entries) == [held(A)]
    # With 85 tokens, f_keep rounds to 0.50000006: the slot is kept, nothing saved.
    model = make_cache_model("llamacpp", slots=1)
    assert serve(model, A, [*A[:50], *range(7000, 7035)]) == [0, 50]
    assert list(model.entries) == []


def test_kv_unified_reaches_the_model_from_the_command_line():
    from click.testing import CliRunner

    from prefixlint.cli import main
    from prefixlint.replay.sim import cache_params

    assert cache_params("llamacpp", slots=2, kv_unified=True) == {"slots": 2, "kv_unified": True}
    log = Path(__file__).parent.parent / "fixtures" / "logs" / "tau_openai_clean.jsonl"
    base = ["replay", str(log), "--cache", "llamacpp", "--limit", "3", "--format", "json"]
    for flags, settings in (
        ((), {}),
        (("--parallel", "2"), {"slots": 2}),
        (("--parallel", "2", "--kv-unified"), {"slots": 2, "kv_unified": True}),
        (("--no-kv-unified",), {"kv_unified": False}),
    ):
        report = json.loads(CliRunner().invoke(main, [*base, *flags]).output)
        given = {k: v for k, v in report["settings"].items() if k in ("slots", "kv_unified")}
        assert given == settings, flags


def timed(model, *queries):
    """Serve ``(prompt, sent, answered)`` triples in order; cached tokens of each."""
    return [
        model.process(CacheQuery(tokens=p, timestamp=sent, finish=answered)).cached_tokens
        for p, sent, answered in queries
    ]


def test_a_request_arriving_while_another_runs_cannot_use_its_slot():
    model = make_cache_model("llamacpp", slots=2, cache_ram_mib=0)
    # A runs on slot 1 from 0 to 10; its next turn arrives at 1 and takes the other slot.
    assert timed(model, (A, 0.0, 10.0), ([*A, 7], 1.0, 2.0)) == [0, 0]
    assert [slot.tokens for slot in model.slots] == [held([*A, 7]), held(A)]
    # Once both are done, the longest common prefix wins: slot 0 (101 of 102 tokens).
    assert timed(model, ([*A, 7, 8], 20.0, 21.0)) == [101]
    # Served one after another, the next turn finds its slot.
    model = make_cache_model("llamacpp", slots=2, cache_ram_mib=0)
    assert timed(model, (A, 0.0, 10.0), ([*A, 7], 11.0, 12.0)) == [0, 100]


def test_times_without_a_finish_are_served_one_after_another():
    model = make_cache_model("llamacpp", slots=2, cache_ram_mib=0)
    assert timed(model, (A, 0.0, None), ([*A, 7], 0.0, None)) == [0, 100]
    # A finish but no arrival time: nothing is known to run alongside, so nothing is busy.
    model = make_cache_model("llamacpp", slots=2, cache_ram_mib=0)
    assert timed(model, (A, None, 10.0), ([*A, 7], None, 11.0)) == [0, 100]


def test_least_recently_used_means_released_longest_ago():
    model = make_cache_model("llamacpp", slots=2, cache_ram_mib=0)
    # A on slot 1 (0 to 10), B on slot 0 (1 to 3): slot 0 was released first, so C, similar
    # to neither, takes slot 0 though B was launched after A.
    assert timed(model, (A, 0.0, 10.0), (B, 1.0, 3.0), (C, 20.0, 21.0)) == [0, 0, 0]
    assert [slot.tokens for slot in model.slots] == [held(C), held(A)]


def test_with_every_slot_busy_the_request_waits_for_the_first_to_finish():
    model = make_cache_model("llamacpp", slots=2, cache_ram_mib=0)
    # A on slot 1 until 10, B on slot 0 until 5; B's next turn arrives at 2, is deferred, and
    # gets slot 0 when B is released there: it reuses B's 100 tokens.
    assert timed(model, (A, 0.0, 10.0), (B, 1.0, 5.0), ([*B, 9], 2.0, 6.0)) == [0, 0, 100]
    # A's next turn arrives at 3 with both busy again (A until 10, B's turn until 6): slot 0
    # frees first and holds B's conversation, so A's turn shares nothing with it.
    assert timed(model, ([*A, 7], 3.0, 7.0)) == [0]
    assert [slot.tokens for slot in model.slots] == [held([*A, 7]), held(A)]


def test_the_idle_slot_pass_skips_a_busy_slot():
    model = make_cache_model("llamacpp", slots=2, kv_unified=True)
    # B starts while A runs on slot 1: A's slot is neither saved to RAM nor cleared.
    assert timed(model, (A, 0.0, 10.0), (B, 1.0, 2.0)) == [0, 0]
    assert [slot.tokens for slot in model.slots] == [held(B), held(A)]
    assert list(model.entries) == []
    # One after the other, the idle pass saves A and clears its slot (the unified KV).
    model = make_cache_model("llamacpp", slots=2, kv_unified=True)
    assert timed(model, (A, 0.0, 1.0), (B, 2.0, 3.0)) == [0, 0]
    assert [slot.tokens for slot in model.slots] == [held(B), b""]
    assert list(model.entries) == [held(A)]


# ``--cache-reuse N``: chunks of at least N tokens that the new prompt continues with after
# the common prefix are shifted into place (``server-context.cpp``'s chunk loop).
SYSTEM, OLD, KEPT, NEW = list(range(1, 41)), list(range(100, 120)), list(range(200, 260)), [9]


def test_cache_reuse_is_off_by_default_as_in_the_server():
    model = make_cache_model("llamacpp", cache_ram_mib=0)
    assert model.cache_reuse == 0
    # History cut from the middle: only the system part is reused.
    assert serve(model, [*SYSTEM, *OLD, *KEPT], [*SYSTEM, *KEPT, *NEW]) == [0, 40]


def test_cache_reuse_keeps_what_follows_a_stretch_left_out():
    # The 20 tokens of OLD are skipped in the slot; KEPT (60 tokens >= 16) is shifted down:
    # 40 + 60 reused, the new token computed.
    model = make_cache_model("llamacpp", cache_ram_mib=0, cache_reuse=16)
    assert serve(model, [*SYSTEM, *OLD, *KEPT], [*SYSTEM, *KEPT, *NEW]) == [0, 100]


def test_cache_reuse_needs_a_chunk_of_the_minimum_size():
    # KEPT is 60 tokens: a minimum of 61 finds no chunk; 60 finds it.
    prompts = ([*SYSTEM, *OLD, *KEPT], [*SYSTEM, *KEPT, *NEW])
    for minimum, cached in ((61, 40), (60, 100)):
        model = make_cache_model("llamacpp", cache_ram_mib=0, cache_reuse=minimum)
        assert serve(model, *prompts) == [0, cached]


def test_cache_reuse_keeps_nothing_after_an_insertion():
    # The new prompt inserts NEW before KEPT: its next tokens (NEW, KEPT...) never start a
    # chunk of the slot, which is only searched forward from the prefix.
    model = make_cache_model("llamacpp", cache_ram_mib=0, cache_reuse=16)
    assert serve(model, [*SYSTEM, *KEPT], [*SYSTEM, *NEW, *KEPT]) == [0, 40]


def test_cache_reuse_takes_several_chunks_and_skips_short_matches():
    # Slot: SYSTEM, a, X, b, Y; prompt: SYSTEM, X, Y. The first X chunk matches; then Y is
    # searched from after X. A short match (3 tokens of Y at the front of b) is skipped.
    x, y = list(range(300, 320)), list(range(400, 420))
    a, b = [7] * 5, [*y[:3], 8, 8]
    model = make_cache_model("llamacpp", cache_ram_mib=0, cache_reuse=10)
    assert serve(model, [*SYSTEM, *a, *x, *b, *y], [*SYSTEM, *x, *y, *NEW]) == [0, 80]
    # A whole prompt found again (every token reused) still computes its last one.
    model = make_cache_model("llamacpp", cache_ram_mib=0, cache_reuse=10)
    assert serve(model, [*SYSTEM, *a, *x], [*SYSTEM, *x]) == [0, 59]


def test_cache_reuse_counts_trace_blocks_in_tokens():
    # Trace queries: units of block_tokens; a minimum of 20 tokens is two 16-token blocks.
    def trace(blocks):
        return CacheQuery(block_hashes=blocks, block_tokens=16)

    model = make_cache_model("llamacpp", cache_ram_mib=0, cache_reuse=20)
    results = [model.process(trace(b)).cached_tokens for b in ([1, 2, 3, 4, 5], [1, 4, 5, 6])]
    assert results == [0, 48]
    model = make_cache_model("llamacpp", cache_ram_mib=0, cache_reuse=20)
    results = [model.process(trace(b)).cached_tokens for b in ([1, 2, 3, 4], [1, 4, 5])]
    assert results == [0, 16]  # one block after the cut is below the minimum


def test_cache_reuse_option_reaches_the_model():
    from prefixlint.auditing import AuditOptions
    from prefixlint.auditing.options import new_cache_model
    from prefixlint.replay.sim import cache_params

    assert new_cache_model("llamacpp", AuditOptions(cache_reuse=256)).cache_reuse == 256
    assert cache_params("llamacpp", cache_reuse=64) == {"cache_reuse": 64}
    assert cache_params("vllm", cache_reuse=64) == {}
