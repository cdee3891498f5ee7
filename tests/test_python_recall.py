"""Python source -> findings for tool schemas named per object and other recall cases."""

import pytest

from prefixlint.linting.config import Settings
from prefixlint.linting.engine import check_text
from prefixlint.vocabulary import classify_name

PYTHON_CODES = ("PFX1", "PFX2", "PFX3", "PFX4", "PFX5")


def _findings(src: str) -> list[tuple[int, int, str]]:
    found = check_text(src, "app.py", Settings(select=PYTHON_CODES))
    return [(d.span.line, d.span.column, d.code) for d in found]


_FACTORY = (
    "from dataclasses import dataclass\n"
    "def make_submit(task):\n"
    "    @dataclass\n"
    "    class _Submit:\n"
    "{body}"
    "    _Submit.__name__ = {name}\n"
    "    return _Submit\n"
)


@pytest.mark.parametrize(
    ("src", "expected"),
    (
        pytest.param(
            _FACTORY.format(body="        result: str\n", name='f"submit_{task.id}"'),
            [(6, 34, "PFX102")],
            id="schema class named after a task's id",
        ),
        pytest.param(
            _FACTORY.format(body="        answer: int = 0\n", name='"submit_" + task.actor.id'),
            [(6, 36, "PFX102")],
            id="schema class named after an actor's id by concatenation",
        ),
        pytest.param(
            "import uuid\n"
            + _FACTORY.format(body="        result: str\n", name='f"submit_{uuid.uuid4().hex}"'),
            [(7, 34, "PFX102")],
            id="schema class named with a fresh uuid",
        ),
    ),
)
def test_finds(src: str, expected: list[tuple[int, int, str]]) -> None:
    assert _findings(src) == expected


@pytest.mark.parametrize(
    "src",
    (
        pytest.param(
            _FACTORY.format(body="        result: str\n", name='f"submit_{task.name}"'),
            id="schema class named after a stable field",
        ),
        pytest.param(
            _FACTORY.format(body="        pass\n", name='f"submit_{task.id}"'),
            id="class without declared fields is no schema",
        ),
        pytest.param(
            "class _Submit:\n    result: str\n_Submit.__name__ = f'submit_{task.id}'\n",
            id="class renamed outside a factory",
        ),
        pytest.param(
            "def make(task):\n"
            "    class _A:\n        result: str\n"
            "    other.__name__ = f'x_{task.id}'\n",
            id="name set on something that is not the factory's class",
        ),
        pytest.param(
            "def plan_status(tasks):\n"
            "    prompt = ''\n"
            "    for task in tasks:\n"
            "        prompt += f\"{task['task_id']}: {task['instruction']}\\n\"\n"
            "    return prompt\n",
            id="a plan's task_id key names a step",
        ),
    ),
)
def test_quiet(src: str) -> None:
    assert _findings(src) == []


@pytest.mark.parametrize(
    ("name", "code"),
    (
        ("task.id", "PFX102"),
        ("self.parent_task.id", "PFX102"),
        ("delegate_actor.id", "PFX102"),
        ("task_id", None),
        ("task.name", None),
        ("config.id", None),
        ("task.ident", None),
    ),
)
def test_runtime_identity(name: str, code: str | None) -> None:
    assert classify_name(name) == code


_COPY = (
    "{imports}"
    "def render(message):\n"
    "    converted = {copy}\n"
    "    converted.content = {text}\n"
    "    return converted\n"
)


@pytest.mark.parametrize(
    ("src", "expected"),
    (
        pytest.param(
            _COPY.format(
                imports="",
                copy="message.model_copy(deep=True)",
                text="f\"to {', '.join({r for r in message.send_to})}: {message.content}\"",
            ),
            [(3, 41, "PFX201")],
            id="set comprehension joined into a copied message",
        ),
        pytest.param(
            _COPY.format(
                imports="import copy\nimport time\n",
                copy="copy.deepcopy(message)",
                text='f"[{time.time()}] {message.content}"',
            ),
            [(5, 29, "PFX101")],
            id="clock written into a deep copy of a message",
        ),
    ),
)
def test_copied_message_finds(src: str, expected: list[tuple[int, int, str]]) -> None:
    assert _findings(src) == expected


