"""Python prompt analysis on small real-world shapes: what is found, where, and what stays quiet.

Each case is a short module and the findings it must give, as ``(line, code)`` pairs.
"""

import textwrap

import pytest

from prefixlint import check_source

PYTHON_CODES = ("PFX1", "PFX2", "PFX3", "PFX4", "PFX5")
RULES = "Follow every rule of the handbook below, in order, without exception.\\n" * 80
# About 180 tokens of fixed instructions, one line each, indented like the cases below.
STATIC_BLOCK = "\n        ".join(
    f"{n}. Cite the passage you rely on, quote it exactly and keep the answer short."
    for n in range(1, 13)
)
ONE_LINE_BLOCK = " ".join(STATIC_BLOCK.split())


def _found(src: str) -> list[tuple[int, str]]:
    found = check_source(textwrap.dedent(src), "app.py", select=PYTHON_CODES)
    return sorted((d.span.line, d.code) for d in found)


FOUND = (
    pytest.param(
        """
        from datetime import datetime
        from .tools import Tool

        class ClockTool(Tool):
            name = "clock"

            def __init__(self, zones):
                self.description = f"Tells the time. Started {datetime.now()}."
                self.inputs = {"zone": {"description": f"One of {list(set(zones))}"}}
                super().__init__()
        """,
        [(9, "PFX101"), (10, "PFX201")],
        id="a tool's description and inputs set when it is made",
    ),
    pytest.param(
        """
        import os
        from litellm import ChatCompletionToolParam, ChatCompletionToolParamFunctionChunk

        def workspace():
            return os.getcwd()

        def editor_tool(path=None):
            if path is None:
                path = workspace()
            return ChatCompletionToolParam(
                type="function",
                function=ChatCompletionToolParamFunctionChunk(
                    name="editor",
                    description="Edit files.",
                    parameters={"properties": {"path": {"description": f"e.g. {path}/a.py"}}},
                ),
            )
        """,
        [(6, "PFX104")],
        id="a tool definition built by a helper, whatever request it joins later",
    ),
    pytest.param(
        """
        from datetime import date

        def calendar_tool():
            return {
                "name": "calendar",
                "description": f"Books meetings. Today is {date.today()}.",
                "input_schema": {"type": "object", "properties": {}},
            }
        """,
        [(7, "PFX101")],
        id="an Anthropic tool spelled out as a dict",
    ),
    pytest.param(
        """
        import time
        from jinja2 import Template
        from .utils import merge
        SYSTEM = "Started {{ started }}. You are a careful agent."

        class Agent:
            def __init__(self, model, config):
                self.model, self.config = model, config

            def run(self, task):
                bag = merge(self.config.model_dump(), {"started": time.time()}, {"task": task})
                system = Template(SYSTEM).render(**bag)
                return self.model.query([{"role": "system", "content": system}])
        """,
        [(12, "PFX101")],
        id="a bag of template variables given to a template written here",
    ),
    pytest.param(
        """
        import time
        from jinja2 import Template

        class Agent:
            def __init__(self, model, config):
                self.model, self.config = model, config

            def run(self, task):
                system = Template(self.config.system).render(**{"started": time.time()})
                return self.model.query([{"role": "system", "content": system}])
        """,
        [(10, "PFX101")],
        id="one value given by name to a template from the configuration",
    ),
    pytest.param(
        f"""
        import datetime
        from openai import OpenAI

        client = OpenAI()
        RULES = "{RULES}"

        def ask(question):
            system = f"Today is {{datetime.date.today()}}.\\n{{RULES}}"
            return client.chat.completions.create(
                model="m",
                messages=[
                    {{"role": "system", "content": system}},
                    {{"role": "user", "content": question}},
                ],
            )
        """,
        [(9, "PFX101")],
        id="a date before a static block is a date, not a layout finding",
    ),
    pytest.param(
        """
        import datetime
        from langchain_core.messages import SystemMessage

        def prompts():
            today = datetime.datetime.now().strftime("%B %d, %Y")
            first = SystemMessage(content=f"You answer questions. Today is {today}.")
            second = SystemMessage(content=f"You chat freely. Today is {today}.")
            return first, second
        """,
        [(6, "PFX101"), (8, "PFX101")],
        id="one stored date read into two system prompts: at the value, then at the read",
    ),
    pytest.param(
        """
        import platform
        from langchain_core.messages import SystemMessage

        def prompt():
            return SystemMessage(
                content=f"OS {platform.system()} on {platform.machine()}. Be careful."
            )
        """,
        [(7, "PFX104")],
        id="two machine values on one line are one finding",
    ),
    pytest.param(
        """
        import platform
        from langchain_core.messages import SystemMessage

        def prompt():
            if platform.system() == "Linux":
                version = platform.release()
            elif platform.system() == "Darwin":
                version = platform.mac_ver()[0]
            else:
                version = platform.version()
            return SystemMessage(content=f"You run on {version}. Be careful.")
        """,
        [(7, "PFX104")],
        id="one name given a machine value on each branch is one finding, at the first",
    ),
    pytest.param(
        """
        import sys
        from langchain_core.messages import SystemMessage

        def prompt():
            if sys.platform == "win32":
                name = "Windows"
            elif sys.platform == "darwin":
                name = "macOS"
            else:
                name = "Linux"
            return SystemMessage(content=f"You run on {name}. Use its shell.")
        """,
        [(6, "PFX104")],
        id="fixed texts chosen by a test of the machine: one finding, at the first test",
    ),
    pytest.param(
        """
        from datetime import datetime
        from langchain_core.messages import SystemMessage

        def prompt():
            if datetime.now().hour < 12:
                greeting = "Good morning"
            else:
                greeting = "Good evening"
            return SystemMessage(content=f"{greeting}! You answer billing questions.")
        """,
        [(6, "PFX101")],
        id="fixed texts chosen by the time of day",
    ),
    pytest.param(
        """
        import datetime
        from langchain_core.messages import SystemMessage

        class EnvInfo:
            def from_dict(self, data):
                self.date = data["date"]
            def from_env(self):
                self.date = datetime.datetime.now().isoformat()
            def prompt(self):
                return SystemMessage(content=f"Now: {self.date}. You run shell commands.")
        """,
        [(9, "PFX101")],
        id="one attribute given a value in two methods: one finding, at the made value",
    ),
    pytest.param(
        """
        import datetime
        from openai import OpenAI

        def ask(template, question):
            today = datetime.date.today().isoformat()
            system = template.replace("{date}", today)
            return OpenAI().chat.completions.create(model="m", messages=[
                {"role": "system", "content": system}, {"role": "user", "content": question}])
        """,
        [(6, "PFX101")],
        id="a date replacing a field: the date, not the field's name",
    ),
    pytest.param(
        """
        from pathlib import Path
        from langchain_core.messages import SystemMessage

        def prompt(workspace=None):
            folder = workspace or Path.cwd()
            return SystemMessage(content=f"You work in {folder}. Be careful.")
        """,
        [(6, "PFX104")],
        id="a folder made by a call and one only named like it are one finding, at the call",
    ),
    pytest.param(
        """
        from openai import OpenAI

        class Coder:
            def __init__(self):
                self.read_only = set()

            def add(self, name):
                self.read_only.add(name)

            def ask(self, question):
                listing = "Read-only files:\\n"
                for name in self.read_only:
                    listing += f"{name}\\n"
                return OpenAI().chat.completions.create(model="m", messages=[
                    {"role": "system", "content": listing + RULES},
                    {"role": "user", "content": question}])
        """.replace("RULES", repr(RULES)),
        [(6, "PFX201")],
        id="an empty set filled by add, listed by += in a loop",
    ),
    pytest.param(
        """
        from openai import OpenAI

        class Coder:
            def __init__(self):
                self.read_only = set()

            def add(self, name):
                self.read_only.add(name)

            def ask(self, question):
                listing = "Read-only files:\\n"
                for name in sorted(self.read_only):
                    listing += f"{name}\\n"
                return OpenAI().chat.completions.create(model="m", messages=[
                    {"role": "system", "content": listing + RULES},
                    {"role": "user", "content": question}])
        """.replace("RULES", repr(RULES)),
        [],
        id="the same set listed in sorted order",
    ),
    pytest.param(
        """
        import platform
        from langchain_core.messages import SystemMessage

        def prompt():
            parts = []
            parts.append(f"Release {platform.release()}.")
            parts.append(f"Machine {platform.machine()}.")
            return SystemMessage(content=" ".join(parts) + " Be careful.")
        """,
        [(7, "PFX104"), (8, "PFX104")],
        id="values appended to one list are findings of their own",
    ),
    pytest.param(
        """
        import os
        from camel.agents import ChatAgent

        WORKDIR = os.getcwd()

        def planner(model):
            return ChatAgent(f"You plan tasks. You work in {WORKDIR}.", model=model)
        """,
        [(5, "PFX104")],
        id="camel ChatAgent takes its system message first",
    ),
    pytest.param(
        """
        import json
        from langchain_core.messages import SystemMessage

        def prompt(schema):
            return SystemMessage(content="Answer in this schema: " + json.dumps(schema))
        """,
        [(6, "PFX202")],
        id="json.dumps of a mapping from elsewhere",
    ),
    pytest.param(
        """
        from app.schema import Message, UserMessage

        def add_view(memory: list[Message], view: str) -> list[Message]:
            for index, message in enumerate(memory):
                if "opened" in message.content:
                    memory.insert(index + 1, UserMessage(content=view))
                    break
            return memory
        """,
        [(7, "PFX501")],
        id="a list annotated as messages gets a message inserted in its middle",
    ),
    pytest.param(
        """
        from llama_index.core.llms import ChatMessage

        def drop_tools(chat_history: list[ChatMessage]) -> list[ChatMessage]:
            history = chat_history.copy()
            i = 0
            while i < len(history):
                if history[i].role == "tool":
                    history.pop(i)
                    if i > 0 and history[i - 1].role == "assistant":
                        history.pop(i - 1)
                else:
                    i += 1
            return history
        """,
        [(9, "PFX501")],
        id="a copy of the history returned with messages popped: one finding per list",
    ),
    pytest.param(
        """
        from llama_index.core.llms import ChatMessage, TextBlock

        def condense(chat_history: list[ChatMessage], summary: str) -> list[ChatMessage]:
            condensed = chat_history.copy()
            for index, message in enumerate(condensed):
                if message.role == "tool":
                    condensed[index].blocks = [TextBlock(text=summary)]
            return condensed
        """,
        [(8, "PFX501")],
        id="an older message's content blocks replaced",
    ),
    pytest.param(
        """
        class Agent:
            def __init__(self):
                self.messages = [{"role": "system", "content": "Be brief."}]

            def add_knowledge(self, knowledge: str):
                if isinstance(self.messages[0]["content"], str):
                    self.messages[0]["content"] += knowledge
                else:
                    self.messages[0]["content"] += [{"text": knowledge}]
        """,
        [(8, "PFX501")],
        id="the same message rewritten on both branches of an if: one finding",
    ),
    pytest.param(
        """
        def retrieve(records, window_size):
            # the chat history to send: the system message and the newest records
            preserved_messages = records[:1]
            sliding_messages = records[1:]
            kept = [] if window_size == 0 else sliding_messages[-window_size:]
            return preserved_messages + kept
        """,
        [(6, "PFX502")],
        id="a configured window joined to the system message",
    ),
    pytest.param(
        """
        class Chat:
            def window(self, budget):
                start = max(1, len(self.messages) - budget)
                return [self.messages[0]] + self.messages[start:]
        """,
        [(5, "PFX502")],
        id="the system message kept, a moving start after it",
    ),
    pytest.param(
        """
        class Chat:
            def compact(self, summary):
                cut = len(self.messages) - 6
                summary_message = {"role": "user", "content": summary}
                self.messages = [self.messages[0]] + [summary_message] + self.messages[cut:]
        """,
        [(6, "PFX502")],
        id="older turns replaced by a summary after the system message",
    ),
    pytest.param(
        f"""
        TEMPLATES = {{
            "plain": \"\"\"
        Question: {{question}}
        Context: {{context}}
        {STATIC_BLOCK}\"\"\",
        }}

        def encode(question, chunk, key="plain"):
            prompt = TEMPLATES[key].format(question=question, context=str(chunk))
            return [
                {{"role": "system", "content": "You answer from the context."}},
                {{"role": "user", "content": prompt}},
            ]
        """,
        [(4, "PFX301")],
        id="a str.format template: the question field before the fixed instructions",
    ),
    pytest.param(
        f"""
        from camel.prompts import TextPrompt

        USER_PROMPT = TextPrompt(\"\"\"You instruct me.
        Here is the task: {{task}}. Never forget our task!
        {STATIC_BLOCK}\"\"\")
        """,
        [(5, "PFX301")],
        id="a template named for the user turn",
    ),
    pytest.param(
        f"""
        from langchain_core.prompts import ChatPromptTemplate

        PROMPT = ChatPromptTemplate.from_messages(
            [{{"role": "system", "content": "Answer {{question}} using:\\n{ONE_LINE_BLOCK}"}}]
        )
        """,
        [(5, "PFX301")],
        id="a message dict given to a template maker is a template",
    ),
    pytest.param(
        f"""
        def encode(question, api):
            prompt = question + "\\nCall the API in " + str(api) + "{ONE_LINE_BLOCK}"
            return [{{"role": "user", "content": prompt}}]
        """,
        [(3, "PFX301")],
        id="concatenation: the question, another value, then the fixed text",
    ),
    pytest.param(
        """
        SEMANTIC_QUERY_REPHRASE_SYSTEM_PROMPT = \"\"\"
        You rewrite the last user message into a standalone query.

        The current date is {current_date}.
        \"\"\"
        """,
        [(5, "PFX101")],
        id="a system prompt template with a date field (its name also says query)",
    ),
    pytest.param(
        """
        BASIC_INFO = "The user is {user_name} ({user_email})."

        def build_system_prompt(base, ctx):
            return base + "\\n" + BASIC_INFO.format(
                user_name=ctx.info.name or "",
                user_email=ctx.info.email or "",
            )
        """,
        [(6, "PFX103")],
        id="format keywords that name per-user values: one finding per call",
    ),
    pytest.param(
        """
        def generate_agent_instructions(template: str, user_name: str) -> str:
            user_context = f"You are assisting {user_name}."
            content = template
            content = content.replace("{{USER_CONTEXT}}", user_context)
            content = content.replace("{{MODEL}}", "default")
            return content
        """,
        [(3, "PFX103")],
        id="str.replace chains carry the value into the prompt",
    ),
    pytest.param(
        """
        import random

        ENSEMBLE_PROMPT = "Pick the best solution.\\n{solutions}\\nQuestion: {question}"

        class Ensemble:
            @staticmethod
            def shuffle(solutions):
                shuffled = solutions.copy()
                random.shuffle(shuffled)
                return shuffled, {chr(65 + i): solutions.index(s) for i, s in enumerate(shuffled)}

            def ask(self, solutions, question):
                shuffled, mapping = self.shuffle(solutions)
                text = ""
                for index, solution in enumerate(shuffled):
                    text += f"{chr(65 + index)}: {solution}\\n"
                prompt = ENSEMBLE_PROMPT.format(solutions=text, question=question)
                return prompt
        """,
        [(10, "PFX203")],
        id="a shuffle returned by a helper, also read through an unknown call",
    ),
    pytest.param(
        """
        import os

        class Loop:
            def step(self):
                self.system_prompt = self.template.format(listing=str(os.listdir(".")))
        """,
        [(6, "PFX201")],
        id="str() of a directory listing in the system prompt",
    ),
    pytest.param(
        """
        import os

        def tools_text(root):
            skills = {}
            for name in os.listdir(root):
                skills[name] = {"name": name}
            return [{"role": "system", "content": "Skills: " + ", ".join(skills)}]
        """,
        [(6, "PFX201")],
        id="a dict filled in directory order and listed in the prompt",
    ),
    pytest.param(
        """
        import datetime
        from langchain_core.prompts import ChatPromptTemplate, SystemMessagePromptTemplate

        def define():
            prompts = {}
            today = datetime.date.today()
            system = f"You are Quivr. Today is {today}."
            prompts["rag"] = ChatPromptTemplate.from_messages(
                [SystemMessagePromptTemplate.from_template(system)]
            )
            return prompts
        """,
        [(7, "PFX101")],
        id="SystemMessagePromptTemplate.from_template, inside a registry the function returns",
    ),
    pytest.param(
        """
        import platform
        from langchain_core.messages import SystemMessage

        def prompt():
            return SystemMessage(
                content=f\"\"\"You run on {platform.system()}
        with {platform.machine()}. Be careful.\"\"\"
            )
        """,
        [(7, "PFX104")],
        id="machine values of one module in one statement are one finding",
    ),
    pytest.param(
        """
        from pathlib import Path

        class SkillTool:
            def get_tools(self, tool):
                schema = tool.get_openai_tool_schema()
                schema["function"]["description"] = f"Skills live in {Path.home()}/skills."
                return [tool]

        class WeatherTool(BaseTool):
            description = f"Weather, cached under {Path.cwd()}."
        """,
        [(7, "PFX104"), (11, "PFX104")],
        id="a tool schema's description and a tool class's description",
    ),
    pytest.param(
        """
        class Server:
            async def list_tools(self):
                response = await self.session.list_tools()
                return [tool for tool in response.tools]

        async def start(servers):
            tools = []
            for server in servers:
                tools.extend(await server.list_tools())
            text = "\\n".join(tool.name for tool in tools)
            return [{"role": "system", "content": f"Tools:\\n{text}\\nUse them well."}]
        """,
        [(4, "PFX201")],
        id="a wrapper's own list_tools(): reported once, at the MCP call",
    ),
    pytest.param(
        """
        import datetime

        def env_context():
            now = datetime.datetime.now()
            return f"- Current time: {now:%Y-%m-%d %H:%M:%S}"

        def compose(format_chat_message, history):
            return [format_chat_message(role="system", message=f"Rules.\\n{env_context()}")]
        """,
        [(5, "PFX101")],
        id="a project's own message maker called with role='system'",
    ),
    pytest.param(
        """
        import time

        def prompt(create_chat_message, rules):
            return [create_chat_message("system", f"{rules}\\nIt is {time.ctime()}.")]
        """,
        [(5, "PFX101")],
        id="a message maker called with ('system', text)",
    ),
    pytest.param(
        """
        import datetime

        def replace_date_tag(prompt_str: str) -> str:
            today = datetime.date.today().strftime("%B %d, %Y")
            prompt_str = prompt_str.replace("[[CURRENT_DATE]]", today)
            return prompt_str
        """,
        [(5, "PFX101")],
        id="a function that returns its prompt argument rewritten returns a prompt",
    ),
    pytest.param(
        """
        import json

        def prepare(prompt_messages, functions):
            messages = [message.raw() for message in prompt_messages]
            messages[0]["content"] += "\\nTools:\\n" + json.dumps(functions, indent=2)
            return messages
        """,
        [(6, "PFX202")],
        id="text appended to the first message of a conversation",
    ),
    pytest.param(
        """
        def schema_message(db, collection):
            query = f"FOR doc IN {collection} LIMIT 5 RETURN doc"
            fields = []
            for doc in db.aql.execute(query):
                fields.append(", ".join(doc))
            return [{"role": "system", "content": "Fields:\\n" + "\\n".join(fields)}]
        """,
        [(3, "PFX201")],
        id="an AQL query without SORT, run through a name",
    ),
    pytest.param(
        """
        import os
        from langchain_core.messages import SystemMessage

        def prompt(rules):
            return SystemMessage(content=os.linesep.join(rules) + os.linesep + "Be brief.")
        """,
        [(6, "PFX401")],
        id="os.linesep joins the system prompt",
    ),
    pytest.param(
        """
        import datetime
        from semantic_kernel.contents import ChatHistory

        def history():
            chat = ChatHistory()
            chat.add_system_message(f"Now: {datetime.datetime.now()}. Be brief.")
            return chat
        """,
        [(7, "PFX101")],
        id="Semantic Kernel add_system_message",
    ),
    pytest.param(
        """
        import uuid
        from haystack.dataclasses import ChatMessage

        def messages(question):
            return [
                ChatMessage.from_system(f"Session {uuid.uuid4()}. Be brief."),
                ChatMessage.from_user(question),
            ]
        """,
        [(7, "PFX102")],
        id="Haystack ChatMessage.from_system",
    ),
    pytest.param(
        """
        import os
        from llama_index.core.llms import ChatMessage, MessageRole

        def messages():
            return [ChatMessage(role=MessageRole.SYSTEM, content=f"cwd {os.getcwd()}. Be brief.")]
        """,
        [(6, "PFX104")],
        id="LlamaIndex ChatMessage with MessageRole.SYSTEM",
    ),
    pytest.param(
        """
        import datetime
        from openai import OpenAI

        client = OpenAI()

        def ask(question):
            return client.chat.completions.with_raw_response.create(
                model="m",
                messages=[
                    {"role": "system", "content": f"Time {datetime.datetime.now()}. Be brief."},
                    {"role": "user", "content": question},
                ],
            )
        """,
        [(11, "PFX101")],
        id="OpenAI with_raw_response",
    ),
    pytest.param(
        """
        import random
        from langchain_core.messages import SystemMessage

        def examples(pool, name):
            rng = random.Random(hash(name))
            return SystemMessage(content="Examples:\\n" + "\\n".join(rng.sample(pool, 3)))
        """,
        [(7, "PFX203")],
        id="a generator seeded with hash(str), salted per process",
    ),
    pytest.param(
        """
        import locale
        from langchain_core.messages import SystemMessage

        def prompt():
            return SystemMessage(content=f"Answer in the locale {locale.getlocale()[0]}. Be brief.")
        """,
        [(6, "PFX103")],
        id="the process locale",
    ),
    pytest.param(
        """
        from langchain_core.messages import SystemMessage

        def prompt(rules, compact):
            sep = "\\n" if compact else "\\n\\n"
            return SystemMessage(content=sep.join(rules) + sep + "Be brief.")
        """,
        [(5, "PFX402")],
        id="one blank line on one path, none on the other",
    ),
    pytest.param(
        """
        from langchain_core.messages import SystemMessage

        def prompt(rules, legacy):
            if legacy:
                header = f"Rules:\\n{rules}\\n"
            else:
                header = f"Rules:\\n{rules}  \\n"
            return SystemMessage(content=header + "Be brief.")
        """,
        [(8, "PFX402")],
        id="trailing spaces on one branch of an if",
    ),
    pytest.param(
        """
        from app.schema import Message, UserMessage

        def mask_old(memory: list[Message], keep=5) -> list[Message]:
            kept = []
            seen = 0
            for message in reversed(memory):
                if "Editor" in message.content:
                    seen += 1
                    if seen > keep:
                        message = UserMessage(content="[output elided]")
                kept.append(message)
            kept.reverse()
            return kept
        """,
        [(11, "PFX501")],
        id="older messages replaced by masked copies",
    ),
    pytest.param(
        """
        import json

        def evaluate(trace):
            args = trace.get("args", {})
            prompt = [
                {"role": "system", "content": f"Arguments: {json.dumps(args)}"},
                {"role": "user", "content": "Grade them."},
            ]
            return prompt
        """,
        [(7, "PFX202")],
        id="a message list bound to a prompt name keeps its system message",
    ),
    pytest.param(
        """
        import json

        def elicit(llm, console, schema):
            prompt = "\\n".join(["Schema:", json.dumps(schema.fields), "Reply with JSON."])
            console.print(prompt)
            return llm.invoke(prompt)
        """,
        [(5, "PFX202")],
        id="a prompt shown to a person and also sent",
    ),
    pytest.param(
        """
        from agents import Agent

        class Session:
            def __init__(self, user):
                self.user = user

            @property
            def user_name(self):
                return self.user.name

            def agent(self):
                return Agent(name="a", instructions=f"You help {self.user_name}.")
        """,
        [(10, "PFX103")],
        id="a property named like a per-user value is its value",
    ),
    pytest.param(
        """
        class Coder:
            def __init__(self, fnames):
                self.abs_fnames = set(fnames)
            def files_message(self):
                text = "These files are in the chat:\\n"
                for fname in self.abs_fnames:
                    text += f"{fname}\\n"
                return {"role": "user", "content": text}
            def ask(self, question):
                messages = [{"role": "system", "content": "You edit code."}, self.files_message()]
                messages.append({"role": "user", "content": question})
                return client.chat.completions.create(model="m", messages=messages)
        """,
        [(4, "PFX201")],
        id="a helper's message before the question appended after it",
    ),
    pytest.param(
        """
        import datetime
        def ask(question):
            messages = [{"role": "system", "content": "You answer questions."}]
            messages += [{"role": "user", "content": f"Now: {datetime.datetime.now()}"}]
            messages.extend([{"role": "assistant", "content": "Noted."}])
            messages.append({"role": "user", "content": question})
            return client.chat.completions.create(model="m", messages=messages)
        """,
        [(5, "PFX101")],
        id="messages added to the list before the question is appended",
    ),
    pytest.param(
        """
        from datetime import datetime
        class Bot:
            system_prompt = "You are a bot."
            @property
            def full_system(self):
                return self.system_prompt + f"Now: {datetime.now():%H:%M:%S}"
            def go(self, q):
                messages = [
                    {"role": "system", "content": self.full_system},
                    {"role": "user", "content": q},
                ]
                return client.chat.completions.create(model="m", messages=messages)
        """,
        [(7, "PFX101")],
        id="a property of the class read as the system prompt",
    ),
    pytest.param(
        """
        from crewai import Agent
        from datetime import datetime
        researcher = Agent(
            role="Researcher",
            goal="Find facts",
            backstory=f"You are an expert researcher. Today is {datetime.now():%Y-%m-%d %H:%M}.",
        )
        """,
        [(7, "PFX101")],
        id="a crewAI agent's backstory",
    ),
    pytest.param(
        """
        from langgraph.prebuilt import create_react_agent
        import uuid
        def build(model, tools):
            return create_react_agent(model, tools, prompt=f"Run {uuid.uuid4()}. Use the tools.")
        """,
        [(5, "PFX102")],
        id="the prompt of a LangGraph ReAct agent",
    ),
    pytest.param(
        """
        import boto3
        from datetime import datetime
        bedrock = boto3.client("bedrock-runtime")
        def ask(q):
            return bedrock.converse(
                modelId="anthropic.claude-3-sonnet",
                system=[{"text": f"It is {datetime.now()}."}],
                messages=[{"role": "user", "content": [{"text": q}]}],
            )
        """,
        [(8, "PFX101")],
        id="the system blocks of a Bedrock Converse request",
    ),
    pytest.param(
        """
        from datetime import datetime
        USER_MEMORY_EXTRACTION_PROMPT = f\"\"\"You extract facts about the user.
        Today's date is {datetime.now().strftime("%Y-%m-%d")}.
        \"\"\"
        def extract(conversation):
            return client.chat.completions.create(
                model="m",
                messages=[
                    {"role": "system", "content": USER_MEMORY_EXTRACTION_PROMPT},
                    {"role": "user", "content": conversation},
                ],
            )
        """,
        [(4, "PFX101")],
        id="a constant named for the user's memory sent as the system prompt",
    ),
)


