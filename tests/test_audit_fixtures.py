"""The audit on the tau-bench fixture logs, against numbers worked out by hand.

Prompt token counts and first-difference positions are those listed in
``fixtures/logs/README.md`` (Qwen3 template, Qwen vocabulary). The rest is arithmetic:

- Every prompt ends with Qwen3's generation prompt ``<|im_start|>assistant\\n`` followed by the
  empty think block ``<think>``, ``\\n\\n``, ``</think>``, ``\\n\\n`` (4 tokens). The next request
  of the conversation renders the assistant's answer right after ``<|im_start|>assistant\\n``, so
  it shares ``N_prev - 4`` tokens with its predecessor.
- vLLM (block 16) serves the leading full blocks it has seen: ``floor(shared / 16) * 16``.
- Anthropic puts the last ``cache_control`` breakpoint on the last message block, 7 tokens
  before the end (``<|im_start|>``, ``assistant``, ``\\n`` and the 4 think-block tokens), and
  the next request reads exactly that entry: ``cached = N_prev - 7``.
- The cost of a cause is what the predecessor would have supplied (``min(N_prev, N)``) minus
  what was cached.
"""

import gc
from pathlib import Path

import pytest

from prefixlint.auditing import AuditOptions, run_audit
from prefixlint.collector import PACED_THRESHOLDS

LOGS = Path(__file__).resolve().parent.parent / "fixtures" / "logs"
GENERATION_TAIL = 4


def audit(name: str, cache: str):
    report = run_audit([str(LOGS / name)], AuditOptions(caches=(cache,), what_if=False))
    return {record.line: record for record in report.records}, report


def vllm_cached(shared: int) -> int:
    return shared // 16 * 16


# Session tau-airline-0 (no breaker): (line, prompt tokens) from the README table.
SESSION_0 = [(1, 2993), (2, 3098), (3, 3547), (5, 3887), (8, 4291), (10, 4687), (11, 4877)]


@pytest.mark.parametrize("name", ["tau_openai_clean.jsonl", "tau_openai_breakers.jsonl"])
def test_clean_session_continues_its_predecessor(name):
    records, _ = audit(name, "vllm")
    previous = None
    for line, prompt in SESSION_0:
        record = records[line]
        assert record.prompt_tokens == prompt
        # Line 1 is the first request of the log: nothing cached. Every later turn shares
        # N_prev - 4 tokens: line 2 -> floor((2993 - 4) / 16) * 16 = 2976, line 3 -> 3088, ...
        expected = 0 if previous is None else vllm_cached(previous - GENERATION_TAIL)
        assert record.cached_tokens == expected, line
        assert record.cause == "first-seen"
        assert record.cost_tokens == 0
        previous = prompt
    # Session hit rate: (0 + 2976 + 3088 + 3536 + 3872 + 4272 + 4672) / (2993 + 3098 + 3547
    # + 3887 + 4291 + 4687 + 4877) = 22416 / 27380.
    cached = sum(records[line].cached_tokens for line, _ in SESSION_0)
    prompt = sum(records[line].prompt_tokens for line, _ in SESSION_0)
    assert (cached, prompt) == (22416, 27380)


def test_clean_log_has_no_divergence():
    records, _ = audit("tau_openai_clean.jsonl", "vllm")
    assert {r.cause for r in records.values()} == {"first-seen"}


