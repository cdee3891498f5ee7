"""The ast screen before libcst: what it lets through, and that it never hides a finding."""

import ast
import re
from pathlib import Path

import pytest

from prefixlint import registry
from prefixlint.context import RuleContext, SourceError
from prefixlint.linting.config import Settings
from prefixlint.linting.engine import check_text
from prefixlint.pyflow import prompt_words, screen
from prefixlint.pyflow.prompt_words import may_hold_prompt
from prefixlint.sources import python

CODES = frozenset(registry.rule_docs())
ROOT = Path(__file__).resolve().parent.parent


def needs(text: str, codes: frozenset[str] = CODES) -> bool:
    return screen.may_need_analysis(text, ast.parse(text), RuleContext("t.py", codes))


@pytest.mark.parametrize(
    "text",
    (
        pytest.param(
            "import time\nSYSTEM_PROMPT = f'now {time.time()}'\n", id="prompt name and a clock"
        ),
        pytest.param("def build_prompt():\n    return f'{os.environ}'\n", id="prompt function"),
        pytest.param("client.chat.completions.create(model='m', messages=history)\n", id="request"),
        pytest.param("history.append({'role': 'user', 'content': q})\n", id="role dict added"),
        pytest.param("del messages[0]\n", id="conversation edited"),
        pytest.param("def f(memory: list[Message]):\n    memory.pop(0)\n", id="typed list"),
        pytest.param(
            "def f(memory: list[Message]):\n    return memory[-4:]\n", id="typed list windowed"
        ),
        pytest.param(
            "def f(memory: list[Message]):\n    old, recent = split_history(memory, 4)\n",
            id="typed list split",
        ),
        pytest.param("x = [{'role': 'system', 'content': f'{uuid4()}'}]\n", id="system role"),
        pytest.param("Agent(system_prompt=f'{datetime.now()}')\n", id="system keyword"),
        pytest.param(
            "SYSTEM_PROMPT = ('You help ' 'user_id')\n", id="a piece of an implicit concatenation"
        ),
        pytest.param(
            "SYSTEM_PROMPT = 'a' if x else 'a '\n", id="the same text with other whitespace"
        ),
        pytest.param("messages.clear()\nmessages.append(summary)\n", id="conversation emptied"),
        pytest.param(
            "history = session.get_messages(limit=n)\nrun.messages += history\n",
            id="capped fetch of a conversation",
        ),
    ),
)
def test_files_that_may_hold_a_finding_are_analysed(text):
    assert needs(text)


@pytest.mark.parametrize(
    "text",
    (
        pytest.param("SYSTEM_PROMPT = 'You are helpful.'\n", id="a fixed prompt"),
        pytest.param("prompt = build(tokens)\nmodel.generate(prompt)\n", id="nothing volatile"),
        pytest.param("error_messages = []\nerror_messages.pop(0)\n", id="not a conversation"),
        pytest.param("messages = ['a', 'b']\nprint(messages[0])\n", id="a list only read"),
        pytest.param(
            "history = session.get_messages(limit=None)\nprint(history)\n",
            id="an uncapped fetch of a conversation",
        ),
        pytest.param(
            "class Params(TypedDict):\n    messages: Required[Iterable[MessageParam]]\n",
            id="a typed list never edited",
        ),
        pytest.param(
            "def create(messages: list[Message]):\n    return post(body={'messages': messages})\n",
            id="a typed list passed on",
        ),
    ),
)
def test_files_that_cannot_hold_a_finding_are_not_analysed(text):
    assert not needs(text)


def test_request_input_counts_only_with_enough_static_text_for_pfx301():
    short = "def build_prompt(question):\n    return f'Q: {question}'\n"
    long = "def build_prompt(question):\n    return f'Q: {question}' + '" + "x" * 200 + "'\n"
    assert not needs(short)
    assert needs(long)
    assert not needs(long, CODES - {"PFX301"})


def test_a_screened_out_file_is_never_parsed_by_libcst(monkeypatch):
    def fail(text, ctx):
        raise AssertionError("parsed")

    monkeypatch.setattr(python, "_document", fail)
    assert check_text("SYSTEM_PROMPT = 'You are helpful.'\n", "a.py", Settings()) == []


def test_code_that_ast_rejects_is_still_reported_by_libcst():
    found = check_text("SYSTEM_PROMPT = (\n    'a',\n  ]\n", "bad.py", Settings())
    assert [d.code for d in found] == ["PFX902"]


def _python_files():
    for folder in ("fixtures", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            if may_hold_prompt(text):
                yield pytest.param(path, text, id=str(path.relative_to(ROOT)))


@pytest.mark.parametrize(("path", "text"), list(_python_files()))
def test_the_screen_hides_no_finding_in_the_repository(path, text):
    ctx = RuleContext(str(path), CODES)
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return
    if screen.may_need_analysis(text, tree, ctx):
        return
    try:
        document = python.parse(text, ctx)
    except SourceError as exc:
        pytest.fail(f"libcst reports {exc.message}")
    found = [d for _, checker in registry.checkers("python", CODES) for d in checker(document, ctx)]
    assert found == []


# The single pattern ``defines_message_list`` stands for, searched in one go.
_ONE_PATTERN = re.compile(
    r"""\[\s*["']?[\w.]*Message"""
    r"|(?:messages|history|conversation|transcript)(?:\.copy\(\)|\[:\])"
    r"|(?:list|deepcopy|copy)\(\s*[\w.]*(?:messages|history|conversation|transcript)\s*\)"
)


@pytest.mark.parametrize(
    "text",
    [
        "x: list[Message] = []",
        "x: list['ChatMessage'] = []",
        "h = history.copy()",
        "h = self.messages[:]",
        "h = list(messages)",
        "h = list( self.old_transcript )",
        "h = deepcopy(conversation)",
        "h = copy.deepcopy(state.history)",
        "h = history.copy ()",  # no match: a space before the call
        "h = deepcopy(conversation, memo)",
        "h = list(messages) if messages else []",
        "h = messages[:2]",
        "h = [m for m in messages]",
        "h = copy(x); y = messages[1:]",
        "",
    ],
)
def test_the_message_list_test_matches_where_its_single_pattern_does(text):
    assert prompt_words.defines_message_list(text) is bool(_ONE_PATTERN.search(text))
