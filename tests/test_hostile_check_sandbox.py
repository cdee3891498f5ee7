"""Chat templates that would run for minutes or fill memory stop at a bound, within seconds."""

from __future__ import annotations

import json
import time

import pytest

from prefixlint.limits import Limits
from prefixlint.linting.config import Settings
from prefixlint.linting.engine import check_text
from prefixlint.sources.chat_template import sandbox

CHATML = (
    "{% for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content }}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
NS = "{% set ns = namespace(s='ab') %}"


@pytest.mark.parametrize(
    ("hostile", "limit"),
    [
        (
            "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
            "template-steps",
        ),
        ("{{ 'a' * 10**9 }}", "template-chars"),
        ("{{ 'a' * 1000000000 }}", "template-chars"),
        ("{{ [1, 2] * 10**9 }}", "template-range"),
        ("{{ 7 ** 1000000000 }}", "template-chars"),
        ("{{ 'a'.center(10**9) }}", "template-chars"),
        ("{{ 'a'|center(1000000000) }}", "template-chars"),
        ("{{ 'a'.rjust(10**9, '-') }}", "template-chars"),
        ("{{ '{:>1000000000}'.format('x') }}", "template-chars"),
        ("{{ '{:>{w}}'.format('x', w=10**9) }}", "template-chars"),
        ("{{ '%1000000000d' % 5 }}", "template-chars"),
        ("{{ '%*d' % (10**9, 5) }}", "template-chars"),
        ("{{ '%1000000000s'|format('x') }}", "template-chars"),
        (NS + "{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}", "template-chars"),
        (NS + "{% for i in range(60) %}{% set ns.s = ns.s + ns.s %}{% endfor %}", "template-chars"),
        (
            NS + "{% for i in range(60) %}{% set x %}{{ ns.s }}{{ ns.s }}{% endset %}"
            "{% set ns.s = x %}{% endfor %}",
            "template-chars",
        ),
        ("{{ ('a' * 100000)|replace('a', 'a' * 100000) }}", "template-chars"),
        ("{{ ('a' * 100000).replace('a', 'a' * 100000) }}", "template-chars"),
        ("{{ range(100000)|map('string')|join('x' * 100000) }}", "template-chars"),
        ("{{ ('x' * 1000).join(range(100000)|map('string')) }}", "template-chars"),
        ("{{ lipsum(100000) }}", "template-chars"),
        ("{{ [1]|slice(10**9) }}", "template-range"),
        ("{{ messages|tojson(indent=10**9) }}", "template-chars"),
        ("{{ range(10**9)|list }}", "template-range"),
        ("{% for i in range(100000) %}{{ 'x' * 100 }}{% endfor %}", "template-chars"),
    ],
)
def test_hostile_template_is_pfx902_naming_the_limit(hostile, limit):
    text = "{# header #}\n" + hostile + "\n" + CHATML
    started = time.monotonic()
    (found,) = check_text(text, "chat_template.jinja")
    assert time.monotonic() - started < 10
    assert found.code == "PFX902"
    assert found.span.line == 2
    assert f"(limit {limit})" in found.message
    assert found.message.startswith("chat template stopped at line 2: ")


def test_limit_inside_tokenizer_config_points_at_the_json_line():
    config = {"bos_token": "<s>", "chat_template": "{{ 'a' * 10**9 }}" + CHATML}
    text = '{\n  "bos_token": "<s>",\n  "chat_template": ' + json.dumps(config["chat_template"])
    (found,) = check_text(text + "\n}\n", "tokenizer_config.json")
    assert (found.code, found.span.line) == ("PFX902", 3)
    assert "template line 1" in found.message


def test_time_limit_stops_a_slow_rendering():
    slow = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
    limits = Limits(template_steps=10**12, template_seconds=0.2)
    started = time.monotonic()
    (found,) = check_text(slow + CHATML, "chat_template.jinja", Settings(limits=limits))
    assert time.monotonic() - started < 10
    assert "(limit template-seconds)" in found.message


def test_bounded_operations_still_work_below_the_limits():
    template = sandbox.compile_template(
        "{{ 'ab' * 3 }}|{{ 'x'.center(5) }}|{{ '%3d' % 7 }}|{{ '{:>4}'.format('y') }}"
        "|{{ 'a' ~ 'b' }}|{{ [1] * 2 }}|{{ 2 ** 10 }}|{{ 'a-b'.replace('-', '+') }}"
        "|{{ ', '.join(['p', 'q']) }}|{{ range(3)|join }}|{{ 'q'|center(3) }}"
        "|{{ 'z'|indent(2, true) }}|{{ '%s!'|format('w') }}|{{ 'ab'|replace('a', 'c') }}"
    )
    rendered = sandbox.render(template, {}, sandbox.FakeClock(sandbox.datetime(2026, 1, 1)))
    assert rendered.text == ("ababab|  x  |  7|   y|ab|[1, 1]|1024|a+b|p, q|012| q |  z|w!|cb")


def test_small_limits_apply(tmp_path):
    template = sandbox.compile_template("{{ 'a' * 20 }}")
    clock = sandbox.FakeClock(sandbox.datetime(2026, 1, 1))
    with pytest.raises(sandbox.SandboxLimit, match="over 10 characters"):
        sandbox.render(template, {}, clock, Limits(template_chars=10))
    assert sandbox.render(template, {}, clock, Limits(template_chars=20)).text == "a" * 20
