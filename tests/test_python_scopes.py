"""Scopes and qualified names of the ast document, against libcst's scope metadata."""

import ast

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider, QualifiedNameProvider, ScopeProvider

from prefixlint.context import RuleContext
from prefixlint.pyflow.document import PythonDocument


def _document(text):
    return PythonDocument(text, ast.parse(text), RuleContext("a.py", frozenset()))


def _find(document, code, kind=ast.expr, nth=0):
    found = [n for n in ast.walk(document.module) if isinstance(n, kind)]
    found = [n for n in found if getattr(n, "lineno", None) and document.source(n) == code]
    found.sort(key=document.order)
    return found[nth]


QUALIFIED = (
    ("from datetime import datetime as dt\ndt.now()\n", "dt.now", {"datetime.datetime.now"}),
    (
        "import datetime\ndatetime.datetime.now()\n",
        "datetime.datetime.now",
        {"datetime.datetime.now"},
    ),
    ("import os.path\nos.path.join('a')\n", "os.path.join", {"os.path.join"}),
    ("import os.path\nos.getcwd()\n", "os.getcwd", {"os.getcwd"}),
    ("import numpy as np\nnp.random.rand()\n", "np.random.rand", {"numpy.random.rand"}),
    ("from . import tools\ntools.build()\n", "tools.build", {".tools.build"}),
    ("from ..pkg.mod import f as g\ng()\n", "g", {"..pkg.mod.f"}),
    ("set()\n", "set", {"builtins.set"}),
    ("def set(): pass\nset()\n", "set", {"set"}),
    ("def f(x):\n    return x.y\n", "x.y", {"f.<locals>.x.y"}),
    ("class C:\n    def m(self):\n        return self.a\n", "self.a", {"C.m.<locals>.self.a"}),
    ("undefined_name.attr\n", "undefined_name.attr", set()),
    ("import time\ntime.time().real\n", "time.time().real", {"time.time.real"}),
    ("import json\njson.dumps({})\n", "json.dumps({})", {"json.dumps"}),
    ("from a import b, bc\nbc.x\n", "bc.x", {"a.bc.x"}),
)


@pytest.mark.parametrize(("text", "code", "expected"), QUALIFIED)
def test_qualified_names(text, code, expected):
    document = _document(text)
    assert document.qualified_names(_find(document, code)) == expected


# (snippet, the name read, its nth read, the lines of the assignments it can refer to)
ASSIGNED = (
    ("x = 1\ndef f():\n    return x\n", "x", 0, [1]),
    ("x = 1\ndef f():\n    x = 2\n    return x\n", "x", 0, [3]),
    ("x = 1\nclass C:\n    x = 2\n    def m(self):\n        return x\n", "x", 0, [1]),
    ("x = 1\nclass C:\n    x = 2\n    y = x\n", "x", 0, [3]),
    ("def f():\n    global x\n    x = 2\nx = 1\nprint(x)\n", "x", 0, [3, 4]),
    # ``global`` at module level (in an ``if __name__ == "__main__":`` block) changes nothing
    ("if main:\n    global x\n    x = 2\nprint(x)\n", "x", 0, [3]),
    (
        "def f():\n    x = 1\n    def g():\n        nonlocal x\n        x = 2\n    return x\n",
        "x",
        0,
        [2, 5],
    ),
    ("x = [1]\ny = [x for x in x]\n", "x", 0, [2]),
    ("x = [1]\ny = [x for x in x]\n", "x", 1, [1]),
    ("y = [(z := 1) for _ in ()]\nprint(z)\n", "z", 0, [1]),
    ("def f(a, b=a):\n    return a\n", "a", 0, []),
    ("a = 0\ndef f(a, b=a):\n    return a\n", "a", 0, [1]),
    ("a = 0\ndef f(a, b=a):\n    return a\n", "a", 1, [2]),
    ("for i in range(3):\n    pass\nprint(i)\n", "i", 0, [1]),
    ("with open(p) as fh:\n    fh.read()\n", "fh", 0, [1]),
    ("import a.b\na.b.c\n", "a", 0, [1]),
    ("f = lambda q: q\n", "q", 0, [1]),
    ("try:\n    pass\nexcept E as e:\n    print(e)\n", "e", 0, [3]),
)


@pytest.mark.parametrize(("text", "name", "nth", "lines"), ASSIGNED)
def test_assignments_follow_pythons_scopes(text, name, nth, lines):
    document = _document(text)
    reads = [n for n in document.nodes(ast.Name) if n.id == name and isinstance(n.ctx, ast.Load)]
    found = document.assignments(reads[nth])
    assert sorted(a.node.lineno for a in found if a.node is not None) == lines


def test_a_builtin_is_bound_nowhere_in_the_file():
    document = _document("print(len('x'))\n")
    (assignment,) = document.assignments(_find(document, "len", ast.Name))
    assert assignment.node is None


SNIPPETS = (
    "from datetime import datetime as dt, date\nimport os, os.path as osp\n"
    "import uuid\nfrom .local import helper\n"
    "class Agent:\n    name = 'a'\n    def run(self, q, *args, k=dt.now(), **kw):\n"
    "        stamp = dt.now().isoformat()\n        ids = [uuid.uuid4() for _ in range(3)]\n"
    "        helper(osp.join(os.getcwd(), q), date.today())\n"
    "        return {n: str(v) for n, v in kw.items()}, name\n",
    "import random as r\nseq = r.sample(list(set('abc')), 2)\n"
    "def f():\n    global seq\n    seq = sorted(seq)\n    return len(seq), r.choice\n",
)


def _libcst_names(text):
    """Qualified names libcst gives each Name and Attribute, by source range."""
    wrapper = MetadataWrapper(cst.parse_module(text))
    positions = wrapper.resolve(PositionProvider)
    names = wrapper.resolve(QualifiedNameProvider)
    wrapper.resolve(ScopeProvider)
    found = {}
    for node, where in positions.items():
        if isinstance(node, (cst.Name, cst.Attribute, cst.Call)) and node in names:
            value = names[node]
            value = value() if callable(value) else value
            key = (where.start.line, where.start.column, where.end.line, where.end.column)
            found.setdefault(key, set()).update(q.name for q in value)
    return found


@pytest.mark.parametrize("text", SNIPPETS)
def test_qualified_names_agree_with_libcst(text):
    document = _document(text)
    expected = _libcst_names(text)
    compared = 0
    for node in ast.walk(document.module):
        if not isinstance(node, (ast.Name, ast.Attribute, ast.Call)):
            continue
        line, column, end_line, end_column = document._range(node)
        key = (line, column, end_line, end_column)
        if key in expected:
            assert document.qualified_names(node) == expected[key], document.source(node)
            compared += 1
    assert compared > 15


def test_names_assigned_in_a_class_body_are_read_as_attributes_there_only():
    from prefixlint.pyflow.bindings import Bindings

    text = (
        "class C:\n"
        "    if flag:\n"
        "        A = 'in the body'\n"
        "    B: str = 'annotated'\n"
        "    def m(self):\n"
        "        C = 'a local'\n"
        "        class D:\n"
        "            E = 'the inner class'\n"
        "        return self.A, self.B, self.C, self.E\n"
        "F = 'module'\n"
    )
    document = _document(text)
    bindings = Bindings(document)

    def values(code):
        found = bindings.attribute_values(_find(document, code, ast.Attribute))
        return [document.source(b.value) for b in found]

    assert values("self.A") == ["'in the body'"]
    assert values("self.B") == ["'annotated'"]
    assert values("self.C") == []  # a function's local, not the class's
    assert values("self.E") == []  # the inner class's, not C's
