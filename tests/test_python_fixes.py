"""Python source -> fixed source, one fix per case (safe, then unsafe); fixing is idempotent."""

import libcst
import pytest

from prefixlint.linting.config import Settings
from prefixlint.linting.engine import FixMode, check_text, fix_text

SAFE = FixMode(fix=True)
UNSAFE = FixMode(fix=True, unsafe=True)
CHAT = "from openai import OpenAI\nclient = OpenAI()\n"
SEND = (
    "    return client.chat.completions.create(model='m', messages=[\n"
    "        {'role': 'system', 'content': system}, {'role': 'user', 'content': q}])\n"
)


def _fix(src: str, mode: FixMode) -> str:
    outcome = fix_text(src, "app.py", Settings(), mode)
    assert outcome.error is None
    return outcome.text


@pytest.mark.parametrize(
    ("src", "expected"),
    (
        pytest.param(
            "import json\n" + CHAT + "def ask(q, s):\n    system = 'S: ' + json.dumps(s)\n" + SEND,
            "import json\n"
            + CHAT
            + "def ask(q, s):\n    system = 'S: ' + json.dumps(s, sort_keys=True)\n"
            + SEND,
            id="sort_keys added",
        ),
        pytest.param(
            "import json\n" + CHAT + "def ask(q, s):\n"
            "    system = 'S: ' + json.dumps(\n        s,\n        indent=2,\n    )\n" + SEND,
            "import json\n" + CHAT + "def ask(q, s):\n"
            "    system = 'S: ' + json.dumps(\n        s,\n        indent=2,\n"
            "        sort_keys=True,\n    )\n" + SEND,
            id="sort_keys on its own line, indentation kept",
        ),
        pytest.param(
            "import json\n" + CHAT + "def ask(q, s):\n"
            "    system = 'S: ' + json.dumps(s, sort_keys=False)  # keep\n" + SEND,
            "import json\n" + CHAT + "def ask(q, s):\n"
            "    system = 'S: ' + json.dumps(s, sort_keys=True)  # keep\n" + SEND,
            id="sort_keys=False turned on, comment kept",
        ),
        pytest.param(
            "TAGS = {'b', 'a'}\n# é€😀\n"
            "SYSTEM_PROMPT = 'Tags: ' + ', '.join(TAGS) + '. Answer briefly and cite sources.'\n",
            "TAGS = {'b', 'a'}\n# é€😀\n"
            "SYSTEM_PROMPT = 'Tags: ' + ', '.join(sorted(TAGS))"
            " + '. Answer briefly and cite sources.'\n",
            id="join of a set sorted, after non-ASCII text",
        ),
        pytest.param(
            "import os, litellm\ndef ask(q):\n"
            "    tools = [{'name': n} for n in os.listdir('tools')]\n"
            "    return litellm.completion(model='m', messages=[{'role': 'user', 'content': q}],"
            " tools=tools)\n",
            "import os, litellm\ndef ask(q):\n"
            "    tools = [{'name': n} for n in sorted(os.listdir('tools'))]\n"
            "    return litellm.completion(model='m', messages=[{'role': 'user', 'content': q}],"
            " tools=tools)\n",
            id="directory listing sorted where it is iterated",
        ),
        pytest.param(
            "import anthropic\nclient = anthropic.Anthropic()\n"
            "async def run(session, history):\n"
            "    listed = await session.list_tools()\n"
            "    tools = [{'name': t.name} for t in listed.tools]\n"
            "    return client.messages.create(model='m', max_tokens=5, tools=tools,"
            " messages=history)\n",
            "import anthropic\nclient = anthropic.Anthropic()\n"
            "async def run(session, history):\n"
            "    listed = await session.list_tools()\n"
            "    tools = [{'name': t.name}"
            " for t in sorted(listed.tools, key=lambda item: item.name)]\n"
            "    return client.messages.create(model='m', max_tokens=5, tools=tools,"
            " messages=history)\n",
            id="MCP tools sorted by name",
        ),
    ),
)
def test_safe_fix(src, expected):
    assert _fix(src, SAFE) == expected