@pytest.mark.parametrize(
    "src",
    (
        pytest.param(
            _COPY.format(
                imports="",
                copy="message.model_copy(deep=True)",
                text="f\"to {', '.join(sorted({r for r in message.send_to}))}: hi\"",
            ),
            id="sorted recipients",
        ),
        pytest.param(
            _COPY.format(
                imports="import time\n",
                copy="settings.model_copy()",
                text='f"[{time.time()}]"',
            ),
            id="copy of something that is not a message",
        ),
        pytest.param(
            _COPY.format(
                imports="import time\n",
                copy="make(message)",
                text='f"[{time.time()}]"',
            ),
            id="not a copy",
        ),
        pytest.param(
            "import time\n"
            "converted = message.model_copy()\n"
            "converted.content = f'[{time.time()}]'\n",
            id="copy outside a function",
        ),
    ),
)
def test_copied_message_quiet(src: str) -> None:
    assert _findings(src) == []


_FIELD = (
    "import time\n"
    "from dataclasses import dataclass, field\n"
    "from pydantic import Field\n"
    "SYSTEM_PROMPT = 'Plan the work.'\n"
    "@dataclass\n"
    "class Plan:\n"
    "    instructions: str = {declaration}\n"
    "    def send(self, client):\n"
    "        return client.chat.completions.create(model='m', messages=[\n"
    "            {{'role': 'system', 'content': self.instructions}},\n"
    "            {{'role': 'user', 'content': 'go'}}])\n"
)


@pytest.mark.parametrize(
    ("declaration", "expected"),
    (
        pytest.param(
            "field(default=f'Started {time.time()}')", [(7, 50, "PFX101")], id="field default"
        ),
        pytest.param("Field(f'Started {time.time()}')", [(7, 42, "PFX101")], id="Field default"),
        pytest.param(
            "field(metadata={'description': f'Written at {time.time()}'})",
            [],
            id="field metadata describes the field",
        ),
        pytest.param(
            "Field(description=f'Written at {time.time()}')",
            [],
            id="Field description describes the field",
        ),
    ),
)
def test_field_value_is_its_default(declaration: str, expected: list[tuple[int, int, str]]) -> None:
    assert _findings(_FIELD.format(declaration=declaration)) == expected


_ROWS = (
    "import uuid\n"
    "from openai import OpenAI\n"
    "client = OpenAI()\n"
    "def render(rows):\n"
    "    text = ''\n"
    "    for row in rows:\n"
    "        text += row[{key}] + '\\n'\n"
    "    return text\n"
    "def ask(feeds, question):\n"
    "    rows = [{{'role': f.role, 'content': f.text, 'chat_id': uuid.uuid4()}} for f in feeds]\n"
    "    return client.chat.completions.create(model='m', messages=[\n"
    "        {{'role': 'system', 'content': 'Summarise.\\n' + render(rows)}},\n"
    "        {{'role': 'user', 'content': question}}])\n"
)


@pytest.mark.parametrize(
    ("key", "expected"),
    (
        pytest.param("'content'", [], id="another key of the rows is read"),
        pytest.param("'chat_id'", [(10, 60, "PFX102")], id="the id key is read"),
        pytest.param("k", [(10, 60, "PFX102")], id="a key not known"),
    ),
)
def test_dict_key_read_out(key: str, expected: list[tuple[int, int, str]]) -> None:
    assert _findings(_ROWS.format(key=key)) == expected


