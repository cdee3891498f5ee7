"""Depth, size, alias and time limits: over one, a file is PFX902 at its line, never a crash."""

from __future__ import annotations

import ast
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefixlint.context import SourceError
from prefixlint.limits import Limits
from prefixlint.linting.budget import OverBudget, time_budget
from prefixlint.linting.config import ConfigError, Settings, settings_from_table
from prefixlint.linting.engine import FixMode, check_file, check_source, check_text
from prefixlint.sources.nesting import (
    guard_brackets,
    guard_jinja,
    guard_python,
    within_python_limits,
)
from prefixlint.textio import SourceText

LAUGHS = (
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
    'system: "hi"\n'
    "messages: [*g]\n"
)


SLOW_CHAT_TEMPLATE = (
    "{% for message in messages %}{{ message.content }}{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
    "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}\n"
)
"""Runs for hours unless something stops it (a chat template: the loops are rendered)."""


def _only_finding(text: str, path: str, settings: Settings | None = None):
    (found,) = check_text(text, path, settings)
    assert found.code == "PFX902"
    return found


@pytest.mark.parametrize(
    ("name", "text", "line", "limit"),
    [
        ("parens.py", "x = 1\nprompt = " + "(" * 2000 + '"a"' + ")" * 2000 + "\n", 2, "max-depth"),
        ("lists.py", "messages = " + "[" * 1500 + "]" * 1500 + "\n", 1, "max-depth"),
        ("concat.py", "\n\nprompt = " + " ".join(['"a"'] * 10000) + "\n", 3, "max-python-chain"),
        ("binop.py", "prompt = " + " + ".join(["a"] * 10000) + "\n", 1, "max-python-chain"),
        ("deep.json", '{"system": "hi",\n "x": ' + "[" * 1000 + "]" * 1000 + "}", 2, "max-depth"),
        ("deep.toml", 'system = "hi"\nx = ' + "[" * 1000 + "]" * 1000 + "\n", 2, "max-depth"),
        ("deep.yaml", "system: hi\nx: " + "[" * 1000 + "]" * 1000 + "\n", 2, "max-depth"),
        ("laughs.yaml", LAUGHS, 7, "max-nodes"),
        ("placeholder.j2", "Hi\n{{ " + "(" * 80 + "x" + ")" * 80 + " }}\n", 2, "max-depth"),
    ],
)
def test_hostile_shapes_are_pfx902_at_their_line(name, text, line, limit):
    found = _only_finding(text, name)
    assert found.span.line == line
    assert f"(limit {limit})" in found.message


def test_recursive_yaml_alias_is_named():
    found = _only_finding("system: &a [hi, *a]\n", "p.yaml")
    assert (found.span.line, found.message) == (1, "recursive YAML alias *a")


def test_shallow_aliases_still_work():
    text = "base: &b You are helpful.\nsystem: *b\nmessages:\n  - role: user\n    content: hi\n"
    assert [d.code for d in check_text(text, "p.yaml")] == []


def test_limits_are_configurable():
    text = "system: hi\nx: [[[1]]]\n"
    assert check_text(text, "p.yaml") == []
    tight = settings_from_table({"limits": {"max-depth": 2}}, "pyproject.toml", ".")
    found = _only_finding(text, "p.yaml", tight)
    assert found.message == "nested too deeply to check: over 2 levels (limit max-depth)"


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"max-depht": 3}, "unknown limit 'max-depht'"),
        ({"max-depth": "3"}, "max-depth must be a non-negative int, not '3'"),
        ({"max-depth": 2.5}, "max-depth must be a non-negative int, not 2.5"),
        ({"file-seconds": -1}, "file-seconds must be a non-negative float, not -1"),
        ({"max-depth": True}, "max-depth must be a non-negative int, not True"),
    ],
)
def test_bad_limits_are_config_errors(table, message):
    with pytest.raises(ConfigError, match=r"pyproject.toml: \[tool.prefixlint.limits\]") as info:
        settings_from_table({"limits": table}, "pyproject.toml", ".")
    assert message in str(info.value)