@pytest.mark.parametrize(
    ("src", "expected"),
    (
        pytest.param(
            "import time\n" + CHAT + "def ask(q):\n"
            "    system = f'You are helpful.\\nClock: {time.time()}\\nCite sources.'\n"
            "    return client.chat.completions.create(model='m', messages=[\n"
            "        {'role': 'system', 'content': system},"
            " {'role': 'user', 'content': f'Q: {q}'}])\n",
            "import time\n" + CHAT + "def ask(q):\n"
            "    system = 'You are helpful.\\nCite sources.'\n"
            "    return client.chat.completions.create(model='m', messages=[\n"
            "        {'role': 'system', 'content': system},"
            " {'role': 'user', 'content': f'Q: {q}\\n\\nClock: {time.time()}'}])\n",
            id="line moved from the system prompt to the last user message",
        ),
        pytest.param(
            "import uuid\n"
            + CHAT
            + 'SYSTEM_PROMPT = f"""Trace {uuid.uuid4()}\nYou are the bot."""\n'
            "def ask(q):\n    system = SYSTEM_PROMPT\n" + SEND,
            "import uuid\n" + CHAT + 'SYSTEM_PROMPT = """You are the bot."""\n'
            "def ask(q):\n    system = SYSTEM_PROMPT\n"
            "    return client.chat.completions.create(model='m', messages=[\n"
            "        {'role': 'system', 'content': system},"
            " {'role': 'user', 'content': f\"{q}\\n\\nTrace {uuid.uuid4()}\"}])\n",
            id="first line of a module constant moved after the question",
        ),
        pytest.param(
            "import os\nimport anthropic\nclient = anthropic.Anthropic()\ndef ask(q):\n"
            "    return client.messages.create(model='m', max_tokens=9,"
            " system=f'Rules first.\\nCWD: {os.getcwd()}',"
            " messages=[{'role': 'user', 'content': q}])\n",
            "import os\nimport anthropic\nclient = anthropic.Anthropic()\ndef ask(q):\n"
            "    return client.messages.create(model='m', max_tokens=9,"
            " system='Rules first.',"
            " messages=[{'role': 'user', 'content': f\"{q}\\n\\nCWD: {os.getcwd()}\"}])\n",
            id="anthropic system= line moved",
        ),
        pytest.param(
            "import time\n" + CHAT + "def ask(q):\n"
            "    system = f'You are helpful. Clock: {time.time()}. Cite sources.'\n"
            "    return client.chat.completions.create(model='m', messages=[\n"
            "        {'role': 'system', 'content': system},"
            " {'role': 'user', 'content': q}])\n",
            "import time\n" + CHAT + "def ask(q):\n"
            "    system = 'You are helpful. Cite sources.'\n"
            "    return client.chat.completions.create(model='m', messages=[\n"
            "        {'role': 'system', 'content': system},"
            " {'role': 'user', 'content': f\"{q}\\n\\nClock: {time.time()}.\"}])\n",
            id="the sentence holding the value moved, the others kept",
        ),
        pytest.param(
            "import time, uuid\n" + CHAT + "def ask(q):\n"
            "    system = f'You are helpful. Clock: {time.time()}.\\nTrace: {uuid.uuid4()}'\n"
            "    return client.chat.completions.create(model='m', messages=[\n"
            "        {'role': 'system', 'content': system},"
            " {'role': 'user', 'content': q}])\n",
            "import time, uuid\n" + CHAT + "def ask(q):\n"
            "    system = 'You are helpful.'\n"
            "    return client.chat.completions.create(model='m', messages=[\n"
            "        {'role': 'system', 'content': system}, {'role': 'user', 'content':"
            ' f"{q}\\n\\nClock: {time.time()}.\\n\\nTrace: {uuid.uuid4()}"}])\n',
            id="a sentence ending a line and the next line moved, an instruction kept",
        ),
        pytest.param(
            "from datetime import datetime\n"
            + CHAT
            + "SYSTEM = f'Today is {datetime.now():%Y-%m-%d %H:%M}. Be brief and cite sources.'\n"
            "def a(q):\n    system = SYSTEM\n" + SEND + "def b(q):\n    system = SYSTEM\n" + SEND,
            "from datetime import datetime\n"
            + CHAT
            + "SYSTEM = f'Today is {datetime.now():%Y-%m-%d}. Be brief and cite sources.'\n"
            "def a(q):\n    system = SYSTEM\n" + SEND + "def b(q):\n    system = SYSTEM\n" + SEND,
            id="shared prompt: format spec coarsened to the date",
        ),
        pytest.param(
            "import datetime\nSYSTEM_PROMPT = 'Now: '"
            " + datetime.datetime.now().strftime('%A %d %B %Y, %H:%M:%S') + '. Be brief, cite.'\n",
            "import datetime\nSYSTEM_PROMPT = 'Now: '"
            " + datetime.datetime.now().strftime('%A %d %B %Y') + '. Be brief, cite.'\n",
            id="strftime format coarsened to the date",
        ),
        pytest.param(
            "from datetime import datetime\n"
            "SYSTEM_PROMPT = 'Now: ' + str(datetime.now())"
            " + '. Be brief and cite sources always.'\n",
            "from datetime import datetime\n"
            "SYSTEM_PROMPT = 'Now: ' + str(datetime.now().date()) + '. Be brief and cite sources"
            " always.'\n",
            id="str(datetime.now()) coarsened with .date()",
        ),
        pytest.param(
            "from openai import OpenAI\nclient = OpenAI()\ndef ask(q, names):\n"
            "    tools = [{'name': n} for n in set(names)]\n"
            "    return client.chat.completions.create(model='m',"
            " messages=[{'role': 'user', 'content': q}], tools=tools)\n",
            "from openai import OpenAI\nclient = OpenAI()\ndef ask(q, names):\n"
            "    tools = [{'name': n} for n in sorted(set(names))]\n"
            "    return client.chat.completions.create(model='m',"
            " messages=[{'role': 'user', 'content': q}], tools=tools)\n",
            id="set of unknown items sorted only as an unsafe fix",
        ),
    ),
)
def test_unsafe_fix(src, expected):
    assert _fix(src, SAFE) == src
    fixed = _fix(src, UNSAFE)
    assert fixed == expected
    libcst.parse_module(fixed)
    assert _fix(fixed, UNSAFE) == fixed


