"""The HTML report's plots: axes with ticks, labels that fit their box, sampling stated."""

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from prefixlint.auditing import AuditOptions, run_audit
from prefixlint.auditing.report_html import CHAR_PX, SHARING_ROWS, WIDTH, _hbars, render_html

LOGS = Path(__file__).resolve().parent.parent / "fixtures" / "logs"
BREAKERS = LOGS / "tau_openai_breakers.jsonl"


def _svgs(html):
    return [ET.fromstring(svg) for svg in re.findall(r"<svg.*?</svg>", html, flags=re.S)]


def _texts(svg):
    return [node for node in svg.iter() if node.tag.endswith("text")]


def test_hit_rate_over_time_has_a_time_axis_with_ticks():
    report = run_audit([str(BREAKERS)], AuditOptions(what_if=False))
    hit_rate = _svgs(render_html(report))[0]
    labels = [t.text for t in _texts(hit_rate)]
    assert "hit rate" in labels
    assert "time (UTC), from 2025-03-03" in labels
    assert sum(bool(re.fullmatch(r"\d\d:\d\d(:\d\d)?", label or "")) for label in labels) == 5
    assert {"0%", "50%", "100%"} <= set(labels)


def test_a_log_without_timestamps_is_plotted_in_log_order(tmp_path):
    log = tmp_path / "bare.jsonl"
    lines = [json.loads(line)["request"] for line in BREAKERS.read_text().splitlines()]
    log.write_text("".join(json.dumps(request) + "\n" for request in lines))
    report = run_audit([str(log)], AuditOptions(what_if=False))
    labels = [t.text for t in _texts(_svgs(render_html(report))[0])]
    assert "requests in log order" in labels and "63" in labels


def _assert_texts_fit(svgs):
    for svg in svgs:
        for text in _texts(svg):
            x, width = float(text.get("x")), len(text.text or "") * CHAR_PX
            anchor = text.get("text-anchor", "start")
            start = x - width if anchor == "end" else x - width / 2 if anchor == "middle" else x
            assert start >= 0 and start + width <= WIDTH + 1, text.text


def test_bar_labels_fit_inside_the_plot():
    report = run_audit([str(BREAKERS)], AuditOptions(caches=("vllm", "openai")))
    _assert_texts_fit(_svgs(render_html(report))[1:])
    rows = [("PFX101 volatile-timestamp-in-prefix " * 3, 1_653_444.0, "#000"), ("x", 5.0, "#000")]
    _assert_texts_fit(_svgs(_hbars(rows, 1_653_444.0, lambda v: f"{int(v):,} tokens")))


def test_sampling_of_the_sharing_plot_is_stated(tmp_path):
    log = tmp_path / "long.jsonl"
    lines = BREAKERS.read_text().splitlines()
    log.write_text("\n".join(lines * 3) + "\n")
    html = render_html(run_audit([str(log)], AuditOptions(what_if=False)))
    assert "Showing 63 of 189 requests: every 3rd, in log order." in html
    assert len(lines) * 3 > SHARING_ROWS
    short = render_html(run_audit([str(BREAKERS)], AuditOptions(what_if=False)))
    assert "Showing" not in short


def test_ordinals():
    from prefixlint.auditing.report_html import ordinal

    assert [ordinal(n) for n in (2, 3, 4, 11, 12, 13, 21, 22, 123)] == [
        "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "123rd",
    ]  # fmt: skip


def test_fix_first_and_assumptions_are_in_the_page():
    report = run_audit([str(BREAKERS)], AuditOptions(prefill_tokens_per_second=8000.0))
    html = render_html(report)
    assert "<h2>Fix first (vllm)</h2>" in html and "ms</td>" in html
    assert "<h2>Assumptions</h2>" in html and "blocks of 16 tokens" in html
