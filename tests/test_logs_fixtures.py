"""The generated request-log fixtures read back as documented in fixtures/logs/README.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from prefixlint.chat import content_text, render
from prefixlint.request import ChatRequest
from prefixlint.sources.logs import read_log

LOGS = Path(__file__).parent.parent / "fixtures" / "logs"
TAU = ["tau_openai_clean", "tau_openai_breakers", "tau_anthropic_clean", "tau_anthropic_breakers"]
ROW = re.compile(
    r"^\| (\d+) \| (tau-airline-\d) \| (\d) \| ([\w-]*) \| (.*?) \| (\d+) \| (\d+) \| (\d+) \|$"
)


def requests(name):
    items = list(read_log(str(LOGS / f"{name}.jsonl")))
    assert all(isinstance(item, ChatRequest) for item in items)
    return items


def readme_rows():
    text = (LOGS / "README.md").read_text(encoding="utf-8")
    return [match.groups() for match in map(ROW.match, text.splitlines()) if match]


@pytest.mark.parametrize("name", TAU)
def test_tau_logs_hold_the_same_traffic(name):
    items = requests(name)
    clean = requests(name.replace("breakers", "clean"))
    assert len(items) == len(clean) == 63
    assert [(r.session_id, r.timestamp) for r in items] == [
        (r.session_id, r.timestamp) for r in clean
    ]
    assert len({r.session_id for r in items}) == 9
    assert all(r.usage is not None and r.usage.cached_tokens is not None for r in items)
    assert [r.timestamp for r in items] == sorted(r.timestamp for r in items)


def test_anthropic_logs_carry_breakpoints_and_usage():
    for request in requests("tau_anthropic_breakers"):
        names = [name for name, _ in request.cache_breakpoints]
        assert names == ["tools[13]", "system", f"messages[{len(request.messages) - 1}]"]
        usage = request.usage
        assert usage.prompt_tokens >= usage.cached_tokens + usage.cache_write_tokens


def test_readme_table_matches_the_breakers_log():
    rows = readme_rows()
    items = requests("tau_openai_breakers")
    assert len(rows) == len(items)
    previous: dict[str, tuple[int, object]] = {}
    for row, request in zip(rows, items, strict=True):
        line, session, _, _, where, prompt, cached, _ = row
        rendered = render(request)
        assert int(line) == request.line and session == request.session_id
        assert int(prompt) == len(rendered.tokens) == request.usage.prompt_tokens
        assert int(cached) == request.usage.cached_tokens
        expected = ""
        if session in previous:
            prior_line, prior = previous[session]
            end = prior.components[-1].token_start
            shared = next(
                (
                    i
                    for i, (a, b) in enumerate(
                        zip(rendered.tokens, prior.tokens[:end], strict=False)
                    )
                    if a != b
                ),
                min(end, len(rendered.tokens)),
            )
            if shared < end:
                name = rendered.component_at_token(shared).name
                expected = f"line {prior_line}, token {shared}, `{name}`"
        assert where == expected, f"line {line}"
        previous[session] = (request.line, rendered)


@pytest.mark.parametrize(
    ("line", "component"),
    [(6, "messages[0]"), (13, "tools[0]"), (24, "tools[4]"), (31, "messages[0]"),
     (38, "messages[1]"), (44, "messages[1]"), (54, "messages[5]")],
)  # fmt: skip
def test_each_breaker_departs_where_documented(line, component):
    row = next(row for row in readme_rows() if int(row[0]) == line)
    assert row[4].endswith(f"`{component}`")


def test_model_change_line():
    items = {r.line: r for r in requests("tau_openai_breakers")}
    assert items[59].model == "gpt-4o-mini" and items[61].model == "gpt-4o"
    anthropic = {r.line: r for r in requests("tau_anthropic_breakers")}
    assert anthropic[59].model == "claude-haiku-4-5"


@pytest.mark.parametrize(
    ("name", "format", "count"),
    [
        ("responses_small", "openai-responses", 3),
        ("litellm_payloads", "litellm", 3),
        ("otel_spans", "otel", 4),
    ],
)
def test_small_logs(name, format, count):
    items = requests(name)
    assert [r.format for r in items] == [format] * count
    assert all(r.messages and r.session_id and r.timestamp for r in items)
    assert all(r.system or r.messages[0]["role"] == "system" for r in items)


def test_otel_encodings_agree():
    items = requests("otel_spans")
    users = {
        content_text(next(m for m in r.messages if m["role"] == "user")["content"]) for r in items
    }
    assert len(users) == 1
    assert [r.messages[-1]["role"] for r in items] == ["user", "user", "tool", "tool"]
    assert all(isinstance(r.messages[-1]["content"], str) for r in items[2:])
    assert [len(r.tools) for r in items] == [14, 14, 14, 0]  # message events carry no tools
