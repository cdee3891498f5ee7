"""The ``audit`` command: JSON shape, exit codes, privacy, HTML, token dumps, bad input."""

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from prefixlint.chat import render
from prefixlint.cli.audit import audit
from prefixlint.sources.logs import read_log

LOGS = Path(__file__).resolve().parent.parent / "fixtures" / "logs"
CLEAN = str(LOGS / "tau_openai_clean.jsonl")
BREAKERS = str(LOGS / "tau_openai_breakers.jsonl")
MALFORMED = str(LOGS / "malformed.jsonl")

COUNT = {"type": "integer", "minimum": 0}
RATE = {"type": "number", "minimum": 0, "maximum": 1}
MONEY = {"type": ["number", "null"]}
CAUSES = {
    "type": "object",
    "additionalProperties": {
        "type": "object",
        "required": ["requests", "uncached_tokens", "cost_tokens"],
        "properties": {"requests": COUNT, "uncached_tokens": COUNT, "cost_tokens": COUNT},
    },
}
MODEL_SUMMARY = {
    "type": "object",
    "required": [
        "requests",
        "prompt_tokens",
        "cached_tokens",
        "hit_rate",
        "skipped_lines",
        "by_cause",
        "usage",
    ],
    "properties": {
        "requests": COUNT,
        "prompt_tokens": COUNT,
        "cached_tokens": COUNT,
        "hit_rate": RATE,
        "cache_write_tokens": COUNT,
        "cost_usd": MONEY,
        "skipped_lines": COUNT,
        "by_cause": CAUSES,
        "usage": {"type": "object"},
    },
}
SCHEMA = {
    "type": "object",
    "required": ["version", "summary", "models", "requests", "skipped", "what_if", "examples"],
    "properties": {
        "summary": {
            "allOf": [MODEL_SUMMARY],
            "required": ["model_cache", "lines"],
        },
        "models": {"type": "object", "additionalProperties": MODEL_SUMMARY},
        "requests": {
            "type": "array",
            "items": {
                "type": "object",
                "required": [
                    "line",
                    "session_id",
                    "model_cache",
                    "prompt_tokens",
                    "cached_tokens",
                    "cause",
                    "component",
                    "divergence",
                ],
                "properties": {
                    "line": {"type": "integer", "minimum": 1},
                    "session_id": {"type": ["string", "null"]},
                    "model_cache": {"type": "string"},
                    "prompt_tokens": COUNT,
                    "cached_tokens": COUNT,
                    "observed_cached_tokens": {"type": ["integer", "null"]},
                    "cause": {"type": ["string", "null"]},
                    "component": {"type": ["string", "null"]},
                    "divergence": {
                        "type": ["object", "null"],
                        "required": ["char", "token"],
                    },
                },
            },
        },
        "skipped": {
            "type": "array",
            "items": {"type": "object", "required": ["file", "line", "reason"]},
        },
        "what_if": {
            "type": "array",
            "items": {
                "type": "object",
                "required": [
                    "fix",
                    "codes",
                    "model_cache",
                    "hit_rate_before",
                    "hit_rate_after",
                    "gain",
                    "prefill_tokens_saved",
                    "cost_saved_usd",
                ],
            },
        },
    },
}


def run(*args, input=None):
    return CliRunner().invoke(audit, [str(a) for a in args], input=input)


