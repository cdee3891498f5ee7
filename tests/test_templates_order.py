"""PFX201 and PFX203 in templates: loops whose items change order between renders."""

import pytest

from prefixlint.context import RuleContext
from prefixlint.sources import source_module
from prefixlint.sources.templates import handlebars_call

CODES = frozenset({"PFX201", "PFX203"})


def findings(path, text):
    ctx = RuleContext(path, CODES, options={})
    return sorted((d.code, d.span.line) for d in source_module(path, text).check(text, ctx))


RULES = "Answer in one line.\n\nRules: be brief, cite sources, never guess.\n"


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        # PFX203: a filter, call or helper that shuffles or samples
        (
            "p.j2",
            "Examples:\n{% for e in examples | shuffle %}{{ e }}\n{% endfor %}\n" + RULES,
            [("PFX203", 2)],
        ),
        (
            "p.j2",
            "Shots:\n{% for e in shots | random_sample(3) %}- {{ e }}\n{% endfor %}\n" + RULES,
            [("PFX203", 2)],
        ),
        ("p.j2", "{% set picked = examples | shuffle %}\n" + RULES, [("PFX203", 1)]),
        ("p.j2", "Tips: {{ tips | shuffle | join(', ') }}\n" + RULES, [("PFX203", 1)]),
        (
            "p.j2",
            "{% for e in sample_examples(3) %}{{ e }}\n{% endfor %}\n" + RULES,
            [("PFX203", 1)],
        ),
        (
            "p.hbs",
            "Tips:\n{{#each (shuffle tips)}}\n- {{this}}\n{{/each}}\n" + RULES,
            [("PFX203", 2)],
        ),
        ("p.hbs", "Tips:\n{{#shuffle tips}}\n- {{this}}\n{{/shuffle}}\n" + RULES, [("PFX203", 2)]),
        # a fixed order, or a value named after samples, is quiet
        ("p.j2", "Examples:\n{% for e in examples %}{{ e }}\n{% endfor %}\n" + RULES, []),
        ("p.j2", "Examples:\n{% for e in samples %}{{ e.sample }}\n{% endfor %}\n" + RULES, []),
        ("p.hbs", "Tips:\n{{#each tips}}\n- {{this}}\n{{/each}}\n" + RULES, []),
        # after the stable part (the request) nothing counts
        (
            "p.j2",
            RULES + "Question: {{ question }}\n{% for e in docs | shuffle %}{{ e }}{% endfor %}\n",
            [],
        ),
        # PFX201: a loop over a collection its comment says is unordered
        (
            "p.j2",
            "{# tools is a set[str] #}\n{% for t in tools %}- {{ t }}\n{% endfor %}\n" + RULES,
            [("PFX201", 2)],
        ),
        (
            "p.j2",
            "{#- registry: filled by plugin discovery -#}\n"
            "{% for n, t in registry.items() %}{{ n }}\n{% endfor %}\n" + RULES,
            [("PFX201", 2)],
        ),
        (
            "p.hbs",
            "{{! skills is an unordered collection }}\n{{#each skills}}\n- {{this}}\n"
            "{{/each}}\n" + RULES,
            [("PFX201", 2)],
        ),
        # sorted, a note about another collection, or an ordinary note: quiet
        (
            "p.j2",
            "{# tools is a set[str] #}\n{% for t in tools | sort %}- {{ t }}\n{% endfor %}\n"
            + RULES,
            [],
        ),
        (
            "p.j2",
            "{# flags is a set[str] #}\n{% for t in tools %}- {{ t }}\n{% endfor %}\n" + RULES,
            [],
        ),
        (
            "p.j2",
            "{# tools: a set, sorted by the loader #}\n{% for t in tools %}{{ t }}\n"
            "{% endfor %}\n" + RULES,
            [],
        ),
        (
            "p.j2",
            "{# tools come from config.yaml #}\n{% for t in tools %}{{ t }}\n{% endfor %}\n"
            + RULES,
            [],
        ),
        (
            "p.j2",
            "{# tools is a set[str] #}\n\n\n\n{% for t in tools %}{{ t }}\n{% endfor %}\n" + RULES,
            [],
        ),
    ],
)
def test_loop_order(path, text, expected):
    assert findings(path, text) == expected


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('formatDate now "YYYY-MM-DD"', (("formatDate",), ("now",))),
        ("each (shuffle tips)", (("each", "shuffle"), ("tips",))),
        ("t 'greeting' name=user.first", (("t",), ("user.first",))),
        ("user.name", ((), ())),
        ("now()", ((), ())),
        ("a | b", ((), ())),
    ],
)
def test_handlebars_call(expression, expected):
    assert handlebars_call(expression) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('Report date: {{formatDate now "YYYY-MM-DD"}}\n' + RULES, [("PFX101", 1)]),
        ("Hi {{greet customer.email}}.\n" + RULES, [("PFX103", 1)]),
        ('{{t "welcome"}}\n' + RULES, []),
    ],
)
def test_handlebars_helper_arguments_are_classified(text, expected):
    ctx = RuleContext("p.hbs", frozenset({"PFX101", "PFX103"}), options={})
    found = source_module("p.hbs", text).check(text, ctx)
    assert sorted((d.code, d.span.line) for d in found) == expected
