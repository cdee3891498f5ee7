"""Capacity planning (``audit --sweep``): replay the audit's cache queries through each
eviction policy at a series of KV capacities and report hit rate and prefill tokens.

Policies: ``lru`` (the ``vllm`` model: vLLM's free queue), ``lfu``, ``fifo``, ``priority``
(:mod:`prefixlint.cache.policies`) and ``belady`` (the offline optimum), all on vLLM blocks
of the audit's ``--block-size`` (default 16).

The *working set* is what an unbounded vLLM cache comes to hold: every distinct full block
of the log, the duplicates vLLM makes when it recomputes a cached block (the last block of
a repeated prompt), and the largest partial tail block a running request holds, in tokens.
The default capacities double from the largest request's footprint (a smaller cache rejects
it) up to the working set, which is always the last point (a doubling within 1.5x of it is
left out); there every policy hits what an unlimited cache hits (the *ceiling*).

The *knee* of a curve is its smallest capacity whose hit rate reaches 90% of the curve's
gain (lowest point + 0.9 x (highest - lowest)): past it, more memory buys little.

The sweep replays the whole log once per policy and capacity (Belady needs its future), so
the audit keeps each request as :func:`compact_query` gives it: the chained hashes of its
blocks, 8 bytes per block, instead of its tokens (and their packed copy), 16 bytes per token.
"""

from __future__ import annotations

import csv
import io
import itertools
import re
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

from prefixlint.auditing.results import CapacitySweep, SweepPoint
from prefixlint.cache.base import CacheQuery, CacheResult
from prefixlint.cache.belady import BeladyCache
from prefixlint.cache.chain_memo import ChainHashMemo
from prefixlint.cache.geometry import GeometryError, parse_bytes
from prefixlint.cache.policies import EvictionCache
from prefixlint.cache.vllm import VllmCache, request_hashes, token_hashes
from prefixlint.request import ChatRequest, Rendered

SWEEP_POLICIES = ("lru", "lfu", "fifo", "priority", "belady")
KNEE_FRACTION = 0.9
DEFAULT_BLOCK_SIZE = 16


@dataclass(frozen=True)
class TraceEntry:
    """One audited request as the sweep and the routing what-if replay it."""

    query: CacheQuery
    protected_tokens: int
    session: str | None


def compact_query(query: CacheQuery, memo: ChainHashMemo) -> CacheQuery:
    """``query`` as its blocks' chained hashes (blocks of ``memo.block_size``), for which
    every policy of the sweep and the routing what-if computes what it does for ``query``:
    the hashes name the blocks, their prefix and namespace (extra keys, salt, media), and a
    trace query's ids are compared as such.

    A query already in block form, or with logged output ids (blocks that later prompts can
    hit, which a block-form query cannot hold), is kept as it is. A trace holds one form or
    the other: a compact query shares no block with a token query. The audit's queries
    carry output counts only, so it keeps every one compact."""
    if query.tokens is None or query.output_ids:
        return query
    hashes = array("q", token_hashes(query, memo))
    prompt = query.prompt_tokens
    if prompt % memo.block_size:
        hashes.append(0)  # the partial last block: never cached, so never compared
    return CacheQuery(
        block_hashes=hashes,
        block_tokens=memo.block_size,
        input_length=prompt,
        timestamp=query.timestamp,
        output_tokens=query.output_count,
        model=query.model,
    )


def leading_tokens(request: ChatRequest, rendered: Rendered | None) -> int:
    """Where the prompt's leading system prompt and tool definitions end, in tokens (0
    when it starts with neither): the blocks ``priority`` keeps longest."""
    if rendered is None:
        return 0
    system_first = bool(request.messages) and request.messages[0].get("role") == "system"
    end = 0
    for component in sorted(rendered.components, key=lambda c: c.token_start):
        name = component.name
        leading = name in ("system", "tools") or name.startswith("tools[")
        if not (leading or (system_first and name == "messages[0]")):
            break
        end = component.token_end
    return end