@pytest.mark.parametrize(
    ("src", "expected"),
    (
        pytest.param(
            "import time\nSYSTEM_PROMPT = {'note': 'fixed', 'stamp': time.time()}['note']\n",
            [],
            id="literal dict read at a stable key",
        ),
        pytest.param(
            "import time\nSYSTEM_PROMPT = str({'note': 'fixed', 'stamp': time.time()})\n",
            [(2, 48, "PFX101")],
            id="whole dict rendered",
        ),
        pytest.param(
            "import time\n"
            "meta = {'outer': {'stamp': time.time()}}\n"
            "SYSTEM_PROMPT = f\"At {meta['outer']['stamp']}\"\n",
            [(2, 28, "PFX101")],
            id="nested keys read in turn",
        ),
    ),
)
def test_dict_keys(src: str, expected: list[tuple[int, int, str]]) -> None:
    assert _findings(src) == expected


@pytest.mark.parametrize(
    ("listing", "expected"),
    (
        pytest.param("Path.home().rglob('*.md')", [(4, 24, "PFX104")], id="rglob under home"),
        pytest.param("Path.cwd().iterdir()", [(4, 24, "PFX104")], id="iterdir of cwd"),
        pytest.param("sorted(Path('/etc/skills').rglob('*.md'))", [], id="fixed root, sorted"),
    ),
)
def test_listed_paths_spell_their_root(listing: str, expected: list[tuple[int, int, str]]) -> None:
    src = (
        "from pathlib import Path\n"
        "def skills_text():\n"
        "    names = []\n"
        f"    for path in sorted({listing}):\n"
        "        names.append(str(path))\n"
        "    return ', '.join(names)\n"
        "SYSTEM_PROMPT = 'Skills: ' + skills_text()\n"
    )
    assert _findings(src) == expected


_SPLIT = (
    "from openai import OpenAI\n"
    "client = OpenAI()\n"
    "def ask(history, question):\n"
    "    messages = [{{'role': 'system', 'content': 'Be brief.'}}]\n"
    "    {targets} = {call}\n"
    "    messages.append({{'role': 'assistant', 'content': str(older)}})\n"
    "    messages.extend(recent)\n"
    "    messages.append({{'role': 'user', 'content': question}})\n"
    "    return client.chat.completions.create(model='m', messages=messages)\n"
)


@pytest.mark.parametrize(
    ("targets", "call", "expected"),
    (
        pytest.param(
            "older, recent",
            "split_history(history, token_limit=3000)",
            [(5, 5, "PFX502")],
            id="split by a token budget",
        ),
        pytest.param(
            "older, recent",
            "compressor.compress_rounds(history)",
            [(5, 5, "PFX502")],
            id="compressed into a summary and the rest",
        ),
        pytest.param(
            "older, recent",
            "await summarize_messages(history, 10)",
            [(5, 5, "PFX502")],
            id="awaited summary",
        ),
    ),
)
def test_summarized_split_finds(
    targets: str, call: str, expected: list[tuple[int, int, str]]
) -> None:
    assert _findings(_SPLIT.format(targets=targets, call=call)) == expected


@pytest.mark.parametrize(
    ("targets", "call"),
    (
        pytest.param("older, recent", "split_by_role(history)", id="split without a budget"),
        pytest.param("older, recent", "split_text(question, max_tokens)", id="not a conversation"),
        pytest.param("older, recent", "load_history(history, token_limit)", id="not a cut"),
        pytest.param("older", "compress_rounds(history)", id="one result"),
    ),
)
def test_summarized_split_quiet(targets: str, call: str) -> None:
    src = _SPLIT.format(targets=targets, call=call).replace("recent", "older")
    assert _findings(src) == []


_UNPACKED = (
    "import time\n"
    "from openai import OpenAI\n"
    "client = OpenAI()\n"
    "def parts(question):\n"
    "{returns}"
    "{prefix}def ask(question):\n"
    "    {targets} = {call}parts(question)\n"
    "    system = 'You are a helper. ' + {sent}\n"
    "    return client.chat.completions.create(model='m', messages=[\n"
    "        {{'role': 'system', 'content': system}}, {{'role': 'user', 'content': question}}])\n"
)


def _unpacked(returns, sent, targets="stamp, rules", call="", prefix=""):
    body = "".join(f"    {line}\n" for line in returns)
    return _UNPACKED.format(returns=body, sent=sent, targets=targets, call=call, prefix=prefix)