def test_float_limits_accept_ints():
    settings = settings_from_table({"limits": {"file-seconds": 3}}, "pyproject.toml", ".")
    assert settings.limits.file_seconds == 3


def test_python_guard_passes_ordinary_code_and_reports_columns():
    guard_python("def f(a, b):\n    return [a + b for _ in range(3)]\n", Limits())
    with pytest.raises(SourceError) as info:
        guard_python("x = f(g(h(1)))\n", Limits(max_depth=2))
    assert (info.value.line, info.value.column) == (1, 10)


def test_python_guard_counts_blocks_and_trailers():
    nested_ifs = "".join("    " * i + "if x:\n" for i in range(5)) + "    " * 5 + "pass\n"
    with pytest.raises(SourceError, match="max-depth"):
        guard_python(nested_ifs, Limits(max_depth=4))
    with pytest.raises(SourceError, match="max-python-chain"):
        guard_python("x = a" + "()" * 20 + "\n", Limits(max_python_chain=10))
    guard_python("x = [" + ", ".join(["a + b"] * 50) + "]\n", Limits(max_python_chain=10))


def test_python_guard_counts_lambdas_and_fstring_fields():
    with pytest.raises(SourceError, match="max-depth"):
        guard_python("f = " + "lambda: " * 11 + "1\n", Limits(max_depth=10))
    guard_python("f = [lambda: 1, lambda: 2, lambda: 3]\n" * 5, Limits(max_depth=2))
    with pytest.raises(SourceError, match="max-depth") as info:
        guard_python(
            'x = 1\ny = f"a {' + "(" * 11 + "x" + ")" * 11 + '} b"\n', Limits(max_depth=10)
        )
    assert info.value.line == 2
    guard_python('y = f"((((((((((((( {x} {{((((((((((((}}"\n', Limits(max_depth=3))


def test_python_guard_counts_elif_clauses_in_a_row():
    def chain(count: int) -> str:
        return "if a:\n    pass\n" + "elif a:\n    pass\n" * count

    with pytest.raises(SourceError, match="max-python-chain") as info:
        guard_python("x = 1\n" + chain(11), Limits(max_python_chain=10))
    assert info.value.line == 24
    guard_python(chain(6) + "x = 1\n" + chain(6), Limits(max_python_chain=10))
    guard_python(chain(6) + "else:\n    pass\n" + chain(6), Limits(max_python_chain=10))


def test_python_guard_leaves_broken_code_to_the_parser():
    guard_python("x = (\n", Limits(max_depth=1))


def test_bracket_guard_skips_strings_and_comments():
    guard_brackets('{"a": "' + "[" * 500 + '"}', Limits(max_depth=5))
    guard_brackets(
        'a = \'[[[[[[[[\' # [[[[[[[[[[\nb = """\n[[[[[[[\n"""\n', Limits(max_depth=2), toml=True
    )
    with pytest.raises(SourceError) as info:
        guard_brackets('x = """\n\n"""\ny = [[[1]]]\n', Limits(max_depth=2), toml=True)
    assert (info.value.line, info.value.column) == (4, 7)


def test_bracket_guard_counts_values():
    with pytest.raises(SourceError, match="max-nodes"):
        guard_brackets("[" + ",".join(["1"] * 50) + "]", Limits(max_nodes=20))


def test_jinja_guard_names_the_file_line():
    guard_jinja("{{ (((x))) }}\n{% for m in messages %}{{ m }}{% endfor %}\n")
    with pytest.raises(SourceError) as info:
        guard_jinja("a\nb {{ x" + " ~ x" * 300 + " }}\n")
    assert info.value.line == 2


