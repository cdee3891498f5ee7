"""Python source -> findings, one case per line of behaviour (asottile-style tables)."""

import pytest

from prefixlint.linting.config import Settings
from prefixlint.linting.engine import check_text

PYTHON_CODES = ("PFX1", "PFX2", "PFX3", "PFX5")


def _findings(src: str) -> list[tuple[int, int, str]]:
    found = check_text(src, "app.py", Settings(select=PYTHON_CODES))
    return [(d.span.line, d.span.column, d.code) for d in found]


CHAT = "from openai import OpenAI\nclient = OpenAI()\n"


def _send(system: str, user: str = "question") -> str:
    return (
        "def ask(question):\n"
        "    return client.chat.completions.create(\n"
        '        model="gpt-4o",\n'
        "        messages=[\n"
        f'            {{"role": "system", "content": {system}}},\n'
        f'            {{"role": "user", "content": {user}}},\n'
        "        ],\n"
        "    )\n"
    )


@pytest.mark.parametrize(
    ("src", "expected"),
    (
        pytest.param(
            "from datetime import datetime as dt\n" + CHAT + _send('f"Now: {dt.now()}"'),
            [(8, 51, "PFX101")],
            id="aliased datetime.now in the system message",
        ),
        pytest.param(
            "import time as _t\n" + CHAT + _send('"Time " + str(_t.time())'),
            [(8, 57, "PFX101")],
            id="aliased module time.time through str and +",
        ),
        pytest.param(
            "import datetime\n"
            + CHAT
            + "def build():\n"
            + "    stamp = datetime.datetime.utcnow().isoformat()\n"
            + '    return "Rules.\\nStamp: {}".format(stamp)\n'
            + _send("build()"),
            [(5, 13, "PFX101")],
            id="helper return through a local and str.format",
        ),
        pytest.param(
            "from uuid import uuid4 as make_id\nimport platform as pf\n"
            'SYSTEM_PROMPT = f"Run {make_id()} on {pf.node()}. Follow the rules below, always."\n',
            [(3, 24, "PFX102"), (3, 39, "PFX104")],
            id="functions and modules imported under other names",
        ),
        pytest.param(
            "import uuid\n" + CHAT + _send('"Run %s. Be brief." % uuid.uuid4()'),
            [(8, 65, "PFX102")],
            id="uuid through %-formatting",
        ),
        pytest.param(
            "import secrets\n" + CHAT + _send('"".join(["Nonce ", secrets.token_hex(8)])'),
            [(8, 62, "PFX102")],
            id="secrets through join",
        ),
        pytest.param(
            "import os\n" + CHAT + _send("f\"Env: {os.environ['STAGE']}. Be brief.\""),
            [(8, 51, "PFX104")],
            id="os.environ read",
        ),
        pytest.param(
            "from pathlib import Path\n" + CHAT + _send('f"cwd {Path.cwd()}. Be brief."'),
            [(8, 50, "PFX104")],
            id="Path.cwd",
        ),
        pytest.param(
            "import subprocess\n"
            + CHAT
            + 'BRANCH = subprocess.check_output("git branch --show-current", shell=True)\n'
            + _send('f"On branch {BRANCH}. Be brief."'),
            [(4, 10, "PFX104")],
            id="git subprocess bound to a module constant",
        ),
        pytest.param(
            CHAT + "def ask(user_email, question):\n"
            '    system = f"Reply to {user_email}. Be brief."\n'
            "    return client.chat.completions.create(model='m', messages=[\n"
            '        {"role": "system", "content": system},\n'
            '        {"role": "user", "content": question}])\n',
            [(4, 26, "PFX103")],
            id="per-user parameter by its name",
        ),
        pytest.param(
            "from string import Template\nimport time\n"
            + CHAT
            + 'T = Template("Today: $d. Be brief.")\n'
            + _send("T.substitute(d=time.ctime())"),
            [(10, 58, "PFX101")],
            id="string.Template.substitute",
        ),
        pytest.param(
            "import jinja2, time\n"
            + CHAT
            + 'TPL = jinja2.Template("Time {{ t }}. Be brief.")\n'
            + _send("TPL.render(t=time.time())"),
            [(9, 56, "PFX101")],
            id="jinja2 Template.render",
        ),
        pytest.param(
            "from datetime import datetime\n"
            + CHAT
            + "class Bot:\n"
            + '    PERSONA = f"Started {datetime.now()}. You are Bot."\n'
            + "    def ask(self, q):\n"
            + "        return client.chat.completions.create(model='m', messages=[\n"
            + '            {"role": "system", "content": self.PERSONA},\n'
            + '            {"role": "user", "content": q}])\n',
            [(5, 26, "PFX101")],
            id="class attribute read through self",
        ),
        pytest.param(
            "import anthropic, time\nclient = anthropic.Anthropic()\n"
            "def ask(q):\n"
            "    return client.messages.create(model='m', max_tokens=5,\n"
            '        system=[{"type": "text", "text": f"t={time.time()}"}],\n'
            '        messages=[{"role": "user", "content": q}])\n',
            [(5, 47, "PFX101")],
            id="anthropic system blocks",
        ),
        pytest.param(
            "import time\n" + CHAT + "def ask(q, a):\n"
            "    return client.chat.completions.create(model='m', messages=[\n"
            '        {"role": "user", "content": f"{q} at {time.time()}"},\n'
            '        {"role": "assistant", "content": a},\n'
            '        {"role": "user", "content": q}])\n',
            [(6, 47, "PFX101")],
            id="volatile message before the last user turn",
        ),
        pytest.param(
            "import time\n"
            'SYSTEM_PROMPT = f"Booted at {time.time()}. You are a helpful assistant."\n',
            [(2, 30, "PFX101")],
            id="module-level prompt constant evaluated at import",
        ),
        pytest.param(
            "import litellm, os\n"
            "def ask(q):\n"
            "    tools = [{'name': n} for n in os.listdir('tools')]\n"
            "    return litellm.completion(model='m', messages=[{'role': 'user', 'content': q}],"
            " tools=tools)\n",
            [(3, 35, "PFX201")],
            id="listdir feeding litellm tools",
        ),
        pytest.param(
            CHAT + "def ask(q, extra):\n"
            "    names = {'a', 'b'}.union(extra)\n"
            "    return client.chat.completions.create(model='m', messages=["
            "{'role': 'user', 'content': q}], tools=[{'name': n} for n in names])\n",
            [(4, 13, "PFX201")],
            id="set union feeding tools",
        ),
        pytest.param(
            CHAT + "import json\n" + _send('"Ctx: " + json.dumps(dict(a=1))'),
            [(8, 53, "PFX202")],
            id="json.dumps of a dict call",
        ),
        pytest.param(
            "import random\n" + CHAT + "EX = ['a', 'b', 'c']\n"
            "def ask(q):\n"
            "    rng = random.Random()\n"
            "    return client.chat.completions.create(model='m', messages=[\n"
            "        {'role': 'system', 'content': ' '.join(rng.sample(EX, 2))},\n"
            "        {'role': 'user', 'content': q}])\n",
            [(8, 48, "PFX203")],
            id="Random() without a seed",
        ),
        pytest.param(
            "from langchain_core.prompts import ChatPromptTemplate\nimport time\n"
            "p = ChatPromptTemplate.from_messages([('system', f'T {time.time()}'), "
            "('human', '{q}')])\n",
            [(3, 55, "PFX101")],
            id="langchain from_messages system tuple",
        ),
        pytest.param(
            "from pydantic_ai import Agent\nimport time\n"
            "agent = Agent('openai:gpt-4o', instructions=f'Now {time.time()}.')\n",
            [(3, 52, "PFX101")],
            id="pydantic-ai instructions keyword",
        ),
        pytest.param(
            "def chat(messages, client):\n"
            "    while True:\n"
            "        messages = messages[-8:]\n"
            "        client.chat.completions.create(model='m', messages=messages)\n",
            [(3, 20, "PFX502")],
            id="window re-applied every turn",
        ),
        pytest.param(
            CHAT + "def ask(q, history):\n"
            "    return client.chat.completions.create(model='m', messages=[\n"
            "        {'role': 'system', 'content': 'Be brief.'}, *history[-6:],\n"
            "        {'role': 'user', 'content': q}])\n",
            [(5, 54, "PFX502")],
            id="window of a parameter spliced into the messages sent",
        ),
        pytest.param(
            CHAT + "def ask(q, past):\n"
            "    sent = [{'role': 'system', 'content': 'Be brief.'}] + past[-6:]\n"
            "    return client.chat.completions.create(model='m', messages=sent)\n",
            [(4, 59, "PFX502")],
            id="window joined to the messages sent through a name",
        ),
        pytest.param(
            "def chat(messages, client):\n"
            "    while len(messages) > 30:\n"
            "        messages.pop(0)\n"
            "    client.chat.completions.create(model='m', messages=messages)\n",
            [(3, 9, "PFX502")],
            id="pop(0) under a length guard",
        ),
        pytest.param(
            "def forget(chat_messages):\n    del chat_messages[1]\n",
            [(2, 9, "PFX501")],
            id="delete an earlier message of a parameter",
        ),
        pytest.param(
            "def prune(messages):\n"
            "    messages = [m for m in messages if m['role'] != 'tool' or m['content']]\n",
            [(2, 16, "PFX501")],
            id="filtering rebuild of a conversation",
        ),
        pytest.param(
            "def mask(messages):\n"
            "    messages = [{**m, 'content': '...'} if m['role'] == 'tool' else m"
            " for m in messages[:-3]]\n",
            [(2, 16, "PFX504")],
            id="comprehension masking tool output",
        ),
    ),
)
def test_finds(src, expected):
    assert _findings(src) == expected