@pytest.mark.parametrize(
    ("src", "expected"),
    (
        pytest.param(
            _unpacked(["return str(time.time()), 'Be brief.'"], "stamp"),
            [(5, 16, "PFX101")],
            id="the element sent is the volatile one",
        ),
        pytest.param(
            _unpacked(
                ["if question:", "    return str(time.time()), 'Be brief.'", "return 'x', 'y'"],
                "stamp",
            ),
            [(6, 20, "PFX101")],
            id="every return of one shape: its elements by position",
        ),
        pytest.param(
            _unpacked(["return str(time.time()), 'Be brief.'", "return 'x', 'y', 'z'"], "rules"),
            [(5, 16, "PFX101")],
            id="returns of two lengths: the whole value",
        ),
        pytest.param(
            _unpacked(["return (*[str(time.time())], 'Be brief.')"], "rules"),
            [(5, 19, "PFX101")],
            id="a starred element: the whole value",
        ),
        pytest.param(
            _unpacked(
                ["return str(time.time()), 'Be brief.'"], "stamp", call="await ", prefix="async "
            ),
            [(5, 16, "PFX101")],
            id="awaited",
        ),
    ),
)
def test_unpacked_return_finds(src: str, expected: list[tuple[int, int, str]]) -> None:
    assert _findings(src) == expected


@pytest.mark.parametrize(
    "src",
    (
        pytest.param(
            _unpacked(["return str(time.time()), 'Be brief.'"], "rules"),
            id="only the stable element is sent",
        ),
        pytest.param(
            _unpacked(
                ["if question:", "    return str(time.time()), 'Be brief.'", "return 'x', 'y'"],
                "rules",
            ),
            id="the stable position on every path",
        ),
    ),
)
def test_unpacked_return_quiet(src: str) -> None:
    assert _findings(src) == []


_REPORTED = (
    "from crewai import Agent\n"
    "from crewai.events.types.agent_events import AgentExecutionStartedEvent\n"
    "from crewai.telemetry import Telemetry\n"
    "def run(user, tools):\n"
    "    memory = user.memory.recall('x')\n"
    "    {call}\n"
)


@pytest.mark.parametrize(
    ("call", "expected"),
    (
        pytest.param(
            "Agent(role='r', goal='g', backstory='b', tools=[memory])",
            [(5, 14, "PFX103")],
            id="an agent's tools",
        ),
        pytest.param("AgentExecutionStartedEvent(tools=[memory], messages=[])", [], id="an event"),
        pytest.param("Telemetry().record(tools=[memory])", [], id="telemetry"),
    ),
)
def test_telemetry_records_are_no_requests(call: str, expected: list[tuple[int, int, str]]) -> None:
    assert _findings(_REPORTED.format(call=call)) == expected


_CACHED = (
    "import time\n"
    "_cache = {{}}\n"
    "def list_tools(server):\n"
    "    if server in _cache:\n"
    "        {targets} = _cache[server]\n"
    "        if time.time() - stamp < 60:\n"
    "            return tools\n"
    "    tools = server.fetch()\n"
    "    _cache[server] = {stored}\n"
    "    return tools\n"
)


@pytest.mark.parametrize(
    ("targets", "stored", "expected"),
    (
        pytest.param("tools, stamp", "(tools, time.time())", [], id="the stable element is read"),
        pytest.param(
            "stamp, tools",
            "(tools, time.time())",
            [(9, 30, "PFX101")],
            id="the element read is the time",
        ),
        pytest.param(
            "tools, *stamp",
            "(tools, time.time())",
            [(9, 30, "PFX101")],
            id="a starred target: the whole item",
        ),
    ),
)
def test_unpacked_cache_item(
    targets: str, stored: str, expected: list[tuple[int, int, str]]
) -> None:
    assert _findings(_CACHED.format(targets=targets, stored=stored)) == expected


