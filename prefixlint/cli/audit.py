"""``prefixlint audit LOGS``: replay logged requests through cache models and explain misses.

Exit status: 0 when the audit passes, 1 when the hit rate is below ``--fail-under`` or worse
than ``--baseline``, 2 for usage and input errors (one line on stderr).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any, TextIO, cast

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from prefixlint.auditing.advice import HF_TEMPLATE_COST
from prefixlint.auditing.baseline import BaselineError, load_baseline, regressions
from prefixlint.auditing.dump import DUMP_FORMATS, TokenDump
from prefixlint.auditing.engine_metrics import MetricsError, engine_check, warning
from prefixlint.auditing.options import AuditError, AuditOptions
from prefixlint.auditing.pipeline import AUDITING, run_audit
from prefixlint.auditing.prices import PriceError, PriceTable
from prefixlint.auditing.redact import redact_report
from prefixlint.auditing.report_html import render_html
from prefixlint.auditing.report_json import render_json
from prefixlint.auditing.report_terminal import print_report
from prefixlint.auditing.results import AuditReport
from prefixlint.auditing.routing import DEFAULT_EPSILON, ROUTERS
from prefixlint.auditing.sweep import parse_capacities, sweep_csv
from prefixlint.cache.base import InvalidQuery
from prefixlint.cache.geometry import GeometryError, load_geometry, parse_bytes
from prefixlint.chat import (
    DEFAULT_ENGINE,
    DEFAULT_TEMPLATE,
    ENGINES,
    TemplateError,
    engine_tokenizer,
    get_renderer,
)
from prefixlint.cli.group import Callback
from prefixlint.cli.llama_server import llama_server_options, llama_server_settings
from prefixlint.cli.vllm_server import vllm_server_options
from prefixlint.sources.logs import LogReadError
from prefixlint.sources.logs.limits import DEFAULT_LIMITS, LogLimits
from prefixlint.tokenizers import TokenizerError

PROGRESS_MIN_BYTES = 1 << 20
EXECUTORS = ("local", "ray")


class AuditFailure(Exception):
    """A usage or input error, reported as one line with exit status 2."""


def parse_rate(value: str) -> float:
    """``0.8`` or ``80%`` as a fraction in [0, 1]."""
    text = value.strip()
    try:
        rate = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a rate (0.8 or 80%)") from None
    if not 0 <= rate <= 1:
        raise click.BadParameter(f"{value!r} is not between 0 and 1 (or 0% and 100%)")
    return rate


def _count_lines(paths: tuple[str, ...]) -> int | None:
    """Lines in the logs; ``None`` when one cannot be counted ahead (stdin, gzip)."""
    lines = 0
    for path in paths:
        if path == "-" or path.endswith(".gz") or not os.path.isfile(path):
            return None
        with open(path, "rb") as stream:
            lines += sum(chunk.count(b"\n") for chunk in iter(lambda: stream.read(1 << 20), b""))
    return lines


def _small(paths: tuple[str, ...]) -> bool:
    """Whether the logs are plain files too small to deserve a progress display."""
    if any(path == "-" or not os.path.isfile(path) for path in paths):
        return False
    return sum(os.path.getsize(path) for path in paths) < PROGRESS_MIN_BYTES


class RateColumn(ProgressColumn):
    """Requests (log lines) per second in the current phase."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed:,.0f} req/s")


class AuditProgress:
    """One progress display over every pass of an audit (``run_audit``'s phases)."""

    def __init__(self, progress: Progress, total: int | None) -> None:
        self.progress = progress
        self.total = total
        self.task = progress.add_task(AUDITING, total=total)

    def phase(self, name: str) -> None:
        """Start the bar again for the pass ``name``."""
        self.progress.reset(self.task, total=self.total, description=name)

    def line(self) -> None:
        self.progress.advance(self.task)


