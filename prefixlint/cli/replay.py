"""``prefixlint replay LOGS --backend sim|torch|server``: count what a prefix cache reuses.

- ``sim`` (default): the cache models, on CPU.
- ``torch``: a real transformer with a paged KV block pool (needs ``prefixlint[gpu]``).
- ``server``: a running OpenAI-compatible engine at ``--url`` (nothing is sent without it).

Exit status: 0 when every check passes, 1 when one fails, 2 for usage and input errors.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from prefixlint.chat import DEFAULT_ENGINE, ENGINES, TemplateError, engine_tokenizer
from prefixlint.cli.llama_server import llama_server_options, llama_server_settings
from prefixlint.cli.vllm_server import vllm_server_options
from prefixlint.replay import ReplayError
from prefixlint.replay.report import RENDERERS, ReplayReport
from prefixlint.tokenizers import TokenizerError, get_tokenizer

DEFAULT_BLOCK_SIZE = 16


def _fail(message: str) -> None:
    click.echo(f"prefixlint replay: {message}", err=True)
    sys.exit(2)


@click.command("replay")
@click.argument("logs", nargs=-1, required=True, type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "--backend", type=click.Choice(["sim", "torch", "server"]), default="sim", show_default=True
)
@click.option("--log-format", default="auto", show_default=True, help="Log format of LOGS.")
@click.option(
    "--template", default="qwen3", show_default=True, help="Chat template: qwen3, hf:PATH."
)
@click.option("--tokenizer", help="Tokenizer spec (default: qwen; qwen-raw for llamacpp).")
@click.option(
    "--engine",
    type=click.Choice(ENGINES),
    default=DEFAULT_ENGINE,
    show_default=True,
    help="Render requests as this engine's OpenAI server does.",
)
@click.option(
    "--cache", default="vllm", show_default=True, help="Cache model (sim and server backends)."
)
@click.option("--block-size", type=click.IntRange(min=1), help="vLLM block size (default 16).")
@click.option("--page-size", type=click.IntRange(min=1), help="SGLang page size (default 1).")
@click.option(
    "--capacity-tokens", type=click.IntRange(min=1), help="Cache capacity (sim and server)."
)
@llama_server_options
@click.option("--limit", type=click.IntRange(min=1), help="Replay only the first N requests.")
@click.option(
    "--max-prompt-tokens",
    type=click.IntRange(min=1),
    help="Cut each prompt to its first N tokens (sim and torch).",
)
@click.option("--model", default="qwen3-0.6b", show_default=True, help="Preset or config.json.")
@click.option("--weights", type=click.Path(exists=True), help="Local model weights (torch).")
@click.option("--device", default="auto", show_default=True, help="auto, cpu, cuda, cuda:N.")
@click.option(
    "--dtype",
    type=click.Choice(["auto", "float32", "bfloat16", "float16"]),
    default="auto",
    show_default=True,
)
@click.option("--kv-memory", help="KV pool size, e.g. 8GiB (default: a fraction of free memory).")
@click.option(
    "--kv-fraction",
    type=click.FloatRange(0, 1, min_open=True),
    default=0.5,
    show_default=True,
    help="Share of free device memory for the KV pool when --kv-memory is not given.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of random weights.")
@click.option("--url", help="Base URL of an OpenAI-compatible server (server backend).")
@click.option("--served-model", help="Model name to send (default: the server's first model).")
@click.option("--concurrency", type=click.IntRange(min=1), default=1, show_default=True)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=60.0,
    show_default=True,
    help="Seconds for each whole request to the server, its response body included.",
)
@click.option("--retries", type=click.IntRange(min=0), default=3, show_default=True)
@click.option(
    "--max-response-bytes",
    type=click.IntRange(min=1),
    help="A larger server response is an error for that request (default 8 MiB).",
)
@click.option("--api-key-env", help="Environment variable holding the server's API key.")
@click.option(
    "--absent-cached-is-zero",
    is_flag=True,
    help="Read a missing cached-token count as 0 (SGLang omits it when nothing was cached).",
)
@click.option("--metrics/--no-metrics", default=True, show_default=True, help="Scrape /metrics.")
@click.option(
    "--reset-cache",
    is_flag=True,
    help="Empty the server's prefix cache first (vLLM /reset_prefix_cache, SGLang /flush_cache).",
)
@click.option("--format", "output_format", type=click.Choice(sorted(RENDERERS)), default="terminal")
@vllm_server_options
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the report here.")
def replay(**options: Any) -> None:
    """Replay logged requests on a cache model, a real transformer, or an engine server."""
    try:
        report = _run(options)
    except (ReplayError, TemplateError, TokenizerError) as exc:
        _fail(str(exc))
    text = RENDERERS[options["output_format"]](report)
    if options["output"]:
        Path(options["output"]).write_text(text, encoding="utf-8")
    else:
        click.echo(text, nl=False)
    sys.exit(0 if report.passed else 1)


def _run(options: dict[str, Any]) -> ReplayReport:
    from prefixlint.replay import backends
    from prefixlint.replay.inputs import load_prompts
    from prefixlint.replay.sim import cache_params

    backend = options["backend"]
    options["tokenizer"] = engine_tokenizer(options["tokenizer"], options["engine"])
    if backend == "server" and not options["url"]:
        raise ReplayError("--backend server needs --url")
    if backend != "server" and options["url"]:
        raise ReplayError("--url is only used by --backend server")
    if backend == "server" and options["max_prompt_tokens"]:
        raise ReplayError("--max-prompt-tokens cannot apply to a server, which sees whole prompts")
    params = cache_params(
        options["cache"],
        block_size=options["block_size"],
        page_size=options["page_size"],
        capacity_tokens=options["capacity_tokens"],
        **llama_server_settings(options),
    )
    if backend == "torch" and (
        options["cache"] != "vllm" or options["capacity_tokens"] or options["page_size"]
    ):
        raise ReplayError(
            "--backend torch uses the vllm cache model, sized by --kv-memory/--kv-fraction"
        )
    inputs = load_prompts(
        options["logs"],
        log_format=options["log_format"],
        template=options["template"],
        tokenizer=options["tokenizer"],
        engine=options["engine"],
        lora_modules=options["lora_modules"],
        image_tokens=options["image_tokens"],
        vision_processor=options["vision_processor"],
        max_prompt_tokens=options["max_prompt_tokens"],
        limit=options["limit"],
    )
    if backend == "sim":
        return backends.run_sim(inputs, cache=options["cache"], params=params)
    if backend == "torch":
        torch_options = backends.TorchOptions(
            model=options["model"],
            weights=options["weights"],
            device=options["device"],
            dtype=options["dtype"],
            kv_memory=options["kv_memory"],
            kv_fraction=options["kv_fraction"],
            block_size=options["block_size"] or DEFAULT_BLOCK_SIZE,
            seed=options["seed"],
        )
        vocab = getattr(get_tokenizer(options["tokenizer"]), "vocab_size", 0)
        return backends.run_torch(inputs, torch_options, tokenizer_vocab=vocab)
    api_key = os.environ.get(options["api_key_env"]) if options["api_key_env"] else None
    server_options = backends.ServerOptions(
        url=options["url"],
        served_model=options["served_model"],
        concurrency=options["concurrency"],
        timeout=options["timeout"],
        retries=options["retries"],
        api_key=api_key,
        absent_means_zero=options["absent_cached_is_zero"],
        scrape_metrics=options["metrics"],
        reset_cache=options["reset_cache"],
        max_response_bytes=options["max_response_bytes"],
    )
    return backends.run_server(
        inputs,
        server_options,
        cache=options["cache"],
        params=params,
        lora_modules=options["lora_modules"],
    )