_SCHEMA = (
    "import dataclasses\n"
    "import json\n"
    "from pydantic import BaseModel\n"
    "from .models import Report\n"
    "class Answer(BaseModel):\n"
    "    text: str\n"
    "def fields():\n"
    "    return {{'name': 'text', 'type': 'string'}}\n"
    "def build_system_prompt(output, source):\n"
    "    schema = {payload}\n"
    "    return 'Reply as JSON in this schema: ' + json.dumps(schema, indent=2)\n"
)


@pytest.mark.parametrize(
    ("payload", "expected"),
    (
        pytest.param("Answer.model_json_schema()", [], id="a model's JSON schema"),
        pytest.param("output.model_dump()", [], id="a model's dump"),
        pytest.param("dataclasses.asdict(output)", [], id="a dataclass's fields"),
        pytest.param("fields()", [], id="a local function returning a literal"),
        pytest.param("describe(Answer)", [], id="a function given a class declared here"),
        pytest.param("describe(Report)", [], id="a function given an imported class"),
        pytest.param("describe(source)", [(11, 47, "PFX202")], id="a function given a value"),
        pytest.param("source.tools()", [(11, 47, "PFX202")], id="a method of a value"),
        pytest.param("describe()", [(11, 47, "PFX202")], id="a function given nothing"),
        pytest.param("describe(MAX)", [(11, 47, "PFX202")], id="a function given a constant"),
        pytest.param(
            "db.collection_schema('reply')", [(11, 47, "PFX202")], id="a schema a database gives"
        ),
        pytest.param("json.load(open('reply.json'))", [], id="a JSON file read"),
        pytest.param("Answer.model_json_schema()['properties']", [], id="a part of a schema"),
        pytest.param("source.tools()['web']", [(11, 47, "PFX202")], id="a part of a value"),
        pytest.param("source.tool.args", [], id="a tool's declared parameter schema"),
        pytest.param("source.tool.config", [(11, 47, "PFX202")], id="another field of a tool"),
    ),
)
def test_fixed_order_payloads(payload: str, expected: list[tuple[int, int, str]]) -> None:
    assert _findings(_SCHEMA.format(payload=payload)) == expected


@pytest.mark.parametrize(
    ("added", "expected"),
    (
        pytest.param("{'name': key, 'about': AGENTS[key]}", [], id="dict displays appended"),
        pytest.param("AGENTS[key]", [(9, 30, "PFX202")], id="values of unknown order appended"),
    ),
)
def test_a_list_filled_with_fixed_values(added: str, expected: list[tuple[int, int, str]]) -> None:
    src = (
        "import json\n"
        "from langchain_core.messages import SystemMessage\n"
        "AGENTS = {'coder': 'writes code', 'tester': 'runs tests'}\n"
        "def prompt(keys):\n"
        "    rows = []\n"
        "    for key in keys:\n"
        f"        rows.append({added})\n"
        "    return SystemMessage(\n"
        "        content='Agents: ' + json.dumps(rows) + ' Pick one of them for each step.'\n"
        "    )\n"
    )
    assert _findings(src) == expected


def test_local_function_returning_a_value() -> None:
    src = _SCHEMA.format(payload="fields()").replace("return {'name'", "return DEFAULT or {'name'")
    assert _findings(src) == [(11, 47, "PFX202")]


_SENT_COPY = (
    "from app.schema import Message\n"
    "def ask(client, messages: list[Message], rules: str):\n"
    "    sent = messages.copy()\n"
    "    sent.insert({index}, Message(role='system', content=rules))\n"
    "    {after}\n"
)


@pytest.mark.parametrize(
    ("index", "after", "expected"),
    (
        pytest.param("0", "return client.send(sent)", [], id="put first in a copy only sent"),
        pytest.param("1", "client.send(sent)", [], id="at a fixed place in a copy only sent"),
        pytest.param("-1", "client.send(sent)", [(4, 5, "PFX501")], id="counted from the end"),
        pytest.param("0", "return sent", [(4, 5, "PFX501")], id="the copy returned"),
        pytest.param("0", "self.history = sent", [(4, 5, "PFX501")], id="the copy stored"),
    ),
)
def test_insert_into_sent_copy(
    index: str, after: str, expected: list[tuple[int, int, str]]
) -> None:
    assert _findings(_SENT_COPY.format(index=index, after=after)) == expected