@contextlib.contextmanager
def _progress(paths: tuple[str, ...]) -> Iterator[AuditProgress | None]:
    """A progress display on stderr, only when it is a terminal and the logs are not small."""
    if not sys.stderr.isatty() or _small(paths):
        yield None
        return
    columns = (
        TextColumn("{task.description:>8}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TimeRemainingColumn(),
    )
    total = _count_lines(paths)
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        yield AuditProgress(progress, total)


def _limit_option(field: str, text: str) -> Callable[[Callback], Callback]:
    """``--max-...``: one of the log size limits (:class:`LogLimits`), 0 for none."""
    return click.option(
        "--" + field.replace("_", "-"),
        type=click.IntRange(min=0),
        default=getattr(DEFAULT_LIMITS, field),
        show_default=True,
        help=f"{text} 0: no limit.",
    )


@click.command("audit")
@click.argument("logs", nargs=-1, required=True, type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "--cache",
    "caches",
    multiple=True,
    default=("vllm",),
    show_default=True,
    help="Cache model (repeatable): vllm, sglang, llamacpp, openai, anthropic, deepseek, "
    "gemini, unlimited, belady.",
)
@click.option("--block-size", type=click.IntRange(min=1), help="Engine block size (vllm, belady).")
@click.option("--page-size", type=click.IntRange(min=1), help="SGLang page size.")
@click.option("--capacity-tokens", type=click.IntRange(min=0), help="Cache capacity in tokens.")
@llama_server_options
@click.option("--tokenizer", help="Tokenizer spec (default: qwen; qwen-raw for llamacpp).")
@click.option("--template", default="qwen3", show_default=True, help="qwen3 or hf:PATH.")
@click.option(
    "--engine",
    type=click.Choice(ENGINES),
    default=DEFAULT_ENGINE,
    show_default=True,
    help="Render requests as this engine's OpenAI server does.",
)
@click.option("--log-format", default="auto", show_default=True, help="Format of LOGS.")
@click.option(
    "--trace-block-size",
    type=click.IntRange(min=1),
    default=512,
    show_default=True,
    help="Tokens per hash id in Mooncake traces.",
)
@click.option(
    "--session-key",
    help="Request field naming the session (route, user, prompt_cache_key, metadata.user_id, "
    "a.b for nested fields); default: the log's session_id.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["terminal", "json"]),
    default="terminal",
    show_default=True,
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the report here.")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), help="Write an HTML report.")
@click.option("--what-if/--no-what-if", default=True, show_default=True)
@click.option(
    "--fail-under",
    type=parse_rate,
    metavar="RATE",
    help="Exit 1 if a hit rate is below RATE (0.8 or 80%).",
)
@click.option(
    "--baseline",
    type=click.Path(dir_okay=False),
    help="A saved --format json report: exit 1 only on regressions against it.",
)
@click.option("--prices", type=click.Path(dir_okay=False), help="Price table (TOML).")
@click.option(
    "--dump-tokens",
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Write each request's tokens (or hash ids) as JSON lines to this file.",
)
@click.option(
    "--dump-format",
    type=click.Choice(DUMP_FORMATS),
    help="tokens (the default) or mooncake: hash ids of --block-size tokens (default 512), "
    "as in Mooncake traces; with --redact only mooncake.",
)
@_limit_option("max_line_bytes", "Skip log lines longer than this many bytes.")
@_limit_option("max_log_bytes", "Stop with an error past this many bytes of one (unpacked) log.")
@_limit_option("max_gzip_ratio", "Stop with an error when a .gz log expands more than this.")
@click.option("--skipped", "list_skipped", is_flag=True, help="List the skipped lines.")
@click.option("--show-text", is_flag=True, help="Show whole differing components, not windows.")
@click.option(
    "--redact",
    is_flag=True,
    help="Show digests in place of logged text in every output; token dumps hold block ids.",
)
@click.option(
    "--group-by",
    help="Break results down by route, session, model, user or metadata.FIELD (top 20 shown).",
)
@click.option(
    "--prefill-tokens-per-second",
    type=click.FloatRange(min=0, min_open=True),
    help="The deployment's prefill speed: time-to-first-token savings (and GPU money).",
)
@click.option(
    "--gpu-hour-usd",
    type=click.FloatRange(min=0),
    help="With --prefill-tokens-per-second: price self-hosted engines by GPU time.",
)
@click.option(
    "--vllm-metrics",
    "vllm_metrics",
    multiple=True,
    type=click.Path(dir_okay=False),
    help="A vLLM /metrics scrape (twice: before and after the traffic): compare the engine's "
    "prefix-cache hit rate with the vllm model's.",
)
@click.option(
    "--vllm-metrics-tolerance",
    type=parse_rate,
    default="0.05",
    show_default=True,
    metavar="RATE",
    help="Warn when observed and predicted hit rates differ by more than RATE.",
)
@click.option(
    "--source",
    "sources",
    multiple=True,
    type=click.Path(exists=True),
    help="Templates and Python that built the prompts: link each miss to its source line.",
)
@click.option(
    "--model-geometry",
    metavar="NAME|config.json",
    help="The served model's KV geometry, for capacities in bytes: Qwen3-0.6B, Qwen3-4B, "
    "Qwen3-8B, Qwen3-14B, Qwen3-32B, Llama-3.1-8B, Llama-3.1-70B, or a Hugging Face "
    "config.json (or its folder).",
)
@click.option(
    "--kv-memory",
    metavar="SIZE",
    help="KV cache memory (8GiB, 500MB), with --model-geometry: the engine models' capacity, "
    "in place of --capacity-tokens.",
)
@click.option(
    "--sweep",
    is_flag=True,
    help="Capacity planning: hit rate and prefill tokens per eviction policy (lru, lfu, fifo, "
    "priority, belady) against KV capacity.",
)
@click.option(
    "--sweep-capacities",
    metavar="LIST",
    help="The sweep's capacities, in tokens (10k,100k,1M) or bytes (1GiB,8GiB, with "
    "--model-geometry); default: doubling up to the log's working set. Implies --sweep.",
)
@click.option(
    "--sweep-csv",
    type=click.Path(dir_okay=False),
    help="Write the sweep's points as CSV to this file. Implies --sweep.",
)
@click.option(
    "--replicas",
    type=click.IntRange(min=1),
    help="Routing what-if: spread the requests over this many replicas, each with its own "
    "vllm cache of the audit's capacity.",
)
@click.option(
    "--router",
    type=click.Choice(ROUTERS),
    default="prefix-aware",
    show_default=True,
    help="How --replicas assigns requests.",
)
@click.option(
    "--router-epsilon",
    type=click.FloatRange(min=0),
    default=DEFAULT_EPSILON,
    show_default=True,
    help="prefix-aware's load bound: a replica over (1 + EPSILON) x the mean prompt tokens "
    "so far is passed over.",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=0),
    default=1,
    show_default=True,
    help="Worker processes that render and tokenize the logs (0: one per core); the cache "
    "models run in order here, so the report is the same.",
)
@click.option(
    "--executor",
    type=click.Choice(EXECUTORS),
    default="local",
    show_default=True,
    help="Where rendering and the cache models run: this process (and --jobs workers), or "
    "a Ray cluster (needs prefixlint[ray]); the report is the same.",
)
@click.option(
    "--ray-address",
    metavar="ADDRESS",
    help="The Ray cluster of --executor ray (default: start or join a local one, as "
    "ray.init() does).",
)
@click.option(
    "--trace-out",
    metavar="DIR",
    help="With --executor ray: write the hash trace (no text) there as Parquet.",
)
@vllm_server_options
@click.pass_context
def audit(ctx: click.Context, /, logs: tuple[str, ...], **options: Any) -> None:
    """Replay logged requests through prefix-cache models; explain every miss."""
    try:
        failures = _audit(logs, options)
    except AuditFailure as exc:
        click.echo(f"prefixlint audit: {exc}", err=True)
        ctx.exit(2)
    for failure in failures:
        click.echo(f"prefixlint audit: {failure}", err=True)
    ctx.exit(1 if failures else 0)


def _planning(options: dict[str, Any]) -> dict[str, Any]:
    """The capacity options: ``--kv-memory`` over ``--model-geometry`` as a token capacity,
    and the sweep's capacities in tokens."""
    name, geometry = None, None
    if options["model_geometry"]:
        name, geometry = load_geometry(options["model_geometry"])
    capacity = options["capacity_tokens"]
    if options["kv_memory"]:
        if geometry is None:
            raise AuditFailure("--kv-memory needs --model-geometry (bytes per token)")
        if capacity is not None:
            raise AuditFailure("give --kv-memory or --capacity-tokens, not both")
        capacity = geometry.capacity_tokens(parse_bytes(options["kv_memory"]))
    per_token = None if geometry is None else geometry.bytes_per_token
    capacities: tuple[int, ...] = ()
    if options["sweep_capacities"]:
        try:
            capacities = tuple(parse_capacities(options["sweep_capacities"], per_token))
        except ValueError as exc:
            raise AuditFailure(str(exc)) from None
    return {
        "capacity_tokens": capacity,
        "sweep": bool(options["sweep"] or capacities or options["sweep_csv"]),
        "sweep_capacities": capacities,
        "kv_bytes_per_token": per_token,
        "geometry_name": name,
        "replicas": options["replicas"],
        "router": options["router"],
        "router_epsilon": options["router_epsilon"],
    }


def _check_report_folders(options: dict[str, Any]) -> None:
    """Stop before the audit, not after it, when a report could not be written: its folder
    is missing (a log can take minutes to replay)."""
    for option in ("output", "html_path", "sweep_csv", "dump_tokens"):
        path = options.get(option)
        if not path or path == "-" or "://" in path:
            continue
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise AuditFailure(f"{path}: cannot write the report: no folder {folder}")


def _unmatched_keys(report: AuditReport, options: dict[str, Any]) -> list[str]:
    """A ``--session-key`` or ``--group-by`` field that no request has (a misspelt field
    would otherwise change the causes, or drop the breakdown, without a word)."""
    found = []
    key = options["session_key"]
    if key is not None and all(record.session_id is None for record in report.records):
        found.append(
            f"--session-key {key}: no request has this field, so no request has a session "
            "(each is compared with the earlier request it shares the longest prefix with)"
        )
    group = options["group_by"]
    if group is not None and all(record.group is None for record in report.records):
        found.append(f"--group-by {group}: no request has this field; no breakdown shown")
    return found


def _audit(logs: tuple[str, ...], options: dict[str, Any]) -> list[str]:
    """Run the audit, write its reports, and return the reasons it fails (if any)."""
    _check_report_folders(options)
    try:
        prices = PriceTable.load(options["prices"])
        planning = _planning(options)
        baseline = load_baseline(options["baseline"]) if options["baseline"] else None
        audit_options = AuditOptions(
            caches=tuple(dict.fromkeys(options["caches"])),
            block_size=options["block_size"],
            page_size=options["page_size"],
            **planning,
            **llama_server_settings(options),
            tokenizer=engine_tokenizer(options["tokenizer"], options["engine"]),
            template=options["template"],
            engine=options["engine"],
            lora_modules=options["lora_modules"],
            image_tokens=options["image_tokens"],
            vision_processor=options["vision_processor"],
            log_format=options["log_format"],
            session_key=options["session_key"],
            what_if=options["what_if"],
            trace_block_tokens=options["trace_block_size"],
            prices=prices,
            full_text=options["show_text"],
            source_paths=options["sources"],
            prefill_tokens_per_second=options["prefill_tokens_per_second"],
            gpu_hour_usd=options["gpu_hour_usd"],
            group_by=options["group_by"],
            jobs=options["jobs"] or os.cpu_count() or 1,
            log_limits=LogLimits(
                max_line_bytes=options["max_line_bytes"],
                max_log_bytes=options["max_log_bytes"],
                max_gzip_ratio=options["max_gzip_ratio"],
            ),
        )
        if audit_options.template != DEFAULT_TEMPLATE:
            # Load it now: a template that cannot load is a usage error, not a skipped line.
            get_renderer(
                audit_options.template, audit_options.tokenizer, engine=audit_options.engine
            )
            if audit_options.template.startswith("hf:"):
                click.echo(f"note: {HF_TEMPLATE_COST}", err=True)
        with contextlib.ExitStack() as stack:
            on_prepared = None
            if options["dump_tokens"]:
                dump_format = _dump_format(options)
                # Opened for writing text.
                stream = cast(
                    TextIO, stack.enter_context(click.open_file(options["dump_tokens"], "w"))
                )
                dump = TokenDump(stream, dump_format, options["block_size"] or 512)
                on_prepared = dump.write
            shown = stack.enter_context(_progress(logs))
            report = _run(
                logs,
                audit_options,
                options,
                on_line=None if shown is None else shown.line,
                on_prepared=on_prepared,
                on_phase=None if shown is None else shown.phase,
            )
        if report.skipped and not report.records:
            first = next(iter(report.skipped))
            raise AuditFailure(f"{first.file}:{first.line}: {first.reason} (no line could be read)")
        if not report.records:
            # An empty log (a wrong path, a rotated file) has no hit rate: 0.0% would mislead.
            names = ", ".join(logs)
            raise AuditFailure(f"{names}: no requests to audit (the log is empty)")
        for unmatched in _unmatched_keys(report, options):
            click.echo(f"prefixlint audit: warning: {unmatched}", err=True)
        if options["vllm_metrics"]:
            report.engine_check = engine_check(
                report, options["vllm_metrics"], options["vllm_metrics_tolerance"]
            )
        _write_reports(report, options)
    except (
        AuditError,
        BaselineError,
        GeometryError,
        InvalidQuery,
        LogReadError,
        MetricsError,
        OSError,
        PriceError,
        TemplateError,
        TokenizerError,
    ) as exc:
        raise AuditFailure(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    disagreement = report.engine_check and warning(report.engine_check)
    if disagreement:
        click.echo(f"prefixlint audit: warning: {disagreement}", err=True)
    failures = []
    minimum = options["fail_under"]
    if minimum is not None:
        for model in report.cache_models:
            rate = report.totals(model).hit_rate
            if rate < minimum:
                failures.append(f"{model}: hit rate {rate:.2%} is below --fail-under {minimum:.2%}")
    if baseline is not None:
        failures += regressions(report, baseline)
    return failures


def _run(
    logs: tuple[str, ...],
    audit_options: AuditOptions,
    options: dict[str, Any],
    **hooks: Any,
) -> AuditReport:
    """The audit on the executor the options name (Ray only imported for ``ray``)."""
    if options["executor"] == "local":
        if options["ray_address"] or options["trace_out"]:
            raise AuditFailure("--ray-address and --trace-out need --executor ray")
        return run_audit(logs, audit_options, **hooks)
    from prefixlint.auditing.distributed import run_distributed

    return run_distributed(
        logs,
        audit_options,
        address=options["ray_address"],
        trace_out=options["trace_out"],
        **hooks,
    )


def _dump_format(options: dict[str, Any]) -> str:
    """The token dump's format: token ids decode back to the prompts, so --redact dumps
    block ids (``mooncake``) and refuses ``tokens``."""
    chosen = options["dump_format"]
    if not options["redact"]:
        return chosen or "tokens"
    if chosen == "tokens":
        raise AuditFailure(
            "--redact: token ids decode back to the prompts; use --dump-format mooncake "
            "(block ids) or leave --dump-format out"
        )
    return "mooncake"


def _write_reports(report: AuditReport, options: dict[str, Any]) -> None:
    if options["redact"]:
        report = redact_report(report)
    if options["sweep_csv"] and report.sweep is not None:
        with open(options["sweep_csv"], "w", encoding="utf-8", newline="") as stream:
            stream.write(sweep_csv(report.sweep))
    if options["html_path"]:
        with open(options["html_path"], "w", encoding="utf-8") as stream:
            stream.write(render_html(report))
    with click.open_file(options["output"] or "-", "w") as stream:
        if options["output_format"] == "json":
            stream.write(render_json(report))
        else:
            console = Console(file=stream, highlight=False, soft_wrap=False)
            print_report(report, console, list_skipped=options["list_skipped"])