@pytest.mark.parametrize(
    "src",
    (
        pytest.param(
            "from datetime import datetime\n"
            + CHAT
            + _send('"Be brief."', 'f"{question} {datetime.now()}"'),
            id="date only in the last user message",
        ),
        pytest.param(
            CHAT + "TAGS = {'a', 'b'}\n" + _send('"Tags: " + ", ".join(sorted(TAGS))'),
            id="sorted set",
        ),
        pytest.param(
            CHAT + "def ask(q, history):\n"
            "    log(history[-6:])\n"
            "    return client.chat.completions.create(model='m', messages=[\n"
            "        {'role': 'system', 'content': 'Be brief.'}, *history[:6],\n"
            "        {'role': 'user', 'content': q}])\n",
            id="a window only logged, the head of a conversation sent",
        ),
        pytest.param(
            CHAT + "import json\n" + _send("json.dumps(dict(a=1), sort_keys=True)"),
            id="sort_keys=True",
        ),
        pytest.param(
            CHAT + "import json\n" + _send('json.dumps({"answer": "string", "n": 1})'),
            id="literal dict serialises in source order",
        ),
        pytest.param(
            "import random\n"
            + CHAT
            + "EX = ['a', 'b', 'c']\n"
            + _send("' '.join(random.Random(0).sample(EX, 2))"),
            id="seeded sample",
        ),
        pytest.param(
            "import random\nrandom.seed(7)\n"
            + CHAT
            + "EX = ['a', 'b', 'c']\n"
            + _send("' '.join(random.sample(EX, 2))"),
            id="module seeded with random.seed",
        ),
        pytest.param(
            "import logging, time\n"
            + CHAT
            + "def ask(q):\n    logging.info('start %s', time.time())\n"
            + "    return client.chat.completions.create(model='m', messages=["
            + "{'role': 'system', 'content': 'Be brief.'}, {'role': 'user', 'content': q}])\n",
            id="timestamp only logged",
        ),
        pytest.param(
            "import uuid\n"
            + CHAT
            + "def ask(q):\n"
            + "    return client.chat.completions.create(model='m', messages=["
            + "{'role': 'user', 'content': q}],\n"
            + "        extra_headers={'Idempotency-Key': str(uuid.uuid4())})\n",
            id="uuid as idempotency header",
        ),
        pytest.param(
            "import time\n"
            "prompt = f'Summarise the text below in three bullet points. Asked at {time.time()}'\n",
            id="volatile value at the very end of a prompt text",
        ),
        pytest.param(
            "import time\nmessages = []\n"
            "def add(q):\n    messages.append({'role': 'user', 'content': f'{q} {time.time()}'})\n",
            id="appended user turn is frozen in history",
        ),
        pytest.param(
            "def chat(history, client):\n"
            "    if len(history) > 40:\n"
            "        history = history[-20:]\n"
            "    client.chat.completions.create(model='m', messages=history)\n",
            id="truncation in large fixed blocks",
        ),
        pytest.param(
            "def chat(messages, client, text):\n"
            "    messages.append({'role': 'user', 'content': text})\n"
            "    messages[-1]['content'] += ' (be brief)'\n"
            "    client.chat.completions.create(model='m', messages=messages)\n",
            id="last message edited before sending",
        ),
        pytest.param(
            "import os\ndef log_sizes():\n    for name in os.listdir('.'):\n"
            "        print(name, os.path.getsize(name))\n",
            id="listing unrelated to prompts",
        ),
        pytest.param(
            "import time\nerror_messages = []\ndef trim():\n    del error_messages[0]\n",
            id="non-chat list named messages",
        ),
        pytest.param(
            "import time\n"
            "prompt_tokens = int(time.time())\n"
            "system_prompt_path = f'/tmp/{time.time()}.txt'\n",
            id="names that are not prompt text",
        ),
        pytest.param(
            "def chat(messages, client, start):\n"
            "    if len(messages) > 10:\n"
            "        messages = messages[:1] + messages[start:]\n"
            "    client.chat.completions.create(model='m', messages=messages)\n",
            id="head and rest from a start index under a length guard",
        ),
    ),
)
def test_quiet(src):
    assert _findings(src) == []
