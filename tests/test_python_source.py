"""The Python source kind: prefilter, parse errors, spans and offsets, noqa, messages."""

import ast
import gc
import sys
import warnings

import pytest

from prefixlint import registry
from prefixlint.auditing.source_link import python_anchors
from prefixlint.collector import PACED_THRESHOLDS
from prefixlint.linting.config import Settings
from prefixlint.linting.engine import FixMode, check_text, fix_text
from prefixlint.pyflow.prompt_words import may_hold_prompt


@pytest.mark.parametrize(
    ("text", "expected"),
    (
        pytest.param("import math\nprint(math.pi)\n", False, id="plain code"),
        pytest.param("x = client.chat.completions.create(model='m')\n", True, id="api call"),
        pytest.param("m = {'role': 'system'}\n", True, id="role dict"),
        pytest.param("SYSTEM_PROMPT = 'x'\n", True, id="prompt-named constant"),
        pytest.param("def build_prompt():\n    pass\n", True, id="prompt-named function"),
        pytest.param("@agent.instructions\ndef f():\n    pass\n", True, id="pydantic-ai hook"),
        pytest.param("@agent.system_prompt\ndef f():\n    pass\n", True, id="system prompt hook"),
        pytest.param("r = client.messages.create(model='m')\n", True, id="messages call"),
        pytest.param("r = client.responses.create(model='m')\n", True, id="responses call"),
        pytest.param("r = litellm.completion(model='m')\n", True, id="completion call"),
        pytest.param("m = Message(role='developer', text=t)\n", True, id="developer role"),
        pytest.param("m = make(('system', text))\n", True, id="system role by position"),
        pytest.param("chat.add_system_message(text)\n", True, id="system message call"),
        pytest.param("a = ChatAgent(text, model)\n", True, id="agent given its system message"),
        pytest.param("a = Agent(model)\nr = client.runs.create(x)\n", False, id="other calls"),
        pytest.param("a = Agent(role=r, goal=g)\n", True, id="agent given its role"),
        pytest.param("a = create_react_agent(m, t, prompt=p)\n", True, id="agent given a prompt"),
        pytest.param("a = create_react_agent(m, t)\n", False, id="agent without a prompt"),
        pytest.param(
            "t = {'name': n, 'description': d, 'parameters': p}\n", True, id="tool schema"
        ),
        pytest.param("t = {'description': d}\n", False, id="a description alone"),
        pytest.param("del messages[0]\n", True, id="message list edit"),
        pytest.param("error messages are shown here\n", False, id="messages without an edit"),
        # Word boundaries the patterns check after their leading literal.
        pytest.param("m: list[Message] = []\nfrom .model import x\n", False, id="'del' in a word"),
        pytest.param("m: list[Message] = []\ndel m[0]\n", True, id="del statement"),
        pytest.param("print(f().__name__ = 1)\n", False, id="call result renamed"),
        pytest.param("_Tool.__name__ = name\n", True, id="class renamed"),
        pytest.param("x = {'content': 1}\nmessages = 2\n", False, id="content key read"),
        pytest.param("messages = f()\nm['content'] = 'x'\n", True, id="content key set"),
        pytest.param("messages.append(m)\nmsg.content = 'x'\n", True, id="content set"),
        pytest.param("history_prompt = 'x'\n", True, id="prompt word at the end of a name"),
        pytest.param("prompt_ids = tokenizer(x)\n", False, id="prompt word, not a text"),
        pytest.param("the system prompt is sent\n", False, id="prompt words in prose"),
        # Doctest examples are docstring text: they may be skipped; the code around may not.
        pytest.param('"""\n>>> prompt = "Hi"\n"""\n', False, id="doctest line"),
        pytest.param(
            '"""\n  ...     system_prompt = f(x)\n"""\n', False, id="doctest continuation"
        ),
        pytest.param('"""\n>>> x = 1\n"""\nprompt = "Hi"\n', True, id="prompt after a doctest"),
        pytest.param("x = ...\nprompt = 'Hi'\n", True, id="prompt after an Ellipsis"),
        pytest.param("# >>> prompt = 'Hi'\n", True, id="doctest in a comment"),
        pytest.param('"""\n>>> m = [{"role": "user"}]\n"""\n', False, id="role key in a doctest"),
        pytest.param(
            '"""\n>>> m = [\n...     {"role": "user"},\n"""\n', False, id="role key continued"
        ),
        pytest.param('x = [...,\n  {"role": "user"}]\n', True, id="role key after an Ellipsis"),
        pytest.param('"""\n>>> x = 1\n"""\nm = {"role": "user"}\n', True, id="role key after"),
        pytest.param('"""\n>>> messages = [m]\n"""\n', False, id="history rebuilt in a doctest"),
        pytest.param("x = 1\nmessages = [m]\n", True, id="history rebuilt"),
        pytest.param("r = t(m, add_generation_prompt=True,\n)\n", False, id="prompt flag"),
        pytest.param("r = t(m, system_prompt=None)\n", False, id="no system prompt"),
        pytest.param("r = t(m, system_prompt=p)\n", True, id="system prompt passed"),
        pytest.param("tail = messages[i:]\nreturn summary + tail\n", True, id="summary joined"),
        pytest.param("messages.clear()\n", True, id="conversation emptied"),
        pytest.param(
            "h = session.get_messages(\n    limit=n)\nmessages += h\n", True, id="capped fetch"
        ),
        pytest.param("messages_limit = 5\n", False, id="a conversation's cap, not a fetch"),
        pytest.param(
            "return [m for m in messages if id(m) in kept_ids]\n", True, id="selection kept"
        ),
    ),
)
def test_prefilter(text, expected):
    assert may_hold_prompt(text) is expected