@pytest.mark.parametrize(
    "src",
    (
        pytest.param(
            "import json\n" + CHAT + "def ask(q, s, **opts):\n"
            "    system = 'S: ' + json.dumps(s, **opts)\n" + SEND,
            id="json.dumps with **kwargs may already set sort_keys",
        ),
        pytest.param(
            "import time\n" + CHAT + "def ask(q):\n"
            "    system = f'Clock {time.time()} and rules that stay the same for every call.'\n"
            + SEND,
            id="single-line system prompt: nothing to move, time.time cannot be coarsened",
        ),
        pytest.param(
            "import datetime\nSYSTEM_PROMPT = 'Now: '"
            " + datetime.datetime.now().strftime(b'%A %d %B %Y, %H:%M:%S') + '. Be brief, cite.'\n",
            id="bytes strftime format is left alone",
        ),
    ),
)
def test_no_fix(src):
    assert check_text(src, "app.py", Settings())
    assert _fix(src, UNSAFE) == src


def test_coarsened_date_is_reported_as_a_daily_warning():
    src = (
        "from datetime import datetime\n"
        "SYSTEM_PROMPT = 'Now: ' + str(datetime.now()) + '. Be brief and cite sources always.'\n"
    )
    before = check_text(src, "app.py", Settings())
    after = check_text(_fix(src, UNSAFE), "app.py", Settings())
    assert [(d.code, d.severity.value) for d in before] == [("PFX101", "error")]
    assert [(d.code, d.severity.value) for d in after] == [("PFX101", "warning")]
    assert "once a day" in after[0].message
