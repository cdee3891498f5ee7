"""A module's functions whose results a module of its package imports and sends.

Each case is a package of small modules written to a temporary directory, the module checked,
and the findings it must give there, as ``(line, code)`` pairs.
"""

import textwrap
from pathlib import Path

import pytest

from prefixlint import check_source

PYTHON_CODES = ("PFX1", "PFX2", "PFX3", "PFX4", "PFX5")

CONTEXT = """
import os
import platform

INTRO = "You are a careful pair-programming assistant."

def workspace():
    return f"Working directory: {os.getcwd()}\\nOS: {platform.system()}"

def build_system():
    return INTRO + "\\n" + workspace()
"""

EXAMPLES = """
import random

def pick(pool, k=4):
    chosen = list(pool)
    random.shuffle(chosen)
    return chosen[:k]

def pick_fixed(pool, k=4):
    return random.Random(1234).sample(pool, k)

def render(examples):
    return "\\n\\n".join(f"Q: {e.question}\\nA: {e.answer}" for e in examples)
"""

TOOLS = """
REGISTRY = {"search": {"name": "search"}, "lookup": {"name": "lookup"}}
ENABLED = {"search", "lookup"}

def specs(enabled=ENABLED):
    return [REGISTRY[name] for name in enabled]
"""


def _tools_sent(call: str) -> str:
    return f"""
        import anthropic
        from .tools import specs

        client = anthropic.Anthropic()

        def step(messages):
            return client.messages.create(
                model="m", max_tokens=100, tools={call}, messages=messages
            )
        """


CASES = (
    pytest.param(
        {"tools.py": TOOLS, "session.py": _tools_sent("specs()")},
        "tools.py",
        [(3, "PFX201")],
        id="a default set iterated by a helper whose result an importer sends",
    ),
    pytest.param(
        {"tools.py": TOOLS, "session.py": _tools_sent('specs(["search"])')},
        "tools.py",
        [],
        id="the default replaced by what the importer passes",
    ),
    pytest.param(
        {"tools.py": TOOLS, "session.py": _tools_sent("specs(**options)")},
        "tools.py",
        [],
        id="arguments unpacked by the importer may replace the default",
    ),
    pytest.param(
        {
            "context.py": CONTEXT,
            "session.py": """
                import anthropic
                from .context import build_system

                client = anthropic.Anthropic()

                def step(messages):
                    return client.messages.create(
                        model="m", max_tokens=100, system=build_system(), messages=messages
                    )
                """,
        },
        "context.py",
        [(8, "PFX104")],
        id="a system prompt built by a helper module and sent by another",
    ),
    pytest.param(
        {
            "context.py": CONTEXT,
            "session.py": """
                import anthropic
                from pkg.context import build_system

                client = anthropic.Anthropic()

                def step(messages):
                    return client.messages.create(
                        model="m", max_tokens=100, system=build_system(), messages=messages
                    )
                """,
        },
        "context.py",
        [(8, "PFX104")],
        id="a system prompt built by a helper module its package imports by absolute name",
    ),
    pytest.param(
        {
            "context.py": CONTEXT,
            "session.py": """
                import anthropic
                from other.context import build_system

                client = anthropic.Anthropic()

                def step(messages):
                    return client.messages.create(
                        model="m", max_tokens=100, system=build_system(), messages=messages
                    )
                """,
        },
        "context.py",
        [],
        id="a module of the same name in another package",
    ),
    pytest.param(
        {
            "context.py": CONTEXT,
            "report.py": """
                from .context import build_system

                def save(path):
                    with open(path, "w") as out:
                        out.write(build_system())
                """,
        },
        "context.py",
        [],
        id="a helper's text that its importer only writes to a file",
    ),
    pytest.param(
        {
            "labels.py": """
                import os

                def workspace_line(root):
                    return f"Workspace: {root}"

                def debug_line():
                    return workspace_line(os.getcwd())
                """,
            "session.py": """
                import anthropic
                from .labels import workspace_line

                client = anthropic.Anthropic()

                def step(messages):
                    system = "You review code. " + workspace_line("/srv/app")
                    return client.messages.create(
                        model="m", max_tokens=100, system=system, messages=messages
                    )
                """,
        },
        "labels.py",
        [],
        id="a helper sent with a fixed argument, called elsewhere with a volatile one",
    ),
    pytest.param(
        {
            "settings.py": """
                import uuid

                def resumed(state):
                    return state.get("conversation", uuid.uuid4().hex), state.get("mode")
                """,
            "loop.py": """
                import anthropic
                from .settings import resumed

                client = anthropic.Anthropic()

                def step(state, messages):
                    conversation, mode = resumed(state)
                    system = lookup_instructions(mode)
                    return client.messages.create(
                        model="m", max_tokens=100, system=system, messages=messages,
                        metadata={"conversation": conversation},
                    )
                """,
        },
        "settings.py",
        [],
        id="a helper's result that reaches the system prompt only through an unknown call",
    ),
    pytest.param(
        {
            "examples.py": EXAMPLES,
            "runner.py": """
                import requests
                from .examples import pick, pick_fixed, render

                def grader_system(pool, fixed):
                    shots = pick_fixed(pool) if fixed else pick(pool)
                    return f"You grade answers.\\n\\nExamples:\\n{render(shots)}"

                def grade(system, item):
                    body = {
                        "model": "m",
                        "messages": [
                            {"role": "system", "content": system},
                            {"role": "user", "content": item},
                        ],
                    }
                    return requests.post("http://localhost/v1/chat/completions", json=body)

                def main(pool, items, fixed):
                    for item in items:
                        grade(grader_system(pool, fixed), item)
                """,
        },
        "examples.py",
        [(6, "PFX203")],
        id="few-shot examples shuffled by a helper module and sent by its importer",
    ),
)