def run_json(*args):
    result = run(*args, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_json_report_shape_with_two_cache_models():
    data = run_json(BREAKERS, "--cache", "vllm", "--cache", "sglang")
    jsonschema.validate(data, SCHEMA)
    assert data["cache_models"] == ["vllm", "sglang"]
    assert set(data["models"]) == {"vllm", "sglang"}
    # One entry per request and cache model, in log order.
    assert len(data["requests"]) == 2 * 63
    assert [r["line"] for r in data["requests"][:4]] == [1, 1, 2, 2]
    summary = data["summary"]
    assert summary["model_cache"] == "vllm"
    assert summary["requests"] + summary["skipped_lines"] == summary["lines"] == 63
    # Totals reconcile with the per-request entries.
    vllm = [r for r in data["requests"] if r["model_cache"] == "vllm"]
    assert summary["cached_tokens"] == sum(r["cached_tokens"] for r in vllm)
    assert summary["prompt_tokens"] == sum(r["prompt_tokens"] for r in vllm)
    uncached = sum(r["prompt_tokens"] - r["cached_tokens"] for r in vllm if r["cause"])
    assert sum(c["uncached_tokens"] for c in summary["by_cause"].values()) == uncached
    assert summary["by_cause"]["PFX101"]["requests"] == 7
    located = [r for r in vllm if r["cause"] == "PFX201"]
    assert [(r["line"], r["component"], r["divergence"]["token"]) for r in located] == [
        (13, "tools[0]", 1316),
        (15, "tools[0]", 1316),
    ]


def test_what_if_ranks_fixes_and_together_is_best():
    data = run_json(BREAKERS)
    fixes = {w["fix"]: w for w in data["what_if"]}
    # Fixes for the causes found (the model change at line 59 is PFX601: "params"), and all
    # together.
    assert set(fixes) == {"volatile", "order", "whitespace", "history", "params", "all"}
    gains = [w["gain"] for w in data["what_if"]]
    assert gains == sorted(gains, reverse=True)
    # The timestamp session is the largest loss, so moving volatile values out of the system
    # prompt is the best single fix; all fixes together do at least as well as any one.
    assert (
        max((w for w in data["what_if"] if w["fix"] != "all"), key=lambda w: w["gain"])["fix"]
        == "volatile"
    )
    assert fixes["all"]["hit_rate_after"] >= max(w["hit_rate_after"] for w in data["what_if"])
    assert fixes["volatile"]["prefill_tokens_saved"] > 0
    # Keeping the session on its first model lets line 59 read the conversation's cache.
    assert fixes["params"]["gain"] > 0
    # The log names gpt-4o, so the price table puts a cost on the saving.
    assert fixes["volatile"]["cost_saved_usd"] > 0


def test_nothing_to_fix_means_no_what_if():
    assert run_json(CLEAN)["what_if"] == []


@pytest.mark.parametrize(
    ("rate", "code"),
    [("0.99", 1), ("99%", 1), ("0.5", 0), ("50%", 0)],
)
def test_fail_under(rate, code):
    # The clean log's vLLM hit rate is about 92%.
    assert run(CLEAN, "--no-what-if", "--fail-under", rate).exit_code == code


def test_fail_under_rejects_a_non_rate():
    result = run(CLEAN, "--fail-under", "lots")
    assert result.exit_code == 2


def test_baseline_fails_only_on_regressions(tmp_path):
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(run_json(CLEAN, "--no-what-if")))
    same = run(CLEAN, "--no-what-if", "--baseline", baseline)
    assert same.exit_code == 0, same.output
    worse = run(BREAKERS, "--no-what-if", "--baseline", baseline)
    assert worse.exit_code == 1
    assert "hit rate fell" in worse.output and "new cause PFX101" in worse.output
    better_baseline = tmp_path / "breakers.json"
    better_baseline.write_text(json.dumps(run_json(BREAKERS, "--no-what-if")))
    assert run(CLEAN, "--no-what-if", "--baseline", better_baseline).exit_code == 0


def test_bad_baseline_is_an_input_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    result = run(CLEAN, "--baseline", bad)
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "not an audit report" in result.output


def test_redact_hashes_text_and_sessions():
    plain = run_json(BREAKERS, "--no-what-if")
    redacted = run_json(BREAKERS, "--no-what-if", "--redact")
    assert "tau-airline-1" in json.dumps(plain)
    assert "03-03" in plain["examples"]["vllm"]["PFX101"][0]["after"]
    text = json.dumps(redacted)
    assert "tau-airline" not in text and "2025-03-03" not in text and "Airline" not in text
    example = redacted["examples"]["vllm"]["PFX101"][0]
    assert re.fullmatch(r"sha256:[0-9a-f]{16}", example["after"])
    assert redacted["requests"][0]["session_id"].startswith("sha256:")


def test_terminal_never_prints_a_prompt_unless_asked():
    system_prompt = next(read_log(BREAKERS)).messages[0]["content"]
    paragraph = system_prompt.split("\n\n")[2]
    shown = run(BREAKERS, "--no-what-if")
    assert shown.exit_code == 0
    assert "PFX101" in shown.output and "⟦" in shown.output
    assert paragraph not in shown.output
    full = run(BREAKERS, "--no-what-if", "--show-text")
    assert paragraph.replace("\n", "\\n")[:60] in full.output


def test_html_report_is_self_contained(tmp_path):
    page = tmp_path / "audit.html"
    result = run(BREAKERS, "--html", page, "--cache", "vllm", "--cache", "openai")
    assert result.exit_code == 0, result.output
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>")
    assert not re.search(r"<script|<link|<img|src=|@import|url\(", html)
    svgs = re.findall(r"<svg.*?</svg>", html, flags=re.S)
    assert len(svgs) == 1 + 3 * 2  # hit rate over time; causes, what-if, sharing per model
    for svg in svgs:
        ET.fromstring(svg)
    for title in ("Hit rate over the log", "by cause", "What-if", "Prefix sharing"):
        assert title in html