def test_time_budget_interrupts_python_code():
    with pytest.raises(OverBudget), time_budget(0.05):
        while True:
            pass


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_time_budget_survives_an_alarm_that_lands_in_a_destructor():
    class Swallows:
        def __del__(self):
            time.sleep(0.1)  # the first alarm lands here, where Python ignores exceptions

    give_up = time.monotonic() + 5
    with pytest.raises(OverBudget), time_budget(0.05):
        Swallows()
        while time.monotonic() < give_up:
            pass


def test_a_file_over_its_time_budget_is_pfx902_and_the_run_goes_on(tmp_path):
    slow = tmp_path / "chat_template.jinja"
    slow.write_text(SLOW_CHAT_TEMPLATE)
    limits = Limits(file_seconds=0.3, template_steps=10**12, template_seconds=10**6)
    result = check_file(str(slow), Settings(limits=limits))
    (found,) = result.diagnostics
    assert found.code == "PFX902"
    assert found.message == "too slow to check: over 0.3 s (limit file-seconds); not checked"
    fine = tmp_path / "p.txt"
    fine.write_text("Hello\n")
    assert check_file(str(fine), Settings(limits=limits)).diagnostics == []


def test_text_from_stdin_has_the_time_budget_too():
    slow = SLOW_CHAT_TEMPLATE
    limits = Limits(file_seconds=0.3, template_steps=10**12, template_seconds=10**6)
    result = check_source(
        SourceText(slow), "chat_template.jinja", Settings(limits=limits), FixMode()
    )
    assert [d.message for d in result.diagnostics] == [
        "too slow to check: over 0.3 s (limit file-seconds); not checked"
    ]


_EXPRESSIONS = st.recursive(
    st.sampled_from(
        [
            *("x", "1", "'s'", "f'{x}'", "'a' 'b'", "x.y", "not x", "x if y else x"),
            *("'(['", "')]'", "'a(' '{b'", "b'lambda (('", "f'(({x}'"),  # brackets in literals
        ]
    ),
    lambda inner: st.one_of(
        inner.map(lambda e: f"({e})"),
        inner.map(lambda e: f"[{e}]"),
        inner.map(lambda e: f"f({e}, {e})"),
        inner.map(lambda e: f"lambda: {e}"),
        st.tuples(inner, inner).map(lambda p: f"{p[0]} + {p[1]}"),
        st.tuples(inner, inner).map(lambda p: f"{p[0]} and {p[1]}"),
        inner.map(lambda e: f"f'{{{e}}}'" if "'" not in e else e),
    ),
    max_leaves=12,
)


def _program(statements):
    lines, indent = [], ""
    for kind, expression in statements:
        if kind == "if":
            lines += [f"{indent}if {expression}:", f"{indent}    y = 1"]
            indent += "    "
        elif kind == "elif" and lines:
            if not lines[-2:-1] or not lines[-2].startswith(f"{indent}elif "):  # a new run
                lines += [f"{indent}if x:", f"{indent}    pass"]
            lines += [f"{indent}elif {expression}:", f"{indent}    pass"]
        else:
            lines.append(f"{indent}y = {expression}")
    return "\n".join(lines) + "\n"


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["if", "elif", "set"]), _EXPRESSIONS), max_size=6),
    st.integers(min_value=1, max_value=12),
    st.integers(min_value=2, max_value=40),
)
def test_the_cheap_bound_never_clears_code_the_scan_rejects(statements, depth, chain):
    # Where the bounds taken from the parsed tree say the limits hold, the scan agrees.
    text = _program(statements)
    try:
        tree = ast.parse(text)
    except (SyntaxError, RecursionError):  # nested quotes in f-strings before Python 3.12
        return
    limits = Limits(max_depth=depth, max_python_chain=chain)
    if within_python_limits(text, tree, limits):
        guard_python(text, limits)


