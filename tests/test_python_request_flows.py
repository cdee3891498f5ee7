"""Flows into request parts across functions: callers' arguments, templates filled by keyword
elsewhere, sorted dumps and module-level prompt text the module's own requests never read.

Each case is a short module and the findings it must give, as ``(line, code)`` pairs.
"""

import textwrap

import pytest

from prefixlint import check_source

PYTHON_CODES = ("PFX1", "PFX2", "PFX3", "PFX4", "PFX5")


def _found(src: str) -> list[tuple[int, str]]:
    found = check_source(textwrap.dedent(src), "app.py", select=PYTHON_CODES)
    return sorted((d.span.line, d.code) for d in found)


FOUND = (
    pytest.param(
        """
        import uuid
        from openai import OpenAI

        client = OpenAI()

        def send(system, question):
            return client.chat.completions.create(
                model="m",
                messages=[
                    {"role": "system", "content": system},
                    {"role": "user", "content": question},
                ],
            )

        def main(question):
            run = uuid.uuid4().hex
            return send(f"You grade answers. Grading run {run}.", question)
        """,
        [(17, "PFX102")],
        id="a caller's argument reaches the system message the function sends",
    ),
    pytest.param(
        """
        import time
        from openai import OpenAI

        client = OpenAI()

        class Grader:
            def _ask(self, system, question):
                return client.chat.completions.create(
                    model="m",
                    messages=[
                        {"role": "system", "content": system},
                        {"role": "user", "content": question},
                    ],
                )

            def grade(self, question):
                return self._ask("Graded at " + time.ctime() + ". Be strict.", question)
        """,
        [(18, "PFX101")],
        id="an argument of a method call reaches the system message the method sends",
    ),
    pytest.param(
        """
        from datetime import datetime
        from langchain_core.prompts import ChatPromptTemplate

        PROMPT = ChatPromptTemplate.from_messages(
            [("system", "You help analysts. Session opened {opened}."), ("human", "{q}")]
        )

        class Copilot:
            def __init__(self):
                self.prompt = PROMPT.partial(opened=datetime.now().isoformat())
        """,
        [(11, "PFX101")],
        id="a template field filled by partial() elsewhere is the value given",
    ),
    pytest.param(
        """
        from openai import OpenAI

        client = OpenAI()

        def instructions_for(guest):
            return f"You plan trips. Guest: {guest.name}, flying from {guest.home_airport}."

        def plan(guest, question):
            return client.responses.create(
                model="m", instructions=instructions_for(guest), input=question
            )
        """,
        [(7, "PFX103")],
        id="a field of a person's record read in the helper that builds the instructions",
    ),
    pytest.param(
        """
        from anthropic import Anthropic

        class Bridge:
            def __init__(self):
                self.client = Anthropic()
                self.tools = []

            def connect(self, session):
                for tool in session.list_tools().tools:
                    self.tools.append({"name": tool.name, "input_schema": tool.inputSchema})

            def chat(self, messages):
                return self.client.messages.create(
                    model="m", max_tokens=100, tools=self.tools, messages=messages
                )
        """,
        [(10, "PFX201")],
        id="a self attribute filled in another method in a server's order",
    ),
    pytest.param(
        """
        from openai import OpenAI

        client = OpenAI()

        def describe(conn):
            rows = conn.execute("SELECT table_name, column_name FROM columns").fetchall()
            tables = {}
            for table, column in rows:
                tables.setdefault(table, []).append(column)
            return "\\n".join(f"{t}({', '.join(c)})" for t, c in tables.items())

        def ask(conn, question):
            return client.chat.completions.create(
                model="m",
                messages=[
                    {"role": "system", "content": "Write SQL for:\\n" + describe(conn)},
                    {"role": "user", "content": question},
                ],
            )
        """,
        [(7, "PFX201")],
        id="rows without an order grouped into the lists of a dict",
    ),
    pytest.param(
        """
        import random
        import dspy

        class Extractor(dspy.Module):
            def __init__(self, trainset):
                super().__init__()
                self.predict = dspy.Predict("email -> claim")
                self.predict.demos = random.sample(trainset, k=3)
        """,
        [(9, "PFX203")],
        id="a DSPy predictor's demos drawn at random",
    ),
    pytest.param(
        """
        import json

        def capabilities(flags: set[str]) -> str:
            caps = {flag: {"enabled": True} for flag in flags}
            return json.dumps(caps, indent=2)

        def build(messages, flags):
            system = "Capabilities: " + capabilities(flags)
            return {"model": "m", "messages": [{"role": "system", "content": system}, *messages]}
        """,
        [(6, "PFX202")],
        id="a parameter annotated as a set iterated into the keys of a dumped system message",
    ),
)