_ENV_READ = (
    "import os\n"
    "from openai import OpenAI\n"
    "client = OpenAI()\n"
    "def ask(question):\n"
    "    system = f'You are {read} and follow the house rules in every single answer.'\n"
    "    return client.chat.completions.create(model='m', messages=[\n"
    "        {{'role': 'system', 'content': system}}, {{'role': 'user', 'content': question}}])\n"
)


@pytest.mark.parametrize(
    ("read", "expected"),
    (
        pytest.param('{os.environ.get("AGENT_MODEL", "gpt-4o")}', [], id="a model from get"),
        pytest.param('{os.getenv("MODEL_NAME")}', [], id="a model name from getenv"),
        pytest.param('{os.environ["OPENAI_MODEL_ID"]}', [], id="a model id by subscript"),
        pytest.param(
            '{os.environ.get("AGENT_MODEL", os.getcwd())}',
            [(5, 55, "PFX104")],
            id="the default is still read",
        ),
        pytest.param('{os.getenv("MODELS_DIR")}', [(5, 25, "PFX104")], id="a folder of models"),
        pytest.param('{os.environ["AGENT_ROLE"]}', [(5, 25, "PFX104")], id="another variable"),
        pytest.param('{os.getenv("SYSTEM_PROMPT")}', [], id="a configured system prompt"),
        pytest.param('{os.environ["BOT_PERSONA"]}', [], id="a configured persona"),
        pytest.param('{os.environ["USER"]}', [(5, 25, "PFX104")], id="the user of the machine"),
    ),
)
def test_model_or_prompt_named_by_environment(
    read: str, expected: list[tuple[int, int, str]]
) -> None:
    assert _findings(_ENV_READ.format(read=read)) == expected


def test_the_platform_is_a_machine_value() -> None:
    src = "import sys\n" + _ENV_READ.format(read="on {sys.platform}")
    assert _findings(src) == [(6, 28, "PFX104")]


_SPLICED = (
    "import random\n"
    "SHOTS = [('q1', 'a1'), ('q2', 'a2')]\n"
    "def examples():\n"
    "    shots = list(SHOTS)\n"
    "{pick}"
    "    out = []\n"
    "    for q, a in shots:\n"
    "        out.append({{'role': 'user', 'content': q}})\n"
    "        out.append({{'role': 'assistant', 'content': a}})\n"
    "    return out\n"
    "def turn(client, history, text):\n"
    "    messages = [{{'role': 'system', 'content': 'You narrate.'}}, {spliced}\n"
    "                {{'role': 'user', 'content': text}}]\n"
    "    return client.chat.completions.create(model='m', messages=messages)\n"
)


@pytest.mark.parametrize(
    ("pick", "spliced", "expected"),
    (
        pytest.param(
            "    random.shuffle(shots)\n",
            "*examples(), *history,",
            [(5, 5, "PFX203")],
            id="examples reshuffled for every request, before the history",
        ),
        pytest.param(
            "    random.Random(7).shuffle(shots)\n",
            "*examples(), *history,",
            [],
            id="examples shuffled by a seeded generator",
        ),
        pytest.param(
            "    random.shuffle(shots)\n",
            "*history, *examples(),",
            [(5, 5, "PFX203")],
            id="examples after the history are still before the last user turn",
        ),
        pytest.param(
            "",
            "*examples(), *history,",
            [],
            id="examples in a fixed order",
        ),
    ),
)
def test_spliced_messages(pick: str, spliced: str, expected: list[tuple[int, int, str]]) -> None:
    assert _findings(_SPLICED.format(pick=pick, spliced=spliced)) == expected


_INVOKED = (
    "from langchain_core.messages import HumanMessage, SystemMessage\n"
    "from langchain_openai import ChatOpenAI\n"
    "llm = ChatOpenAI(model='m')\n"
    "def node(state):\n"
    "    system = SystemMessage(content='You tutor algebra.')\n"
    "    recent = state['messages']{window}\n"
    "    return {{'messages': [llm.{method}([{first}, *recent])]}}\n"
)