# (line, cause, component, first differing token, predecessor line, predecessor's prompt).
# Cached = floor(token / 16) * 16; cost = min(N_prev, N) - cached.
BREAKERS = [
    # timestamp: "The current time is 2025-03-03 09:00:59" vs "09:01:11" -> the minute digit
    # is token 29 (line 6) or 31 (seconds, line 9): 16 cached, the rest of the predecessor lost.
    (6, "PFX101", "messages[0]", 29, 4, 2982),
    (9, "PFX101", "messages[0]", 31, 6, 3049),
    (14, "PFX101", "messages[0]", 31, 9, 3535),
    (16, "PFX101", "messages[0]", 29, 14, 3917),
    (20, "PFX101", "messages[0]", 31, 16, 4257),
    (23, "PFX101", "messages[0]", 31, 20, 4561),
    # tool order shuffled on line 13: the first tool differs at token 1316 -> 1312 cached,
    # 3045 - 1312 = 1733 lost.
    (13, "PFX201", "tools[0]", 1316, 12, 3045),
    # key order of tools[4] changed on line 24: token 1949 -> 1936 cached, 3042 - 1936 = 1106.
    (24, "PFX202", "tools[4]", 1949, 19, 3042),
    # a blank line of the system prompt lost on line 31: token 8 -> nothing cached, 3150 lost.
    (31, "PFX402", "messages[0]", 8, 29, 3150),
    # first user message edited (line 38): token 2975 -> 2960 cached, 3114 - 2960 = 154.
    (38, "PFX501", "messages[1]", 2975, 35, 3114),
    # sliding window: the first kept message moves (2955 -> 2944 cached).
    (44, "PFX502", "messages[1]", 2955, 43, 3377),
    (48, "PFX502", "messages[1]", 2955, 44, 3554),
    (53, "PFX502", "messages[1]", 2956, 51, 3715),
    # first tool result elided (line 54): token 3099 -> 3088 cached; the predecessor (3422)
    # is longer than this request (3418), so it could supply 3418: 3418 - 3088 = 330.
    (54, "PFX504", "messages[5]", 3099, 50, 3422),
]


@pytest.mark.parametrize(("line", "cause", "component", "token", "predecessor", "prev"), BREAKERS)
def test_breaker_attribution_openai(line, cause, component, token, predecessor, prev):
    records, _ = audit("tau_openai_breakers.jsonl", "vllm")
    record = records[line]
    assert (record.cause, record.component) == (cause, component)
    assert record.divergence_token == token
    assert record.predecessor_line == predecessor
    assert record.cached_tokens == vllm_cached(token)
    assert record.cost_tokens == min(prev, record.prompt_tokens) - vllm_cached(token)


# The request after a one-off breaker departs from its broken predecessor at the same place,
# but the cache still holds the turn before the breaker: it shares N - 4 tokens with it.
AFTER_BREAKER = [
    # line 15 follows line 13 (tools shuffled) and continues line 12 (3045 tokens):
    # cached floor(3041 / 16) * 16 = 3040; lost min(3554, 3638) - 3040 = 514.
    (15, "PFX201", 13, 3045, 3554, 514),
    # line 27 follows line 24 (key order) and continues line 19 (3042): 3024 cached, 3334 - 3024.
    (27, "PFX202", 24, 3042, 3334, 310),
    # line 34 follows line 31 (newline lost) and continues line 29 (3150): 3136, 3230 - 3136.
    (34, "PFX402", 31, 3150, 3230, 94),
]


@pytest.mark.parametrize(("line", "cause", "predecessor", "held", "prev", "lost"), AFTER_BREAKER)
def test_request_after_a_one_off_breaker(line, cause, predecessor, held, prev, lost):
    records, _ = audit("tau_openai_breakers.jsonl", "vllm")
    record = records[line]
    assert (record.cause, record.predecessor_line) == (cause, predecessor)
    assert record.cached_tokens == vllm_cached(held - GENERATION_TAIL)
    assert record.cost_tokens == min(prev, record.prompt_tokens) - record.cached_tokens == lost


def test_first_turn_with_a_timestamp_diverges_from_other_sessions():
    # Line 4 opens session 1 with "2025-03-03" where the other sessions say "2024-05-15": the
    # year's last digit is token 17 (<|im_start|> system \n # " Air" line " Agent" " Policy"
    # \n\n The " current" " time" " is" " " 2 0 2 -> 17), so one block is cached.
    records, _ = audit("tau_openai_breakers.jsonl", "vllm")
    record = records[4]
    assert (record.cause, record.component, record.divergence_token) == (
        "PFX101",
        "messages[0]",
        17,
    )
    assert record.cached_tokens == 16
    # Another conversation can only supply its shared head (system prompt and tools), not
    # its own user messages: less than its whole prompt (line 3: 3547 tokens).
    assert 0 < record.cost_tokens < 3547 - 16