@pytest.mark.parametrize(("modules", "checked", "expected"), CASES)
def test_package_imports(tmp_path: Path, modules: dict[str, str], checked: str, expected):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name, text in modules.items():
        (package / name).write_text(textwrap.dedent(text))
    path = package / checked
    found = check_source(path.read_text(), str(path), select=PYTHON_CODES)
    assert sorted((d.span.line, d.code) for d in found) == expected


def test_only_importers_that_may_send_a_prompt_count(tmp_path):
    from prefixlint.pyflow.importers import sending_importers

    (tmp_path / "__init__.py").write_text("")
    helper = tmp_path / "context.py"
    helper.write_text(CONTEXT)
    (tmp_path / "cli.py").write_text("from .context import workspace\nprint(workspace())\n")
    assert sending_importers(str(helper), CONTEXT) == ()
    sender = tmp_path / "agent.py"
    sender.write_text(
        "from openai import OpenAI\nfrom .context import build_system\n"
        "OpenAI().chat.completions.create(model='m', messages=["
        "{'role': 'system', 'content': build_system()}])\n"
    )
    assert [Path(p).name for p, _ in sending_importers(str(helper), CONTEXT)] == ["agent.py"]


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("from .context import workspace\n", {"workspace"}),
        ("from .context import build_system as system, INTRO  # both\n", {"build_system", "INTRO"}),
        (
            "from .context import (\n    workspace,  # the cwd\n    build_system as bs,\n)\n",
            {"workspace", "build_system"},
        ),
        ("from .context import workspace, \\\n    build_system\n", {"workspace", "build_system"}),
        ("    from .context import workspace\n", {"workspace"}),
        ("from .contexts import workspace\nfrom ..context import INTRO\n", set()),
        ("import context\nfrom context import workspace\n", set()),
        ("from pkg.context import workspace\n", {"workspace"}),
        ("from app.pkg.context import build_system as bs\n", {"build_system"}),
        ("from other.context import workspace\nfrom pkgs.context import INTRO\n", set()),
    ],
)
def test_package_imports_by_text(text: str, names: set[str]):
    from prefixlint.pyflow.importers import package_imports

    assert package_imports(text, "pkg").get("context", frozenset()) == names


def test_an_importer_of_classes_and_constants_only_is_not_analysed(tmp_path, monkeypatch):
    from prefixlint.pyflow import analysis

    (tmp_path / "__init__.py").write_text("")
    helper = tmp_path / "context.py"
    helper.write_text(CONTEXT)
    (tmp_path / "agent.py").write_text(
        "from openai import OpenAI\nfrom .context import INTRO\n"
        "OpenAI().chat.completions.create(model='m', messages=["
        "{'role': 'system', 'content': INTRO}])\n"
    )
    analysed = []
    monkeypatch.setattr(analysis, "_importer_analysis", lambda *a: analysed.append(a[0]))
    assert check_source(helper.read_text(), str(helper), select=PYTHON_CODES) == []
    assert analysed == []


def test_one_importer_of_two_modules_is_analysed_once(tmp_path, monkeypatch):
    from prefixlint.pyflow import analysis

    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "context.py").write_text(CONTEXT)
    (tmp_path / "examples.py").write_text(EXAMPLES)
    (tmp_path / "agent.py").write_text(
        "from openai import OpenAI\nfrom .context import build_system\n"
        "from .examples import pick, render\n"
        "def step(pool):\n"
        "    system = build_system() + render(pick(pool))\n"
        "    return OpenAI().chat.completions.create(model='m', messages=["
        "{'role': 'system', 'content': system}])\n"
    )
    built = []
    real = analysis.Analysis.__init__

    def counted(self, document, importer=False):
        built.append((Path(document.path).name, importer))
        real(self, document, importer)

    monkeypatch.setattr(analysis.Analysis, "__init__", counted)
    for name in ("context.py", "examples.py"):
        path = tmp_path / name
        assert check_source(path.read_text(), str(path), select=PYTHON_CODES)
    assert built.count(("agent.py", True)) == 1
