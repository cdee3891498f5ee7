"""audit --vllm-metrics: the engine's prefix-cache counters against the vllm model."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from prefixlint.auditing.engine_metrics import MetricsError, read_scrape
from prefixlint.cli.audit import audit

LOG = str(Path(__file__).resolve().parent.parent / "fixtures" / "logs" / "tau_openai_clean.jsonl")
# The vllm model on LOG (default block size 16, unlimited capacity).
PROMPT, CACHED = 227_381, 209_840
HEAD = (
    "# HELP vllm:prefix_cache_queries Prefix cache queries, in terms of number of queried tokens.\n"
    "# TYPE vllm:prefix_cache_queries counter\n"
)


def scrape(tmp_path, name, queries, hits, prefix="vllm:prefix_cache"):
    path = tmp_path / name
    path.write_text(
        HEAD
        + f'{prefix}_queries_total{{engine="0",model_name="Qwen/Qwen3-0.6B"}} {queries}\n'
        + f'{prefix}_queries_created{{engine="0",model_name="Qwen/Qwen3-0.6B"}} 1.7e+09\n'
        + f'{prefix}_hits_total{{engine="0",model_name="Qwen/Qwen3-0.6B"}} {hits}\n'
        + 'vllm:prompt_tokens_total{engine="0"} 5\n'
    )
    return path


def run(*args):
    return CliRunner().invoke(audit, [LOG, "--no-what-if", *map(str, args)])


def run_json(*args):
    result = run("--format", "json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), result


def test_two_scrapes_give_the_traffic_between_them(tmp_path):
    before = scrape(tmp_path, "before.txt", 1000, 400)
    after = scrape(tmp_path, "after.txt", 1000 + PROMPT, 400 + CACHED)
    data, result = run_json("--vllm-metrics", before, "--vllm-metrics", after)
    check = data["vllm_metrics"]
    assert (check["queried_tokens"], check["hit_tokens"]) == (PROMPT, CACHED)
    assert check["observed_hit_rate"] == check["predicted_hit_rate"] == round(CACHED / PROMPT, 6)
    assert check["difference"] == 0 and check["agrees"] and check["warning"] is None
    assert check["files"] == [str(before), str(after)]
    assert "warning" not in result.stderr


def test_a_disagreement_beyond_the_tolerance_warns(tmp_path):
    # Half the queried tokens hit on the engine; the model predicts 92.3%.
    path = scrape(tmp_path, "metrics.txt", 200_000, 100_000)
    data, result = run_json("--vllm-metrics", path)
    check = data["vllm_metrics"]
    assert check["observed_hit_rate"] == 0.5
    assert check["difference"] == round(0.5 - CACHED / PROMPT, 6)  # -0.422...
    assert not check["agrees"] and check["tolerance"] == 0.05
    assert "differs from the vllm model's 92.3% by 42.3 points" in check["warning"]
    assert result.stderr.startswith("prefixlint audit: warning: the engine's hit rate 50.0%")
    terminal = run("--vllm-metrics", path)
    assert terminal.exit_code == 0
    assert "observed hit rate 50.0% (100,000 of 200,000 queried tokens)" in terminal.stdout
    assert "they DISAGREE (tolerance 5.0 points)" in terminal.stdout
    html = tmp_path / "report.html"
    assert run("--vllm-metrics", path, "--html", html).exit_code == 0
    page = html.read_text()
    assert "<h2>Observed against predicted (vLLM)</h2>" in page
    assert "<b>Warning:</b> the engine&#x27;s hit rate 50.0%" in page


def test_tolerance_option(tmp_path):
    path = scrape(tmp_path, "metrics.txt", 1000, 900)  # 90.0% against 92.3%
    data, _ = run_json("--vllm-metrics", path)
    assert data["vllm_metrics"]["difference"] == round(0.9 - CACHED / PROMPT, 6)  # -2.3 points
    assert data["vllm_metrics"]["agrees"]
    data, _ = run_json("--vllm-metrics", path, "--vllm-metrics-tolerance", "2%")
    assert not data["vllm_metrics"]["agrees"]


def test_without_a_scrape_the_report_has_none():
    data, _ = run_json()
    assert data["vllm_metrics"] is None


def test_legacy_counter_names(tmp_path):
    path = scrape(tmp_path, "old.txt", 400, 100, prefix="vllm:gpu_prefix_cache")
    assert read_scrape(str(path)) == (400.0, 100.0)


def test_label_sets_are_summed(tmp_path):
    path = tmp_path / "two.txt"
    path.write_text(
        'vllm:prefix_cache_queries_total{engine="0"} 100\n'
        'vllm:prefix_cache_queries_total{engine="1"} 300\n'
        'vllm:prefix_cache_hits_total{engine="0"} 50\n'
        'vllm:prefix_cache_hits_total{engine="1"} 1.5e2\n'
    )
    assert read_scrape(str(path)) == (400.0, 200.0)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("vllm:prompt_tokens_total 5\n", "no vllm:prefix_cache_queries or vllm:prefix_cache_hits"),
        ("vllm:prefix_cache_queries_total 5\n", "no vllm:prefix_cache_hits counter"),
        (
            "vllm:prefix_cache_queries_total 5\nvllm:prefix_cache_hits_total lots\n",
            ":2: vllm:prefix_cache_hits value 'lots' is not a token count",
        ),
        ("vllm:prefix_cache_queries_total NaN\n", ":1: vllm:prefix_cache_queries value 'NaN' is"),
        ("vllm:prefix_cache_queries_total -4\n", ":1: vllm:prefix_cache_queries value '-4' is"),
        (
            'vllm:prefix_cache_queries_total 5\nvllm:prefix_cache_hits_total{a="b 3\n',
            ":2: malformed sample line",
        ),
    ],
)
def test_malformed_scrapes_are_one_line_errors(tmp_path, text, message):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(MetricsError, match=message):
        read_scrape(str(path))
    result = run("--vllm-metrics", path)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"prefixlint audit: {path}")
    assert message in result.stderr and result.stderr.count("\n") == 1


def test_usage_errors(tmp_path):
    path = scrape(tmp_path, "m.txt", 10, 5)
    lower = scrape(tmp_path, "lower.txt", 5, 1)
    cases = [
        (["--vllm-metrics", path, "--cache", "sglang"], "add --cache vllm"),
        (["--vllm-metrics", path] * 3, "one scrape or two (before, after), not 3"),
        (["--vllm-metrics", path, "--vllm-metrics", lower], "the counters went down"),
        (["--vllm-metrics", tmp_path / "missing.txt"], "cannot read the scrape"),
        (["--vllm-metrics", scrape(tmp_path, "odd.txt", 5, 9)], "more prefix-cache hits than"),
    ]
    for args, message in cases:
        result = run(*args)
        assert result.exit_code == 2, args
        assert message in result.stderr and result.stderr.count("\n") == 1


def test_hostile_scrapes_are_read_or_refused_with_one_line(tmp_path):
    good = 'vllm:prefix_cache_queries_total{engine="0"} 10\nvllm:prefix_cache_hits_total 5\n'
    hostile = [
        good + "vllm:prefix_cache_hits_total NaN\n",
        good + 'vllm:prefix_cache_hits_total{a="}"} 1\n',
        good + "vllm:prefix_cache_hits_total\n",
        good.replace("10", "1e400"),
        good + "vllm:prefix_cache_hits_total 1e308\n" * 3,
        "\x00" * 50 + good,
        good + "vllm:prefix_cache_hits_total{" * 300 + "\n",
        "# TYPE vllm:prefix_cache_hits_total counter\n" * 3,
    ]
    for number, text in enumerate(hostile):
        path = tmp_path / f"h{number}.txt"
        path.write_text(text)
        try:
            queries, hits = read_scrape(str(path))
        except MetricsError as exc:
            assert "\n" not in str(exc) and str(path) in str(exc)
        else:
            assert hits >= 0 and 0 <= queries < float("inf")
    path = tmp_path / "binary.txt"
    path.write_bytes(b"\xff\xfe" + good.encode())
    with pytest.raises(MetricsError, match="cannot read the scrape"):
        read_scrape(str(path))