QUIET = (
    pytest.param(
        """
        from .runtime import resolve

        async def offer(model, instructions, run_id, conversation_id):
            async with resolve(instructions=instructions, run_id=run_id) as resolved:
                return client.responses.create(
                    model="m", instructions=resolved.instructions, input="x"
                )
        """,
        id="a field of an object made by an unknown call is what it was given for that field",
    ),
    pytest.param(
        """
        class RealtimeModel:
            def session_config(self, instructions):
                rate = self.profile.get("rate", 24000)
                return f"{instructions} at {rate}"

            def start(self, client, text):
                return client.responses.create(
                    model="m", instructions=self.session_config(text), input="x"
                )
        """,
        id="a model's own profile, not a user's",
    ),
    pytest.param(
        """
        from .graph import State, resolve_capabilities

        def instructions_for(run_id, base):
            state = State(run_id=resolve_id(run_id))
            caps = resolve_capabilities(state)
            return client.responses.create(model="m", instructions=base + str(caps), input="q")
        """,
        id="an id guessed from its name, through unknown calls one into another",
    ),
    pytest.param(
        """
        import random

        def choice(names):
            return {"type": "function", "function": {"name": random.choice(names)}}
        """,
        id="a tool choice, not a tool definition",
    ),
    pytest.param(
        """
        import os

        def search_tool(config):
            return {
                "type": "function",
                "function": {
                    "name": config.name,
                    "description": "Searches the docs.",
                    "parameters": {"type": "object", "properties": {}},
                },
            }

        def log_tool_use():
            print(os.getcwd())
        """,
        id="a tool definition of fixed texts",
    ),
    pytest.param(
        """
        import time
        from jinja2 import Template
        from .utils import merge

        class Agent:
            def __init__(self, model, env, config):
                self.model, self.env, self.config = model, env, config
                self.messages = []
                self.start = time.time()

            def template_vars(self):
                return merge(
                    self.config.model_dump(),
                    self.env.template_vars(),
                    {"elapsed": int(time.time() - self.start)},
                )

            def render(self, template):
                return Template(template).render(**self.template_vars())

            def run(self, task):
                self.messages = [{"role": "system", "content": self.render(self.config.system)}]
                return self.model.query(self.messages)
        """,
        id="a bag of template variables offered to a template from the configuration",
    ),
    pytest.param(
        """
        import boto3
        from datetime import datetime
        bedrock = boto3.client("bedrock-runtime")
        def ask(q):
            return bedrock.converse(
                modelId="anthropic.claude-3-sonnet",
                system=[{"text": "You answer briefly."}],
                messages=[{"role": "user", "content": [{"text": f"{datetime.now()}: {q}"}]}],
            )
        """,
        id="the time in the last user message of a Bedrock Converse request",
    ),
    pytest.param(
        """
        from crewai import Agent, Task
        def plan(topic):
            agent = Agent(role="Researcher", goal="Find facts", backstory="An expert.")
            return Task(description=f"Research {topic}", agent=agent)
        """,
        id="a crewAI agent with fixed texts and the topic in its task",
    ),
    pytest.param(
        """
        from datetime import datetime
        class Bot:
            system_prompt = "You are a bot."
            @property
            def full_system(self):
                return self.system_prompt + "Answer briefly."
            @property
            def started(self):
                return datetime.now()
            def go(self, q):
                messages = [
                    {"role": "system", "content": self.full_system},
                    {"role": "user", "content": f"{self.started}: {q}"},
                ]
                return client.chat.completions.create(model="m", messages=messages)
        """,
        id="a fixed property in the system prompt, a clock property in the question",
    ),
    pytest.param(
        """
        from langchain_core.messages import SystemMessage

        def prompt(mode, user_id):
            if mode == "fast":
                style = "brief"
            else:
                style = "thorough"
            if user_id:
                tone = "warm"
            else:
                tone = "neutral"
            return SystemMessage(content=f"Be {style} and {tone}. You answer billing questions.")
        """,
        id="fixed texts chosen by a setting, or by a test of a value only named like a user's",
    ),
    pytest.param(
        """
        from agents import Agent

        class Toolkit:
            def __init__(self):
                self.tools = [self.get_user_info, self.run_shell]

            def get_user_info(self, name):
                return name

            def run_shell(self, command):
                return command

            def agent(self):
                return Agent(name="a", instructions="You help.", tools=self.tools)
        """,
        id="methods named like volatile values, listed as tools",
    ),
    pytest.param(
        """
        import os
        from agents import Agent, HostedMCPTool

        def agent():
            token = os.environ["CALENDAR_TOKEN"]
            return Agent(
                name="Assistant",
                instructions="You help with calendars.",
                tools=[HostedMCPTool(tool_config={"type": "mcp", "authorization": token})],
            )
        """,
        id="a credential in a tool's config",
    ),
    pytest.param(
        """
        import os
        from camel.agents import ChatAgent
        from camel.toolkits import NoteToolkit

        def planner(model):
            return ChatAgent(
                "You plan tasks.",
                model=model,
                tools=NoteToolkit(working_directory=os.getcwd()).get_tools(),
            )
        """,
        id="a working directory passed to a toolkit's constructor",
    ),
    pytest.param(
        """
        import json
        from langchain_core.messages import SystemMessage

        def prompt(tools):
            listing = json.dumps({tool.name: tool.schema for tool in tools})
            return SystemMessage(content="Tools: " + listing)
        """,
        id="json.dumps of a dict comprehension: keys in the order of its input",
    ),
    pytest.param(
        """
        import json
        from langchain_core.messages import SystemMessage

        class Coder:
            def __init__(self, data):
                self.schema = json.loads(data["schema"])

            def prompt(self):
                return SystemMessage(content="Reply as: " + json.dumps(self.schema))
        """,
        id="json decoded and encoded again keeps the text's key order",
    ),
    pytest.param(
        """
        from app.schema import Message

        def build(question: str) -> list[Message]:
            messages: list[Message] = [Message(role="system", content="Be brief.")]
            working = messages.copy()
            working.insert(1, Message(role="user", content=question))
            return working
        """,
        id="a copy of a list built fresh on every call",
    ),
    pytest.param(
        """
        def current_turn(messages):
            if messages[-1].type == "tool":
                final_messages = messages[-3:]
            else:
                final_messages = messages[-1:]
            return final_messages
        """,
        id="the last messages of the turn being answered",
    ),
    pytest.param(
        """
        class Chat:
            def with_reminder(self, reminder):
                return self.messages[:1] + [reminder] + self.messages[1:]
        """,
        id="every message kept after the head",
    ),
    pytest.param(
        """
        def with_extra(prompt_messages, extra, at):
            return prompt_messages[:at] + extra + prompt_messages[at:]
        """,
        id="messages spliced in at one index, none dropped",
    ),
    pytest.param(
        """
        def render_prompt(prompt_str: str):
            if not prompt_str:
                return ()
            return (prompt_str.strip(),)
        """,
        id="a function returning an empty tuple (no crash)",
    ),
    pytest.param(
        """
        import datetime
        import logging
        import uuid
        from openai import OpenAI

        client = OpenAI()
        SYSTEM_PROMPT = "You are a support assistant. Answer briefly."

        def ask(question, user_id):
            request_id = str(uuid.uuid4())
            logging.info("request %s at %s", request_id, datetime.datetime.now())
            return client.chat.completions.create(
                model="gpt-4o",
                messages=[
                    {"role": "system", "content": SYSTEM_PROMPT},
                    {"role": "user", "content": f"{question}\\n(asked {datetime.date.today()})"},
                ],
                metadata={"request_id": request_id, "user": user_id},
                extra_headers={"Idempotency-Key": request_id},
                user=user_id,
            )
        """,
        id="ids and times only in logs, metadata, headers and the last user turn",
    ),
    pytest.param(
        """
        from app.schema import Message

        def render(memory: list[Message]) -> list[str]:
            lines = []
            for message in memory:
                if message.role == "tool":
                    message = Message(role="tool", content=message.content.strip())
                lines.append(str(message))
            return lines
        """,
        id="messages rebuilt for display only: not a history",
    ),
    pytest.param(
        f"""
        PROMPT = \"\"\"{STATIC_BLOCK}
        Question: {{question}}
        \"\"\"

        def encode(question):
            return [{{"role": "user", "content": PROMPT.format(question=question)}}]
        """,
        id="the question after the fixed instructions",
    ),
    pytest.param(
        """
        PROMPT = "Question: {question}\\nAnswer in one sentence, citing the context."

        def encode(question):
            return [{"role": "user", "content": PROMPT.format(question=question)}]
        """,
        id="a short fixed tail after the question",
    ),
    pytest.param(
        """
        import datetime
        from langchain_core.messages import SystemMessage

        SYSTEM_PROMPT = "You help. The current date is {current_date}."

        def messages(question):
            return [SystemMessage(content=SYSTEM_PROMPT.format(current_date="2024-01-01"))]
        """,
        id="a template's date field filled with a fixed value",
    ),
    pytest.param(
        """
        import os

        class Loop:
            def step(self):
                self.system_prompt = self.template.format(listing=str(sorted(os.listdir("."))))
        """,
        id="str() of a sorted directory listing",
    ),
    pytest.param(
        """
        import random

        def pick(examples):
            rng = random.Random(42)
            chosen = rng.sample(examples, 3)
            SYSTEM_PROMPT = "Examples:\\n" + "\\n".join(chosen)
            return SYSTEM_PROMPT
        """,
        id="examples drawn with a seeded generator",
    ),
    pytest.param(
        """
        from pathlib import Path

        def roots(workdir):
            return [
                ("repo", workdir / "skills"),
                ("user", Path.home() / "skills"),
                ("system", Path("/usr/share/skills")),
            ]
        """,
        id="(scope, path) pairs are not a conversation",
    ),
    pytest.param(
        """
        import datetime

        def log_entry(make_record, text):
            return make_record(role="user", message=f"{datetime.datetime.now()}: {text}")
        """,
        id="a message maker called with the user role",
    ),
    pytest.param(
        """
        import datetime

        def stamp(messages):
            messages[-1]["content"] += f" (sent {datetime.datetime.now():%H:%M})"
            return messages
        """,
        id="text appended to the newest message",
    ),
    pytest.param(
        """
        def schema_message(db, collection):
            query = f"FOR doc IN {collection} SORT doc._key LIMIT 5 RETURN doc"
            fields = []
            for doc in db.aql.execute(query):
                fields.append(doc["name"])
            return [{"role": "system", "content": "Fields:\\n" + "\\n".join(fields)}]
        """,
        id="an AQL query with SORT",
    ),
    pytest.param(
        """
        from langchain_core.messages import SystemMessage

        def prompt(rules, numbered):
            sep = "\\n- " if numbered else "\\n* "
            return SystemMessage(content=sep.join(rules))
        """,
        id="separators that differ in more than whitespace",
    ),
    pytest.param(
        """
        import logging
        import os

        def report(lines):
            logging.info(os.linesep.join(lines))
        """,
        id="os.linesep only in a log line",
    ),
    pytest.param(
        """
        import datetime
        import os

        def backup(path):
            os.system(f"tar czf backup-{datetime.datetime.now():%s}.tgz {path}")
        """,
        id="os.system is not a system message",
    ),
    pytest.param(
        """
        import time

        def audit(events, detail):
            events.emit("system", f"{time.ctime()}: {detail}")
        """,
        id="an event named system is not a message",
    ),
    pytest.param(
        """
        import json

        def evaluate(trace):
            args = trace.get("args", {})
            prompt = [
                {"role": "system", "content": "You grade tool calls. Be strict and fair."},
                {"role": "user", "content": f"Arguments: {json.dumps(args)}"},
            ]
            return prompt
        """,
        id="the last user message of a list bound to a prompt name",
    ),
    pytest.param(
        """
        import json
        import sys

        def elicit(schema):
            prompt = "\\n".join(["Schema:", json.dumps(schema.fields), "Reply with JSON."])
            sys.stdout.write(prompt)
            return input()
        """,
        id="a prompt only shown to a person",
    ),
    pytest.param(
        f"""
        from openai import OpenAI

        def ask(question):
            return OpenAI().chat.completions.create(
                model="m",
                messages=[
                    {{
                        "role": "system",
                        "content": "Fields: {{question}}, {{profile}}.\\n{ONE_LINE_BLOCK}",
                    }},
                    {{"role": "user", "content": question}},
                ],
            )
        """,
        id="braces in a message written out in place are text: nothing formats them",
    ),
    pytest.param(
        f"""
        from langchain_core.messages import SystemMessage

        PROMPT = SystemMessage(content="Reply as {{user_name}}: {{answer}}.\\n{ONE_LINE_BLOCK}")
        """,
        id="braces in a message class's content are text",
    ),
    pytest.param(
        """
        import json
        from .utils import serialize_for_json

        def instructions(fields_with_values):
            d = {k.name: v for k, v in fields_with_values.items()}
            text = json.dumps(serialize_for_json(d), indent=2)
            return [{"role": "system", "content": text}]
        """,
        id="a helper given a dict built in its input's order keeps that order",
    ),
    pytest.param(
        """
        import os
        import sys

        def main(complete_var, prompt=None):
            instruction = os.environ.get(complete_var)
            if not instruction:
                return
            sys.exit(complete(instruction))
        """,
        id="a name that says prompt holding one environment variable whole is a setting",
    ),
    pytest.param(
        """
        import json

        def respond(agent):
            while True:
                system = agent.system_message
                for language in agent.languages:
                    system += "\\n\\n" + language.system_message
                reply = client.chat.completions.create(
                    model="m", messages=[{"role": "system", "content": system}, *agent.messages]
                )
                code = json.loads(reply.choices[0].message.content)
                language = code["language"]
                agent.run(language, code["code"])
        """,
        id="a loop's body reads what the loop bound, not a later assignment of the name",
    ),
    pytest.param(
        """
        import datetime
        class Bot:
            def now_message(self):
                return {"role": "user", "content": f"Now: {datetime.datetime.now()}"}
            def ask(self):
                messages = [{"role": "system", "content": "You answer questions."}]
                messages.append(self.now_message())
                return client.chat.completions.create(model="m", messages=messages)
        """,
        id="a helper's message that is the last user turn",
    ),
    pytest.param(
        """
        import datetime
        def ask(question):
            messages = [{"role": "system", "content": "You answer questions."}]
            reply = client.chat.completions.create(model="m", messages=messages)
            messages.append({"role": "user", "content": f"Now: {datetime.datetime.now()}"})
            messages.append({"role": "user", "content": question})
            return reply
        """,
        id="messages appended after the request are not in it",
    ),
)


@pytest.mark.parametrize(("src", "expected"), FOUND)
def test_found(src, expected):
    assert _found(src) == expected


@pytest.mark.parametrize("src", QUIET)
def test_quiet(src):
    assert _found(src) == []