def held_blocks(query: CacheQuery, block_size: int) -> int:
    """The KV blocks a request holds while it runs (prompt and all but the last output)."""
    return -(-(query.prompt_tokens + max(query.output_count - 1, 0)) // block_size)


def working_set_tokens(queries: Sequence[CacheQuery], block_size: int) -> int:
    """What an unbounded vLLM cache comes to hold, in tokens: the distinct full blocks, the
    copies vLLM makes when it recomputes cached blocks past the ``prompt - 1`` cap, and the
    largest partial tail block a running request holds."""
    memo, unknown = ChainHashMemo(block_size), itertools.count()
    distinct: set[int] = set()
    copies = tail = 0
    for query in queries:
        hashes = request_hashes(query, block_size, memo, unknown)
        run = len(list(itertools.takewhile(distinct.__contains__, hashes)))
        copies += max(run - max(query.prompt_tokens - 1, 0) // block_size, 0)
        distinct.update(hashes)
        tail = max(tail, held_blocks(query, block_size) - len(hashes))
    return (len(distinct) + copies + tail) * block_size


def default_capacities(queries: Sequence[CacheQuery], block_size: int) -> list[int]:
    """Doubling capacities from the largest request's footprint up to the working set (a
    doubling within 1.5x of the working set is left out)."""
    top = working_set_tokens(queries, block_size)
    low = max((held_blocks(q, block_size) for q in queries), default=1) * block_size
    capacities = []
    capacity = low
    while capacity * 1.5 <= top:  # a doubling close under the working set adds nothing
        capacities.append(capacity)
        capacity *= 2
    return [*capacities, top]


_TOKEN_SUFFIX = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9}


def parse_capacities(text: str, bytes_per_token: int | None) -> list[int]:
    """``10k,100k,1M`` (tokens) or ``1GiB,8GiB`` (bytes, needs the model geometry) as token
    capacities, sorted."""
    capacities = set()
    for item in text.split(","):
        item = item.strip()
        match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kKmMgG]?)", item)
        if match:
            capacities.add(int(float(match.group(1)) * _TOKEN_SUFFIX[match.group(2).lower()]))
            continue
        try:
            size = parse_bytes(item)
        except GeometryError:
            raise ValueError(
                f"--sweep-capacities: {item!r} is neither tokens (10k, 1M) nor bytes (8GiB)"
            ) from None
        if bytes_per_token is None:
            raise ValueError(f"--sweep-capacities: {item!r} is in bytes; give --model-geometry")
        capacities.add(size // bytes_per_token)
    return sorted(capacities)


def _replay(policy: str, capacity: int, block_size: int, trace: Sequence[TraceEntry]) -> int:
    """Cached tokens over ``trace`` for one policy at one capacity."""
    queries = [entry.query for entry in trace]
    results: list[CacheResult]
    if policy == "lru":
        lru = VllmCache(block_size=block_size, capacity_tokens=capacity)
        results = [lru.process(q) for q in queries]
    elif policy == "belady":
        results = BeladyCache(block_size=block_size, capacity_tokens=capacity).run(queries)
    else:
        cache = EvictionCache(policy, block_size, capacity)  # type: ignore[arg-type]
        results = [cache.process(e.query, e.protected_tokens) for e in trace]
    return sum(r.cached_tokens for r in results)


def knee(points: Sequence[SweepPoint]) -> int:
    """The smallest capacity reaching :data:`KNEE_FRACTION` of the curve's gain."""
    ordered = sorted(points, key=lambda p: p.capacity_tokens)
    low, high = min(p.hit_rate for p in ordered), max(p.hit_rate for p in ordered)
    target = low + KNEE_FRACTION * (high - low)
    return next(p.capacity_tokens for p in ordered if p.hit_rate >= target - 1e-12)


def run_sweep(
    trace: Sequence[TraceEntry],
    capacities: Sequence[int] | None = None,
    *,
    block_size: int = DEFAULT_BLOCK_SIZE,
    bytes_per_token: int | None = None,
    geometry: str | None = None,
) -> CapacitySweep:
    """Every policy of :data:`SWEEP_POLICIES` at every capacity (default:
    :func:`default_capacities`). A capacity below the largest request's footprint is an
    error (``ValueError``): that cache would reject the request."""
    queries = [entry.query for entry in trace]
    chosen = list(capacities) if capacities else default_capacities(queries, block_size)
    need = max((held_blocks(q, block_size) for q in queries), default=0) * block_size
    if chosen[0] < need:
        raise ValueError(
            f"sweep capacity {chosen[0]} tokens is below the largest request's {need} tokens"
        )
    prompt = sum(q.prompt_tokens for q in queries)
    unlimited = VllmCache(block_size=block_size)
    ceiling = sum(unlimited.process(q).cached_tokens for q in queries)
    points = []
    for policy in SWEEP_POLICIES:
        for capacity in chosen:
            cached = _replay(policy, capacity, block_size, trace)
            points.append(
                SweepPoint(
                    policy=policy,
                    capacity_tokens=capacity,
                    capacity_bytes=None if bytes_per_token is None else capacity * bytes_per_token,
                    hit_rate=cached / prompt if prompt else 0.0,
                    prefill_tokens=prompt - cached,
                )
            )
    knees = {p: knee([x for x in points if x.policy == p]) for p in SWEEP_POLICIES}
    return CapacitySweep(
        block_size=block_size,
        working_set_tokens=working_set_tokens(queries, block_size),
        ceiling_hit_rate=ceiling / prompt if prompt else 0.0,
        bytes_per_token=bytes_per_token,
        geometry=geometry,
        points=points,
        knees=knees,
    )


def sweep_csv(sweep: CapacitySweep) -> str:
    """The sweep's points as CSV, one row per policy and capacity, with a header."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["policy", "capacity_tokens", "capacity_bytes", "hit_rate", "prefill_tokens"])
    for p in sweep.points:
        bytes_ = "" if p.capacity_bytes is None else p.capacity_bytes
        writer.writerow(
            [p.policy, p.capacity_tokens, bytes_, f"{p.hit_rate:.6f}", p.prefill_tokens]
        )
    return out.getvalue()