def test_dump_tokens_round_trip(tmp_path):
    dump = tmp_path / "tokens.jsonl"
    assert run(CLEAN, "--no-what-if", "--dump-tokens", dump).exit_code == 0
    rows = [json.loads(line) for line in dump.read_text().splitlines()]
    requests = list(read_log(CLEAN))
    assert [row["line"] for row in rows] == [r.line for r in requests]
    for row, request in zip(rows, requests, strict=True):
        assert tuple(row["tokens"]) == render(request).tokens


def test_mooncake_dump_audits_like_the_log(tmp_path):
    # Hash ids of 16-token blocks, chained: vLLM with 16-token blocks caches the same blocks
    # from the ids as from the tokens.
    dump = tmp_path / "trace.jsonl"
    result = run(BREAKERS, "--no-what-if", "--dump-tokens", dump, "--dump-format", "mooncake",
                 "--block-size", "16")  # fmt: skip
    assert result.exit_code == 0, result.output
    first = json.loads(dump.read_text().splitlines()[0])
    assert set(first) == {"line", "timestamp", "input_length", "output_length", "hash_ids"}
    assert len(first["hash_ids"]) == -(-first["input_length"] // 16)
    tokens = run_json(BREAKERS, "--no-what-if", "--block-size", "16")
    trace = run_json(dump, "--no-what-if", "--log-format", "mooncake", "--trace-block-size",
                     "16", "--block-size", "16")  # fmt: skip
    assert [r["cached_tokens"] for r in trace["requests"]] == [
        r["cached_tokens"] for r in tokens["requests"]
    ]
    assert [r["prompt_tokens"] for r in trace["requests"]] == [
        r["prompt_tokens"] for r in tokens["requests"]
    ]


def test_malformed_lines_are_counted_and_listed():
    data = run_json(MALFORMED, "--no-what-if")
    skipped = [entry["line"] for entry in data["skipped"]]
    # fixtures/logs/README.md: lines 1, 11, 13, 15 and 16 are requests.
    assert skipped == [2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14]
    assert data["summary"]["requests"] == 5
    listed = run(MALFORMED, "--no-what-if", "--skipped")
    assert f"{MALFORMED}:3: malformed JSON" in listed.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/no/such/log.jsonl"], "cannot read log"),
        ([CLEAN, "--cache", "nonsense"], "unknown cache model"),
        ([CLEAN, "--prices", "/no/such/prices.toml"], "cannot read price table"),
        ([CLEAN, "--tokenizer", "tiktoken:nonsense"], "unknown tiktoken encoding"),
    ],
)
def test_input_errors_are_one_line_and_exit_2(args, message):
    result = run(*args)
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and message in result.output


def write_log(path, entries):
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


SYSTEM = "You are the travel desk assistant. " + "Follow the booking policy carefully. " * 200


def chat(messages, **fields):
    return {"model": "gpt-4o", "messages": messages, **fields}


def test_reported_usage_is_compared_and_absent_usage_is_not_zero(tmp_path):
    turn1 = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Hi"}]
    turn2 = [*turn1, {"role": "assistant", "content": "Hello"}, {"role": "user", "content": "Go"}]
    log = write_log(
        tmp_path / "log.jsonl",
        [
            {"request": chat(turn1), "response": {"usage": {"prompt_tokens": 1}}},
            {
                "request": chat(turn2),
                "response": {
                    "usage": {"prompt_tokens": 1, "prompt_tokens_details": {"cached_tokens": 512}}
                },
            },
        ],
    )
    data = run_json(log, "--no-what-if")
    assert [r["observed_cached_tokens"] for r in data["requests"]] == [None, 512]
    usage = data["summary"]["usage"]
    assert usage["requests_reporting"] == 1 and usage["observed_cached_tokens"] == 512
    assert usage["predicted_cached_tokens"] == data["requests"][1]["cached_tokens"]