def test_breaker_summary_openai():
    # Causes by line, from the tables above: six PFX101 turns plus the first one (line 4),
    # lines 13 and 15 (PFX201), 24 and 27 (PFX202), 31 and 34 (PFX402), 38 (PFX501), 44, 48,
    # 53 (PFX502), 54 (PFX504); line 59 sends the session to another model, whose engine has
    # none of the conversation cached (KV states belong to one model): PFX601, and line 61
    # comes back to the first model, whose cache lacks line 59's turn: PFX601 again (like the
    # request after every other one-off breaker). Every other request is a plain new turn.
    records, report = audit("tau_openai_breakers.jsonl", "vllm")
    counts = {cause: entry.requests for cause, entry in report.by_cause("vllm").items()}
    assert counts == {
        "PFX101": 7,
        "PFX201": 2,
        "PFX202": 2,
        "PFX402": 2,
        "PFX501": 1,
        "PFX502": 3,
        "PFX504": 1,
        "PFX601": 2,
        "first-seen": 43,
    }
    assert (records[59].cause, records[59].component) == ("PFX601", "model")
    assert (records[61].cause, records[61].component) == ("PFX601", "model")
    assert records[59].cached_tokens == 0
    # Back on the first model, line 60 reads the session's prefix from that model's cache.
    assert records[60].cached_tokens > 0


# Anthropic log: (line, prompt tokens) of session 0, from the usage in the fixture
# (input + cache_read + cache_creation).
ANTHROPIC_SESSION_0 = [(1, 2868), (2, 2973), (3, 3423), (5, 3763), (8, 4168), (10, 4565)]


def test_anthropic_session_reads_the_last_breakpoint():
    records, _ = audit("tau_anthropic_breakers.jsonl", "anthropic")
    previous = None
    for line, prompt in ANTHROPIC_SESSION_0:
        record = records[line]
        assert record.prompt_tokens == prompt
        # Line 2 reads 2868 - 7 = 2861 and writes up to its own last breakpoint:
        # 2973 - 7 - 2861 = 105 tokens written.
        expected = 0 if previous is None else previous - 7
        assert record.cached_tokens == expected, line
        assert record.cache_write_tokens == prompt - 7 - expected
        previous = prompt


def test_anthropic_breakers_attribution_and_usage():
    records, report = audit("tau_anthropic_breakers.jsonl", "anthropic")
    # Anthropic order puts tools first, so every breaker sits at another token than in the
    # OpenAI rendering, but the same lines break for the same reasons.
    expected = {4: "PFX101", 6: "PFX101", 13: "PFX201", 24: "PFX202", 31: "PFX402"}
    expected.update({38: "PFX501", 44: "PFX502", 54: "PFX504"})
    for line, cause in expected.items():
        assert records[line].cause == cause, line
    # Line 59 switches to claude-haiku-4-5, whose minimum cacheable prefix is 4,096 tokens:
    # its 3,084-token prompt cannot be cached at all. The switch is what cost the tokens the
    # session's cache held: PFX601.
    assert (records[59].prompt_tokens, records[59].cached_tokens) == (3084, 0)
    assert (records[59].cause, records[59].component) == ("PFX601", "model")
    # The fixture's usage was simulated with the same documented rules: every request
    # reports its cached tokens, and the prediction equals them.
    usage = report.usage("anthropic")
    assert usage.requests == 63
    assert usage.observed_cached == usage.predicted_cached


def test_not_reported_is_not_zero():
    _, report = audit("responses_small.jsonl", "vllm")
    observed = [r.observed_cached for r in report.records]
    assert report.usage("vllm").requests == sum(o is not None for o in observed)


def test_the_collector_is_paced_during_an_audit_and_restored_after():
    seen = []
    before = gc.get_threshold()
    run_audit(
        [str(LOGS / "tau_openai_breakers.jsonl")],
        AuditOptions(caches=("vllm",), what_if=False),
        on_line=lambda: seen.append(gc.get_threshold()),
    )
    assert set(seen) == {PACED_THRESHOLDS}
    assert gc.get_threshold() == before