@pytest.mark.parametrize(
    ("window", "method", "first", "expected"),
    (
        pytest.param("[-8:]", "invoke", "system", [(6, 14, "PFX502")], id="invoked with a window"),
        pytest.param("[-8:]", "ainvoke", "system", [(6, 14, "PFX502")], id="the async invoke"),
        pytest.param("", "invoke", "system", [], id="the whole conversation"),
        pytest.param(
            "[-8:]", "invoke", "HumanMessage(content='hi')", [], id="no system message first"
        ),
    ),
)
def test_invoked_message_list(
    window: str, method: str, first: str, expected: list[tuple[int, int, str]]
) -> None:
    assert _findings(_INVOKED.format(window=window, method=method, first=first)) == expected


_PIPELINE = (
    "from datetime import datetime\n"
    "from langchain_core.prompts import ChatPromptTemplate\n"
    "prompt = ChatPromptTemplate.from_messages(\n"
    "    [('system', 'Rules as of {{stamp}}. Be brief.'), ('human', '{{question}}')]\n"
    ")\n"
    "chain = prompt | model\n"
    "def answer(question):\n"
    "    return chain.{call}\n"
)


@pytest.mark.parametrize(
    ("call", "expected"),
    (
        pytest.param(
            "invoke({'question': question, 'stamp': datetime.now()})",
            [(8, 57, "PFX101")],
            id="a pipeline given the time for a system field",
        ),
        pytest.param(
            "invoke({'question': f'{question} at {datetime.now()}', 'stamp': '2024'})",
            [],
            id="the time only in the human field",
        ),
        pytest.param(
            "batch([{'question': question, 'stamp': '2024'}])",
            [],
            id="fixed values for the system field",
        ),
    ),
)
def test_pipeline_fills_template_fields(call: str, expected: list[tuple[int, int, str]]) -> None:
    assert _findings(_PIPELINE.format(call=call)) == expected


_PASSED_ID = (
    "import uuid\n"
    "def system(request_id):\n"
    "    return {{'role': 'system', 'content': f'Be brief. Case {{request_id}}'}}\n"
    "def ask(client, text):\n"
    "    rid = {value}\n"
    "    messages = [system(rid), {{'role': 'user', 'content': text}}]\n"
    "    return client.chat.completions.create(model='m', messages=messages)\n"
)


@pytest.mark.parametrize(
    ("value", "expected"),
    (
        pytest.param("str(uuid.uuid4())", [(5, 15, "PFX102")], id="the id made by the caller"),
        pytest.param("text[:8]", [(3, 60, "PFX102")], id="a value known only by the name"),
    ),
)
def test_named_parameter_passed_a_volatile_value(
    value: str, expected: list[tuple[int, int, str]]
) -> None:
    assert _findings(_PASSED_ID.format(value=value)) == expected


_SET_FIELD = (
    "import json\n"
    "from dataclasses import dataclass, field\n"
    "@dataclass\n"
    "class Shop:\n"
    "    tags: set[str] = field(default_factory=set)\n"
    "def system(shop: Shop):\n"
    "    return 'Be brief. Flags: ' + {shown}\n"
    "def ask(client, shop, text):\n"
    "    return client.messages.create(\n"
    "        model='m', system=system(shop), messages=[{{'role': 'user', 'content': text}}]\n"
    "    )\n"
)


@pytest.mark.parametrize(
    ("shown", "expected"),
    (
        pytest.param("', '.join(shop.tags)", [(7, 44, "PFX201")], id="a set field joined"),
        pytest.param("', '.join(sorted(shop.tags))", [], id="a set field sorted"),
        pytest.param(
            "json.dumps({t: True for t in shop.tags})",
            [(7, 34, "PFX202")],
            id="a set field iterated into the keys of a dump",
        ),
        pytest.param(
            "json.dumps({t: True for t in shop.tags}, sort_keys=True)",
            [],
            id="the keys sorted by the dump",
        ),
    ),
)
def test_set_field_of_a_declared_class(shown: str, expected: list[tuple[int, int, str]]) -> None:
    assert _findings(_SET_FIELD.format(shown=shown)) == expected