@pytest.mark.parametrize(
    ("cache", "param", "expected"),
    [
        # OpenAI keeps one cache per prompt_cache_key: the second turn, sent with a new key,
        # finds nothing although it continues the first turn's 1,000+ token prompt.
        ("openai", "prompt_cache_key", "PFX601"),
        ("vllm", "cache_salt", "PFX601"),
        ("sglang", "cache_salt", "PFX601"),
        ("unlimited", "cache_salt", "PFX601"),
        # quiet near-misses: a parameter the model does not read loses it nothing
        ("openai", "cache_salt", None),
        ("vllm", "prompt_cache_key", None),
        ("sglang", "prompt_cache_key", None),
        ("unlimited", "prompt_cache_key", None),
    ],
)
def test_a_namespace_change_is_pfx601_where_the_model_reads_it(tmp_path, cache, param, expected):
    turn1 = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Hi"}]
    turn2 = [*turn1, {"role": "assistant", "content": "Hello"}, {"role": "user", "content": "Go"}]
    log = write_log(
        tmp_path / "log.jsonl",
        [
            {"session_id": "s", "request": chat(turn1, **{param: "a"})},
            {"session_id": "s", "request": chat(turn2, **{param: "b"})},
        ],
    )
    data = run_json(log, "--no-what-if", "--cache", cache)
    second = data["requests"][1]
    if expected is None:
        assert second["cause"] in (None, "first-seen") and second["cost_tokens"] == 0
        assert second["cached_tokens"] > 0
        return
    assert (second["cause"], second["component"], second["cached_tokens"]) == (
        expected,
        f"params.{param}",
        0,
    )
    assert second["cost_tokens"] == data["requests"][0]["prompt_tokens"]


def test_session_key_names_the_session(tmp_path):
    turn1 = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Hi"}]
    turn2 = [*turn1, {"role": "assistant", "content": "Hello"}, {"role": "user", "content": "Go"}]
    log = write_log(
        tmp_path / "log.jsonl",
        [
            {"request": chat(turn1, conversation={"id": "c1"})},
            {"request": chat(turn2, conversation={"id": "c1"})},
        ],
    )
    data = run_json(log, "--no-what-if", "--session-key", "conversation.id")
    assert [r["session_id"] for r in data["requests"]] == ["c1", "c1"]


@pytest.mark.parametrize(
    ("where", "key"),
    [("request", "metadata.user_id"), ("envelope", "metadata.user_id"), ("request", "user")],
)
def test_session_key_reads_metadata_and_params(tmp_path, where, key):
    turn1 = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Hi"}]
    turn2 = [*turn1, {"role": "assistant", "content": "Hello"}, {"role": "user", "content": "Go"}]
    entries = []
    for turn, user in ((turn1, "u7"), (turn2, "u7"), (turn1, "u8")):
        body = chat(turn, user=user) if key == "user" else chat(turn)
        entry = {"request": body}
        if key.startswith("metadata."):
            (body if where == "request" else entry)["metadata"] = {"user_id": user}
        entries.append(entry)
    log = write_log(tmp_path / "log.jsonl", entries)
    data = run_json(log, "--no-what-if", "--session-key", key)
    assert [r["session_id"] for r in data["requests"]] == ["u7", "u7", "u8"]


def test_standard_input_is_read_once():
    # A file is read again for the what-if pass; standard input cannot be, so every fix is
    # simulated along the way, and the results agree with the file's for the fixes found.
    log = Path(BREAKERS).read_text()
    piped = CliRunner().invoke(audit, ["-", "--format", "json"], input=log)
    assert piped.exit_code == 0, piped.output
    streamed = {w["fix"]: w for w in json.loads(piped.output)["what_if"]}
    from_file = {w["fix"]: w for w in run_json(BREAKERS)["what_if"]}
    assert set(streamed) == set(from_file) | {"params"}
    for fix in ("volatile", "order", "whitespace", "history"):
        assert streamed[fix]["hit_rate_after"] == from_file[fix]["hit_rate_after"]


def test_hash_id_trace(tmp_path):
    # Mooncake-style ids of 16-token blocks, vLLM blocks of 16. vLLM looks up at most
    # floor((N - 1) / 16) blocks: 3 for a 64-token prompt, 2 for a 48-token one.
    rows = [([1, 2, 3], 48), ([1, 2, 3, 4], 64), ([1, 2, 5, 6], 64), ([1, 2, 3, 4], 64)]
    log = write_log(
        tmp_path / "trace.jsonl",
        [
            {"timestamp": i, "input_length": n, "output_length": 0, "hash_ids": ids}
            for i, (ids, n) in enumerate(rows)
        ],
    )
    data = run_json(log, "--trace-block-size", "16", "--block-size", "16", "--no-what-if")
    requests = data["requests"]
    # 1: nothing cached, all new. 2: extends 1; its 3 looked-up blocks [1, 2, 3] are cached
    # (48) and the 4th holds the last token, which vLLM always computes: nothing to explain.
    # 3: shares [1, 2] and then differs: 32 cached, block 5 is new. Without text or a
    # session a different block is a new conversation, not an edit: first-seen, not
    # content-changed. 4: repeats 2: 48 cached.
    assert [r["cached_tokens"] for r in requests] == [0, 48, 32, 48]
    assert [r["cause"] for r in requests] == ["first-seen", None, "first-seen", None]
    assert [r["cost_tokens"] for r in requests] == [0, 0, 0, 0]