@pytest.mark.parametrize(
    "text",
    [
        ">>> prompt = 1\n",
        "... prompt = 1\n",
        "x = (1,\n    ... prompt)\n",
        "x = (a\n>>> b)\n",
        "x = [\n    ... {'role': 'user'}]\n",
        "x = [\n    ... 'role']\n",
    ],
)
def test_a_doctest_line_is_never_code(text):
    # Why the prefilter may skip names on doctest lines: as code they do not parse.
    with pytest.raises(SyntaxError):
        ast.parse(text)


def test_parse_error_is_reported_with_its_position():
    found = check_text("SYSTEM_PROMPT = (\n    'a',\n  ]\n", "bad.py", Settings())
    assert [(d.code, d.span.line, d.span.column) for d in found] == [("PFX902", 3, 3)]
    assert "not valid Python" in found[0].message


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="the syntax parses on this Python")
@pytest.mark.parametrize(
    "text",
    [
        "SYSTEM_PROMPT = f'{\"\\\\n\".join(rules)}'\n",
        "type Prompt = list[str]\nSYSTEM_PROMPT = 'Hi'\n",
        "def render[T](x: T) -> T:\n    return x\nSYSTEM_PROMPT = 'Hi'\n",
    ],
)
def test_syntax_of_a_newer_python_says_so(text):
    (found,) = check_text(text, "new.py", Settings())
    assert found.code == "PFX902"
    assert "valid in Python 3.12 and newer" in found.message


def test_an_ordinary_syntax_error_has_no_version_note():
    (found,) = check_text("SYSTEM_PROMPT = (\n", "bad.py", Settings())
    assert "Python 3.12" not in found.message


def test_span_and_message_name_the_sink_and_the_path():
    src = (
        "from datetime import datetime as dt\n"
        "from openai import OpenAI\n"
        "client = OpenAI()\n"
        "def build_prompt():\n"
        "    return f'Now: {dt.now()}. Follow the rules below carefully.'\n"
        "def ask(q):\n"
        "    return client.chat.completions.create(model='m', messages=[\n"
        "        {'role': 'system', 'content': build_prompt()},\n"
        "        {'role': 'user', 'content': q}])\n"
    )
    (finding,) = check_text(src, "app.py", Settings())
    span = finding.span
    assert (span.line, span.column, span.end_line, span.end_column) == (5, 20, 5, 28)
    assert finding.message.startswith(
        "dt.now() reaches the system message of client.chat.completions.create via f-string "
        "in build_prompt(), return value of build_prompt()"
    )


def test_noqa_suppresses_the_finding_on_its_line():
    src = "import time\nSYSTEM_PROMPT = f'{time.time()} Rules.'  # prefixlint: noqa: PFX101\n"
    assert check_text(src, "app.py", Settings()) == []


@pytest.mark.parametrize("newline", ("\n", "\r\n"), ids=("lf", "crlf"))
def test_fix_offsets_after_wide_characters(newline):
    lines = [
        "import json",
        "# 🙂 é€ wide and multi-byte text before the fix",
        "SYSTEM_PROMPT = '日本語: ' + json.dumps(data) + ' Answer briefly, cite your sources.'",
        "",
    ]
    src = newline.join(lines)
    outcome = fix_text(src, "app.py", Settings(), FixMode(fix=True), newline)
    assert outcome.text == src.replace("json.dumps(data)", "json.dumps(data, sort_keys=True)")


def test_the_compilers_warnings_about_checked_code_are_not_printed():
    text = 'import openai\nPATTERN = "a\\:b"\nopenai.chat.completions.create(messages=[])\n'
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_text(text, "builder.py", Settings())
        python_anchors("builder.py", text)
    assert [str(w.message) for w in caught] == []


def test_checking_python_does_not_import_the_chat_template_checker():
    # Jinja and the chat-template sandbox cost a pre-commit run on Python files a fifth of a
    # second; they load only for files that can hold a chat template.
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from prefixlint.linting.config import Settings\n"
        "from prefixlint.linting.engine import check_text\n"
        "check_text('SYSTEM_PROMPT = \"x\"\\n', 'a.py', Settings())\n"
        "assert 'jinja2' not in sys.modules, 'jinja2 imported'\n"
        "check_text('{% for m in messages %}{{ m.content }}{% endfor %}"
        "{{ add_generation_prompt }}', 't.jinja', Settings())\n"
        "assert 'jinja2' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_collector_is_paced_while_a_file_is_analysed_and_restored_after(monkeypatch):
    seen = []
    checker = registry.checkers("python", frozenset({"PFX101"}))[0][1]

    def spy(document, ctx):
        seen.append(gc.get_threshold())
        return checker(document, ctx)

    monkeypatch.setattr(registry, "checkers", lambda kind, enabled: [("PFX101", spy)])
    before = gc.get_threshold()
    text = (
        "import time\nSYSTEM_PROMPT = f'now {time.time()}'\nclient.create(system=SYSTEM_PROMPT)\n"
    )
    check_text(text, "a.py", Settings())
    assert seen == [PACED_THRESHOLDS]
    assert gc.get_threshold() == before