QUIET = (
    pytest.param(
        """
        from langchain_core.prompts import ChatPromptTemplate

        PROMPT = ChatPromptTemplate.from_messages(
            [("system", "You help analysts. Today is {today}."), ("human", "{q}")]
        )

        class Copilot:
            def __init__(self, release):
                self.prompt = PROMPT.partial(today="the release day")
        """,
        id="a field named like a date but filled with fixed text by partial()",
    ),
    pytest.param(
        """
        import json
        from openai import OpenAI

        client = OpenAI()
        TAGS = {"published", "internal", "en"}
        RULES = "You answer questions about the help portal."

        def filters():
            chosen = {tag: True for tag in TAGS}
            return json.dumps(chosen, sort_keys=True)

        def ask(question):
            return client.chat.completions.create(
                model="m",
                messages=[
                    {"role": "system", "content": RULES + " Filters: " + filters()},
                    {"role": "user", "content": question},
                ],
            )
        """,
        id="a set iterated into the keys of a dict that is dumped with sorted keys",
    ),
    pytest.param(
        """
        from datetime import datetime
        import anthropic

        client = anthropic.Anthropic()
        SYSTEM_PROMPT = f"You are Juniper (v1), built {datetime.now():%c}."
        CURRENT = "You are Juniper, a friendly companion."

        def reply(history):
            return client.messages.create(
                model="m", max_tokens=100, system=CURRENT, messages=history
            )
        """,
        id="a module-level prompt its module's own requests never read",
    ),
    pytest.param(
        """
        from openai import OpenAI

        client = OpenAI()

        def system_for(user):
            return f"You answer for the {user.organization_name} help desk."

        def ask(user, question):
            return client.chat.completions.create(
                model="m",
                messages=[
                    {"role": "system", "content": system_for(user)},
                    {"role": "user", "content": question},
                ],
            )
        """,
        id="a field of a user's record that belongs to their organisation",
    ),
    pytest.param(
        """
        from openai import OpenAI

        client = OpenAI()
        RULES = "You answer questions about the product."

        def send(system, question):
            return client.chat.completions.create(
                model="m",
                messages=[
                    {"role": "system", "content": system},
                    {"role": "user", "content": question},
                ],
            )

        def main(question, conversation_id):
            return send(RULES + lookup_policy(conversation_id), question)
        """,
        id="a caller's argument passed through an unknown call first",
    ),
    pytest.param(
        """
        from anthropic import Anthropic

        class Bridge:
            def __init__(self):
                self.client = Anthropic()
                self.tools = []

            def connect(self, session):
                for tool in session.list_tools().tools:
                    self.tools.append({"name": tool.name, "input_schema": tool.inputSchema})
                self.tools.sort(key=lambda tool: tool["name"])

            def chat(self, messages):
                return self.client.messages.create(
                    model="m", max_tokens=100, tools=self.tools, messages=messages
                )
        """,
        id="a self attribute filled in a server's order and then sorted",
    ),
    pytest.param(
        """
        import random
        import dspy

        class Extractor(dspy.Module):
            def __init__(self, trainset):
                super().__init__()
                self.predict = dspy.Predict("email -> claim")
                self.predict.demos = random.Random(7).sample(trainset, k=3)
        """,
        id="a DSPy predictor's demos drawn by a seeded generator",
    ),
    pytest.param(
        """
        import json

        def flags_block(flags: set[str] | None) -> str:
            return json.dumps({flag: True for flag in flags or ()}, sort_keys=True)

        def build(messages, flags: set[str]):
            system = "Flags: " + flags_block(flags) + "\n" + ", ".join(sorted(flags))
            return {"model": "m", "messages": [{"role": "system", "content": system}, *messages]}
        """,
        id="a set parameter made the sorted keys of a dump, and sorted",
    ),
)


@pytest.mark.parametrize(("src", "expected"), FOUND)
def test_found(src, expected):
    assert _found(src) == expected


@pytest.mark.parametrize("src", QUIET)
def test_quiet(src):
    assert _found(src) == []
