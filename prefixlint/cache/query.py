"""From a rendered request to the :class:`CacheQuery` that every cache model reads."""

from __future__ import annotations

from collections.abc import Hashable

from prefixlint.cache.base import ENGINE_SALT_PARAM, PROVIDER_KEY_PARAM, CacheQuery
from prefixlint.request import ChatRequest, Rendered


def build_query(
    request: ChatRequest, rendered: Rendered, lora_modules: frozenset[str] = frozenset()
) -> CacheQuery:
    """The cache query for a rendered request: tokens, breakpoints and block boundaries;
    ``lora_modules`` are the names of the served LoRA adapters (see :func:`model_namespace`)."""
    ends = {c.name: c.token_end for c in rendered.components}
    breakpoints = tuple(
        (ends[name], ttl) for name, ttl in request.cache_breakpoints if name in ends
    )
    boundaries = sorted(
        {
            c.token_end
            for c in rendered.components
            if c.name == "system" or c.name.startswith(("messages[", "tools["))
        }
    )
    return CacheQuery(
        tokens=rendered.tokens,
        packed=rendered.packed,
        timestamp=request.timestamp,
        output_tokens=request.output_length or 0,
        cache_key=text_param(request, PROVIDER_KEY_PARAM),
        cache_salt=text_param(request, ENGINE_SALT_PARAM),
        model=request.model,
        breakpoints=breakpoints,
        boundaries=tuple(boundaries),
        extra_keys=model_namespace(request.model, lora_modules),
        media=tuple((m.offset, m.length, m.identity) for m in rendered.media),
    )


def prefill_query(query: CacheQuery) -> CacheQuery:
    """``query``'s prompt alone, in its namespace (``cache_key``, ``cache_salt``, ``model``,
    ``extra_keys``): what a replay that prefills the prompt and decodes nothing asks of its
    cache."""
    return CacheQuery(
        tokens=query.tokens,
        packed=query.packed,
        cache_key=query.cache_key,
        cache_salt=query.cache_salt,
        model=query.model,
        extra_keys=query.extra_keys,
        media=query.media,
    )


def model_namespace(
    model: str | None, lora_modules: frozenset[str] = frozenset()
) -> tuple[Hashable, ...]:
    """KV states belong to one model: requests to different models share no cache entries.

    A request whose ``model`` names a served LoRA adapter (vLLM ``--lora-modules``) runs on
    the base model with that adapter, and every block carries the adapter's name: in vLLM's
    ``vllm/v1/core/kv_cache_utils.py`` (the 0.33 line cited in :mod:`prefixlint.cache.vllm`)
    ``_gen_lora_extra_hash_keys`` returns ``[request.lora_request.lora_name]`` (early v1
    releases: ``lora_int_id``, the same namespaces for adapters with distinct ids)."""
    if model is None:
        return ()
    if model in lora_modules:
        return (("lora_name", model),)
    return (f"model:{model}",)


def text_param(request: ChatRequest, name: str) -> str | None:
    """The request's parameter ``name`` as text, if it gives one."""
    value = request.params.get(name)
    return None if value is None else str(value)