_DEFAULTED = (
    "import uuid\n"
    "from dataclasses import dataclass, field\n"
    "@dataclass\n"
    "class Run:\n"
    "    ledger: str\n"
    "    tag: str = {default}\n"
    "def system(run: Run):\n"
    "    return f'Reconcile {{run.ledger}}. Tag: {{run.tag}}. Match amounts to the cent.'\n"
    "def ask(client, text):\n"
    "    run = Run('main')\n"
    "    messages = [{{'role': 'system', 'content': system(run)}},\n"
    "                {{'role': 'user', 'content': text}}]\n"
    "    return client.chat.completions.create(model='m', messages=messages)\n"
)


@pytest.mark.parametrize(
    ("default", "expected"),
    (
        pytest.param(
            "field(default_factory=lambda: uuid.uuid4().hex)",
            [(6, 46, "PFX102")],
            id="a field made new for every instance",
        ),
        pytest.param("field(default='books')", [], id="a fixed default"),
        pytest.param("'books'", [], id="a fixed default assigned"),
    ),
)
def test_declared_field_default(default: str, expected: list[tuple[int, int, str]]) -> None:
    assert _findings(_DEFAULTED.format(default=default)) == expected


_DYNAMIC_SYSTEM = (
    "from pydantic_ai import Agent, RunContext\n"
    "agent = Agent('openai:gpt-4o', system_prompt='You settle claims.')\n"
    "{decorator}\n"
    "async def context(ctx: RunContext) -> str:\n"
    "    return f'Signed off by {{{read}}}.'\n"
)


@pytest.mark.parametrize(
    ("decorator", "read", "expected"),
    (
        pytest.param(
            "@agent.system_prompt",
            "ctx.deps.reviewer",
            [(5, 29, "PFX103")],
            id="a field of the run's dependencies",
        ),
        pytest.param(
            "@agent.instructions", "ctx.deps", [(5, 29, "PFX103")], id="the dependencies as text"
        ),
        pytest.param(
            "@agent.system_prompt",
            "await ctx.deps.store.policy()",
            [],
            id="a client of the dependencies called",
        ),
        pytest.param("@agent.tool", "ctx.deps.reviewer", [], id="a tool's result"),
    ),
)
def test_run_dependencies_in_a_dynamic_system_prompt(
    decorator: str, read: str, expected: list[tuple[int, int, str]]
) -> None:
    assert _findings(_DYNAMIC_SYSTEM.format(decorator=decorator, read=read)) == expected


_RECORD = (
    "from dataclasses import dataclass\n"
    "@dataclass\n"
    "class Context:\n"
    "    rows: list\n"
    "def system(ctx: Context):\n"
    "    return 'Balances:\\n' + '\\n'.join(ctx.rows) + '\\nMatch amounts to the cent.'\n"
    "def ask(client, db, text):\n"
    "    ctx = Context({rows})\n"
    "    messages = [{{'role': 'system', 'content': system(ctx)}},\n"
    "                {{'role': 'user', 'content': text}}]\n"
    "    return client.chat.completions.create(model='m', messages=messages)\n"
)


@pytest.mark.parametrize(
    ("rows", "expected"),
    (
        pytest.param(
            "[r[0] for r in db.execute('SELECT code FROM ledger').fetchall()]",
            [(8, 45, "PFX201")],
            id="rows of a query without an order kept by a record",
        ),
        pytest.param(
            "[r[0] for r in db.execute('SELECT code FROM ledger ORDER BY code').fetchall()]",
            [],
            id="rows of an ordered query",
        ),
        pytest.param("sorted({'b', 'a'})", [], id="a sorted set"),
    ),
)
def test_record_keeps_the_order_it_is_given(
    rows: str, expected: list[tuple[int, int, str]]
) -> None:
    assert _findings(_RECORD.format(rows=rows)) == expected