def test_conversations_without_session_ids(tmp_path):
    # Two conversations interleaved, no session ids. Each turn continues its own
    # conversation's previous turn (the longest shared prefix), never the other one; the
    # third turn of A edits A's first answer, which is a history edit, not a new conversation.
    system = {"role": "system", "content": SYSTEM}

    def turn(*texts):
        roles = ["user", "assistant"] * 3
        return [system, *({"role": r, "content": t} for r, t in zip(roles, texts, strict=False))]

    paris = "Book a flight to Paris for two adults, economy, leaving next Friday morning."
    rome = "Cancel my hotel booking in Rome for the conference week in May, please."
    turns = [
        turn(paris),
        turn(rome),
        turn(paris, "Which date exactly?", "Friday the 14th."),
        turn(rome, "Which booking number?", "The one made in March."),
        turn(paris, "Which day exactly?", "Friday the 14th.", "Done.", "Thanks a lot."),
    ]
    log = write_log(tmp_path / "log.jsonl", [{"request": chat(t)} for t in turns])
    requests = run_json(log, "--no-what-if")["requests"]
    assert [r["cause"] for r in requests[:4]] == ["first-seen"] * 4
    assert requests[4]["cause"] == "PFX501"
    assert (requests[4]["predecessor_line"], requests[4]["component"]) == (3, "messages[2]")


@pytest.mark.parametrize("args", [(), ("--format", "json"), ("--fail-under", "0.5")])
def test_an_empty_log_is_an_input_error_not_a_zero_hit_rate(tmp_path, args):
    log = tmp_path / "empty.jsonl"
    log.write_bytes(b"")
    result = run(log, *args)
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [
        f"prefixlint audit: {log}: no requests to audit (the log is empty)"
    ]


def test_an_empty_log_beside_a_full_one_is_audited(tmp_path):
    log = tmp_path / "empty.jsonl"
    log.write_bytes(b"")
    result = run(log, LOGS / "tau_openai_clean.jsonl", "--no-what-if")
    assert result.exit_code == 0, result.output


def _two_sessions(tmp_path):
    lines = []
    for session in ("a", "b"):
        for turn in range(2):
            messages = [{"role": "system", "content": "You help."}]
            messages += [
                {"role": "user", "content": f"{session} question {n}"} for n in range(turn + 1)
            ]
            body = {"model": "m", "messages": messages, "user": session}
            lines.append(json.dumps({"session_id": session, "request": body}))
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return log


@pytest.mark.parametrize(
    ("args", "warned"),
    [
        (("--session-key", "user"), None),
        (("--group-by", "user"), None),
        (("--session-key", "usr"), "--session-key usr: no request has this field"),
        (("--group-by", "metadata.team"), "--group-by metadata.team: no request has this field"),
    ],
)
def test_a_key_no_request_has_is_warned_about(tmp_path, args, warned):
    result = CliRunner().invoke(audit, [str(_two_sessions(tmp_path)), "--no-what-if", *args])
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.output.splitlines() if "warning:" in line]
    if warned is None:
        assert warnings == []
    else:
        (line,) = warnings
        assert line.startswith(f"prefixlint audit: warning: {warned}")


@pytest.mark.parametrize("option", ["-o", "--html", "--dump-tokens", "--sweep-csv"])
def test_a_report_into_a_missing_folder_stops_before_the_audit(tmp_path, option, monkeypatch):
    import prefixlint.cli.audit as cli

    def never(*args, **kwargs):
        raise AssertionError("the audit ran")

    monkeypatch.setattr(cli, "_run", never)
    target = tmp_path / "missing" / "report.out"
    result = run(LOGS / "tau_openai_clean.jsonl", option, target)
    assert result.exit_code == 2, result.output
    assert result.output == (
        f"prefixlint audit: {target}: cannot write the report: no folder {target.parent}\n"
    )