@pytest.mark.parametrize(
    ("text", "limits"),
    [
        ("x = ((((((1))))))\n", Limits(max_depth=5)),
        ("x = 1\ry = 2\rz = ((((((1))))))\r", Limits(max_depth=5)),  # old Mac line ends
        ("x = " + " ".join(["'a'"] * 12) + "\n", Limits(max_python_chain=10)),
        # Block levels and lambdas count with the brackets.
        ("if x:\n    if x:\n        if x:\n            y = ((1))\n", Limits(max_depth=4)),
        ("y = lambda: lambda: lambda: (1)\n", Limits(max_depth=3)),
        ("@d(((1)))\ndef f():\n    pass\n", Limits(max_depth=2)),
        ("if x:\n    pass\n" + "elif y:\n    pass\n" * 3, Limits(max_python_chain=2)),
        # An elif run's length adds to the chain of each condition in it.
        ("if x:\n    pass\n" + "elif a + b + c:\n    pass\n" * 4, Limits(max_python_chain=4)),
        ("y = a if b else c if d else e\n", Limits(max_python_chain=3)),
        ("y = (a)(b)(c)(d)\n", Limits(max_python_chain=2)),
    ],
)
def test_the_cheap_bound_sends_deep_or_long_code_to_the_scan(text, limits):
    with pytest.raises(SourceError):
        guard_python(text, limits)
    assert not within_python_limits(text, ast.parse(text), limits)


def test_the_cheap_bound_clears_long_statements_without_chains():
    # Longer than the chain limit, but with fewer operators, brackets and quotes than it.
    header = "def f(" + ", ".join(f"argument_{n}" for n in range(30)) + "):\n    pass\n"
    assignment = "value = " + ", ".join(f"name_{n}" for n in range(30)) + "\n"
    for text in (header, assignment):
        guard_python(text, Limits(max_python_chain=10))
        assert within_python_limits(text, ast.parse(text), Limits(max_python_chain=10))


def test_the_cheap_bound_clears_shallow_code():
    shallow = "@d(1)\ndef f(a):\n    return g(a)\n"
    # Four columns of indentation, two openers in the header and decorator, one in the body.
    assert within_python_limits(shallow, ast.parse(shallow), Limits(max_depth=8))


def test_the_cheap_bound_leaves_out_brackets_in_plain_strings():
    # Markdown links in a docstring and brackets in a literal open nothing.
    docstring = 'def f():\n    """' + "[link](url) " * 10 + '"""\n'
    literal = "x = ('((((' '[[[[' # ((((\n  '{{{{')\ny = b'(((((('\n"
    for text in (docstring, literal):
        guard_python(text, Limits(max_depth=5))
        assert within_python_limits(text, ast.parse(text), Limits(max_depth=5))


@pytest.mark.parametrize(
    "text",
    [
        # Brackets in an f-string's fields count; so do those outside a literal.
        "x = f'{((((((1))))))}'\n",
        "x = ((((((')'))))))\n",
        "x = '(((((('; y = ((((((1))))))\n",
    ],
)
def test_the_cheap_bound_keeps_brackets_outside_plain_strings(text):
    with pytest.raises(SourceError):
        guard_python(text, Limits(max_depth=5))
    assert not within_python_limits(text, ast.parse(text), Limits(max_depth=5))


def test_the_cheap_bound_takes_each_statement_at_its_own_indentation():
    # A module-level table with as many openers as the limit allows, in a file indented deeply
    # elsewhere: the table's block levels are its own (none), not the widest in the file.
    deep = "".join("  " * level + "if a:\n" for level in range(3)) + "      pass\n"
    table = "T = [" + ", ".join(["(1)"] * 5) + "]\n"
    limits = Limits(max_depth=6)
    for text in (deep + table, table + deep):
        guard_python(text, limits)
        assert within_python_limits(text, ast.parse(text), limits)
    # The same table inside a block counts that block's indentation.
    indented = "if a:\n    " + table
    assert not within_python_limits(indented, ast.parse(indented), limits)
