"""Which request parameter divides each cache model's namespaces: OpenAI's
``prompt_cache_key`` only the ``openai`` model, vLLM's and SGLang's ``cache_salt`` only the
engines and the references that keep their namespaces (``unlimited``, ``belady``)."""

import pytest

from prefixlint.cache import CACHE_MODELS, CacheQuery, make_cache_model
from prefixlint.cache.query import build_query
from prefixlint.chat import get_renderer
from prefixlint.request import ChatRequest

# Long enough for every provider's minimum (Gemini's largest: 4,096 tokens).
SYSTEM = " ".join(
    f"Rule {n}: answer the traveller politely and check the booking." for n in range(500)
)
MESSAGES = ({"role": "user", "content": "Can I change my flight to Boston?"},)


def shared_tokens(name: str, first: dict[str, str], second: dict[str, str]) -> int:
    """What model ``name`` serves the second of two requests that differ only in ``params``."""
    renderer = get_renderer("qwen3", "qwen")
    queries = []
    for params in (first, second):
        request = ChatRequest(
            line=len(queries) + 1,
            format="openai-chat",
            model="gpt-4o",
            system=SYSTEM,
            messages=MESSAGES,
            params=params,
            cache_breakpoints=(("system", 300.0),),
        )
        queries.append(build_query(request, renderer.render(request)))
    model = make_cache_model(name)
    if name == "belady":
        return model.run(queries)[1].cached_tokens  # type: ignore[attr-defined]
    return [model.process(query) for query in queries][1].cached_tokens


KEYS = ({"prompt_cache_key": "alice"}, {"prompt_cache_key": "bob"})
SALTS = ({"cache_salt": "alice"}, {"cache_salt": "bob"})


@pytest.mark.parametrize(
    ("name", "key_shares", "salt_shares"),
    [
        ("vllm", True, False),
        ("sglang", True, False),
        ("belady", True, False),
        ("unlimited", True, False),
        ("openai", False, True),
        ("anthropic", True, True),
        ("gemini", True, True),
        ("deepseek", True, True),
        ("llamacpp", True, True),
    ],
)
def test_each_model_reads_only_its_own_namespace_parameter(name, key_shares, salt_shares):
    assert (shared_tokens(name, *KEYS) > 0) is key_shares
    assert (shared_tokens(name, *SALTS) > 0) is salt_shares
    # quiet near-misses: the same key or salt twice shares everywhere
    assert shared_tokens(name, KEYS[0], KEYS[0]) > 0
    assert shared_tokens(name, SALTS[0], SALTS[0]) > 0


@pytest.mark.parametrize("name", sorted(CACHE_MODELS))
def test_namespace_params_name_what_the_model_reads(name):
    """Attribution trusts ``namespace_params``: it must say what the model does."""
    params = CACHE_MODELS[name].namespace_params
    assert ("params.prompt_cache_key" in params) is (shared_tokens(name, *KEYS) == 0)
    assert ("params.cache_salt" in params) is (shared_tokens(name, *SALTS) == 0)


@pytest.mark.parametrize(
    ("params", "cache_key", "cache_salt"),
    [
        ({"prompt_cache_key": "k"}, "k", None),
        ({"cache_salt": "s"}, None, "s"),
        ({"prompt_cache_key": "k", "cache_salt": "s"}, "k", "s"),
        ({"prompt_cache_key": 7}, "7", None),
        ({}, None, None),
    ],
)
def test_the_query_keeps_the_provider_key_and_the_engine_salt_apart(params, cache_key, cache_salt):
    request = ChatRequest(line=1, format="openai-chat", messages=MESSAGES, params=params)
    query = build_query(request, get_renderer("qwen3", "qwen").render(request))
    assert (query.cache_key, query.cache_salt) == (cache_key, cache_salt)


@pytest.mark.parametrize(
    ("name", "field", "shares"),
    [
        ("vllm", "cache_key", True),
        ("vllm", "cache_salt", False),
        ("sglang", "cache_key", True),
        ("sglang", "cache_salt", False),
        ("unlimited", "cache_key", True),
        ("unlimited", "cache_salt", False),
        ("openai", "cache_key", False),
        ("openai", "cache_salt", True),
    ],
)
def test_trace_block_queries_follow_the_same_namespaces(name, field, shares):
    """Mooncake-style queries: two prompts share their first two 512-token blocks."""
    model = make_cache_model(name)
    for ids, value in (((1, 2, 3), "a"), ((1, 2, 4), "b")):
        query = CacheQuery(block_hashes=ids, block_tokens=512, **{field: value})
        result = model.process(query)
    assert (result.cached_tokens > 0) is shares
