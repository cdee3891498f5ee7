"""The ast document: code-point columns, ranges without parentheses, and libcst loaded only
for a fix."""

import ast
import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from prefixlint.context import RuleContext
from prefixlint.pyflow.document import PythonDocument
from prefixlint.pyflow.scopes import COMPREHENSION, FUNCTION, MODULE


def _document(text):
    return PythonDocument(text, ast.parse(text), RuleContext("a.py", frozenset()))


# (source, node type, nth node of that type, its source, its span as line/column pairs)
RANGES = (
    ("x = f(a)\n", ast.Call, 0, "f(a)", (1, 5, 1, 9)),
    ("é = 'ü' + now()\n", ast.Call, 0, "now()", (1, 11, 1, 16)),
    ("s = '日本' f'{t()}'\n", ast.Call, 0, "t()", (1, 13, 1, 16)),
    ("x = (a, b)\n", ast.Tuple, 0, "a, b", (1, 6, 1, 10)),
    ("x = (a), (b)\n", ast.Tuple, 0, "(a), (b)", (1, 5, 1, 13)),
    ("x = ( a,\n  b )  # c\n", ast.Tuple, 0, "a,\n  b", (1, 7, 2, 4)),
    ("x = ', '.join(t for t in s)\n", ast.GeneratorExp, 0, "t for t in s", (1, 15, 1, 27)),
    ("x = f((t for t in s), 1)\n", ast.GeneratorExp, 0, "t for t in s", (1, 8, 1, 20)),
    ("x = 'a\\r\\n'\r\ny = g()\r\n", ast.Call, 0, "g()", (2, 5, 2, 8)),
)


@pytest.mark.parametrize(("text", "kind", "nth", "source", "span"), RANGES)
def test_ranges(text, kind, nth, source, span):
    document = _document(text)
    node = [n for n in ast.walk(document.module) if isinstance(n, kind)][nth]
    found = document.span(node)
    assert document.source(node) == source
    assert (found.line, found.column, found.end_line, found.end_column) == span


@pytest.mark.parametrize("text", [r[0] for r in RANGES])
def test_expression_ranges_are_libcsts(text):
    """Every expression outside an f-string's pieces has the range libcst gives it."""
    wrapper = MetadataWrapper(cst.parse_module(text))
    ranges = {
        (p.start.line, p.start.column, p.end.line, p.end.column)
        for n, p in wrapper.resolve(PositionProvider).items()
        if isinstance(n, cst.BaseExpression)
    }
    document = _document(text)
    for node in document.nodes(ast.Call, ast.Name, ast.Tuple, ast.GeneratorExp):
        found = document.span(node)
        key = (found.line, found.column - 1, found.end_line, found.end_column - 1)
        assert key in ranges, document.source(node)


def test_the_literal_pieces_of_an_fstring_are_not_string_constants():
    document = _document("x = f'a{b}c' 'd'\ny = 'e'\n")
    assert [c.value for c in document.nodes(ast.Constant)] == ["e"]


_IMPORT_PROBE = (
    "import sys\n"
    "from prefixlint.linting.config import Settings\n"
    "from prefixlint.linting.engine import check_text\n"
    "found = check_text(sys.stdin.read(), 'app.py', Settings())\n"
    "print(sorted({d.code for d in found}), 'libcst' in sys.modules)\n"
)
_HISTORY_EDIT = (
    "class Chat:\n"
    "    def ask(self, client, q):\n"
    "        self.messages.append({'role': 'user', 'content': q})\n"
    "        del self.messages[1]\n"
    "        return client.chat.completions.create(model='m', messages=self.messages)\n"
)
_UNSORTED_JSON = (
    "import json\n"
    "def ask(client, q, cfg):\n"
    "    system = f'Config: {json.dumps(cfg)}'\n"
    "    return client.chat.completions.create(model='m', messages=[\n"
    "        {'role': 'system', 'content': system}, {'role': 'user', 'content': q}])\n"
)


@pytest.mark.parametrize(
    ("text", "codes", "loaded"),
    (
        pytest.param(_HISTORY_EDIT, ["PFX501"], False, id="a finding with no fix"),
        pytest.param(_UNSORTED_JSON, ["PFX202"], True, id="a finding with a fix"),
    ),
)
def test_libcst_is_imported_only_to_render_a_fix(text, codes, loaded):
    result = subprocess.run(
        [sys.executable, "-c", _IMPORT_PROBE],
        input=text,
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert result.stdout.split("]")[1].strip() == str(loaded)
    assert result.stdout.startswith(str(codes))


def test_the_walk_numbers_nodes_in_preorder_and_scopes_fields_as_python_evaluates_them():
    text = (
        "@deco\n"
        "def f(a=default, *, b=kw) -> ret:\n"
        "    x = {k1: v1, **rest, k2: v2}\n"
        "    return [y for y in items for z in y if z]\n"
    )
    document = PythonDocument(text, ast.parse(text), RuleContext("a.py", frozenset()))
    names = document.nodes(ast.Name)
    # Fields in the order of ``_fields`` (keyword defaults before defaults), decorators first
    # and a dict's keys and values interleaved, as written.
    assert [n.id for n in names] == [
        *("deco", "kw", "default", "ret", "x", "k1", "v1", "rest", "k2", "v2"),
        *("y", "y", "items", "z", "y", "z"),
    ]
    assert [document.order(n) for n in names] == sorted(document.order(n) for n in names)
    kinds = {}
    for name in names:
        scope = document.scope(name)
        kinds.setdefault(name.id, []).append(scope.kind if scope else None)
    assert kinds["default"] == kinds["kw"] == kinds["deco"] == kinds["ret"] == [MODULE]
    assert kinds["v1"] == kinds["rest"] == [FUNCTION]
    assert kinds["items"] == [FUNCTION]  # the first ``for``'s iterable: outside
    assert kinds["y"] == [COMPREHENSION] * 3  # the second's: inside
    assert kinds["z"] == [COMPREHENSION] * 2
    function = document.module.body[0]
    assert document.block(function.body[1]) == (function, "body")


_READS = (
    "prompt = 'a'\n"
    "@wrap(prompt)\n"
    "def f(x=prompt):\n"
    "    prompt = x\n"
    "    def g():\n"
    "        return prompt\n"
    "    print(prompt, [prompt for _ in x])\n"
    "def h():\n"
    "    return prompt\n"
)


@pytest.mark.parametrize(
    ("function", "name"),
    ((0, "prompt"), (0, "x"), (1, "prompt"), (2, "prompt"), (2, "x"), (0, "missing")),
)
def test_the_reads_inside_a_function_are_those_a_walk_of_it_finds(function, name):
    document = _document(_READS)
    node = [n for n in ast.walk(document.module) if isinstance(n, ast.FunctionDef)][function]
    walked = [
        n
        for n in ast.walk(node)
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
    ]
    found = document.reads_in(node, name)
    assert sorted(map(id, found)) == sorted(map(id, walked))
    assert found == sorted(found, key=document.order)
