"""Conversations kept between requests and the edits that rewrite their middle (PFX501,
PFX502, PFX504): each case is a short module and the ``(line, code)`` findings it must give.
"""

import textwrap

import pytest

from prefixlint import check_source

HISTORY_CODES = ("PFX501", "PFX502", "PFX504")


def _found(src: str) -> list[tuple[int, str]]:
    found = check_source(textwrap.dedent(src), "app.py", select=HISTORY_CODES)
    return sorted((d.span.line, d.code) for d in found)


_PAIRS = """
class Memory:
    def record(self, question, answer):
        self.turns.append({{"role": "user", "content": question}})
        self.turns.append({{"role": "assistant", "content": answer}})
        if len(self.turns) > {bound}:
            self.turns = self.turns[{start}:]
    def send(self, text):
        messages = [*self.turns, {{"role": "user", "content": text}}]
        return client.chat.completions.create(model="m", messages=messages)
"""

_AGENT = """
class Agent:
    def __init__(self, system):
        self.messages = [{{"role": "system", "content": system}}]
    def run(self, task, summary):
        self.messages.append({{"role": "user", "content": task}})
        r = client.chat.completions.create(model="m", messages=self.messages)
        self.messages.append(r.choices[0].message)
        {edit}
"""

_REBUILT = """
def history_for_llm(history, keep=3):
    out = []
    for i, entry in enumerate(history):
        {body}
    return out
"""

FOUND = (
    pytest.param(
        """
        from .condenser import Condenser, View

        class RecentEventsCondenser(Condenser):
            def __init__(self, keep_first=1, max_events=10):
                self.keep_first, self.max_events = keep_first, max_events

            def condense(self, view):
                head = view[: self.keep_first]
                tail = view[-(self.max_events - len(head)) :]
                return View(events=head + tail)
        """,
        [(10, "PFX502")],
        id="a condenser keeps the first events and a window of the newest",
    ),
    pytest.param(
        """
        from .condenser import Condenser, Masked

        class MaskingCondenser(Condenser):
            def condense(self, view):
                results = []
                for i, event in enumerate(view):
                    if i < len(view) - 5:
                        results.append(Masked("<MASKED>"))
                    else:
                        results.append(event)
                return results
        """,
        [(9, "PFX501")],
        id="a condenser masks the events before a window of the newest",
    ),
    pytest.param(
        """
        def history_for_llm(history, keep=3):
            out = []
            for i, message in enumerate(history):
                if i >= len(history) - keep:
                    out.append(message)
                else:
                    out.append({"role": message["role"], "content": "(omitted)"})
            return out
        """,
        [(8, "PFX501")],
        id="a copy of the history with its older messages replaced",
    ),
    pytest.param(
        _REBUILT.format(
            body="""if i < len(history) - keep:
            entry = dict(entry)
            entry["content"] = "(output omitted)"
        out.append(entry)"""
        ),
        [(7, "PFX501")],
        id="a copy of the history rebuilt with the older messages masked",
    ),
    pytest.param(
        _REBUILT.format(
            body="""if i in omitted(history):
            data = entry.copy()
            data["content"] = entry["content"][:100]
            out.append(data)
        else:
            out.append(entry)"""
        ),
        [(7, "PFX501")],
        id="a copy of the history rebuilt with the messages at chosen positions cut",
    ),
    pytest.param(
        _PAIRS.format(bound="self.pairs * 2", start="-self.pairs * 2"),
        [(7, "PFX502")],
        id="a window of pairs of messages at the bound it is kept to",
    ),
    pytest.param(
        _PAIRS.format(bound="2 * self.pairs", start="2 * -self.pairs"),
        [(7, "PFX502")],
        id="a window of pairs written with the factor first",
    ),
    pytest.param(
        """
        LIMIT = 10
        class Bot:
            def ask(self, text):
                self.history.append({"role": "user", "content": text})
                if len(self.history) > LIMIT + 1:
                    self.history = [self.history[0]] + self.history[-LIMIT:]
                return client.chat.completions.create(model="m", messages=self.history)
        """,
        [(7, "PFX502")],
        id="head and window under a bound one above the window",
    ),
    pytest.param(
        """
        class Bot:
            def ask(self, text):
                self.history.append({"role": "user", "content": text})
                if len(self.history) > self.limit + 1:
                    self.history = [self.history[0]] + self.history[-self.limit:]
                return client.chat.completions.create(model="m", messages=self.history)
        """,
        [(6, "PFX502")],
        id="bound of unknown size one above the window",
    ),
    pytest.param(
        """
        class Session:
            def compact(self):
                seen = 0
                for msg in reversed(self.messages):
                    for block in msg["content"]:
                        if block.get("type") == "tool_result":
                            seen += 1
                            if seen > 3:
                                block["content"] = "[elided]"
        """,
        [(10, "PFX504")],
        id="older tool-result blocks of a kept history masked",
    ),
    pytest.param(
        """
        def drop_images(messages, keep):
            for message in messages:
                for block in message.get("content"):
                    if block.get("type") != "tool_result" or not block.get("content"):
                        continue
                    block["content"] = [i for i in block["content"] if i["type"] != "image"]
        """,
        [(7, "PFX504")],
        id="tool-result blocks after a skip of other blocks",
    ),
    pytest.param(
        """
        def mask(messages):
            for i, m in enumerate(messages[:-4]):
                if m["role"] == "tool":
                    m["content"] = "(omitted)"
        """,
        [(5, "PFX504")],
        id="enumerated messages masked",
    ),
    pytest.param(
        """
        from langchain_core.messages import BaseMessage, HumanMessage
        KEEP = 20
        class Copilot:
            def chat(self, text):
                msgs: list[BaseMessage] = self.history + [HumanMessage(content=text)]
                reply = chain.invoke({"messages": msgs})
                msgs.append(reply)
                self.history = msgs[-KEEP:]
        """,
        [(9, "PFX502")],
        id="window of a working copy stored back as the kept history",
    ),
    pytest.param(
        """
        class State(TypedDict):
            messages: list
            summary: str
        def summarize(state: State) -> dict:
            history = state["messages"]
            if len(history) <= 30:
                return {}
            old, recent = history[:-8], history[-8:]
            return {"messages": recent, "summary": llm.invoke(old).content}
        """,
        [(9, "PFX502")],
        id="graph node replaces the state's conversation by its window",
    ),
    pytest.param(
        """
        from langchain.memory import ConversationBufferWindowMemory
        memory = ConversationBufferWindowMemory(k=5)
        """,
        [(3, "PFX502")],
        id="a framework memory keeping the last k exchanges",
    ),
    pytest.param(
        """
        from langchain_core.messages import trim_messages
        def call_model(state):
            kept = trim_messages(state["messages"], max_tokens=2000, token_counter=llm)
            return {"messages": [llm.invoke(kept)]}
        """,
        [(4, "PFX502")],
        id="a trimmer keeping the newest messages",
    ),
    pytest.param(
        """
        from autogen_core.model_context import BufferedChatCompletionContext
        context = BufferedChatCompletionContext(buffer_size=5)
        """,
        [(3, "PFX502")],
        id="a model context keeping the last messages",
    ),
    pytest.param(
        """
        class ChatSummarizer:
            def compact(self, messages, split_index):
                tail = messages[split_index:]
                summary = self.summarize_all(messages[:split_index])
                return summary + tail
        """,
        [(6, "PFX502")],
        id="a summary joined to the recent part of the conversation",
    ),
    pytest.param(
        """
        def compact(messages: list[Message], split: int) -> list[Message]:
            system = [m for m in messages if m.role == "system"]
            recent = messages[split:]
            summary_msg = Message(role="user", content=summarize(messages[len(system):split]))
            return system + [summary_msg] + recent
        """,
        [(6, "PFX502")],
        id="system messages, a summary message and the recent ones",
    ),
    pytest.param(
        """
        def prune(conversation, kept_ids):
            result = [m for m in conversation if id(m) in kept_ids]
            return result
        """,
        [(3, "PFX502")],
        id="the messages of a computed selection",
    ),
    pytest.param(
        """
        def drop_rounds(messages, keep_indices):
            system = [m for m in messages if m["role"] == "system"]
            kept = [messages[i] for i in sorted(keep_indices)]
            return system + kept
        """,
        [(4, "PFX502")],
        id="messages picked by index from a selection, joined to the system ones",
    ),
    pytest.param(
        """
        import tokentrim as tt
        class Chat:
            def respond(self, messages, system):
                messages = tt.trim(messages, system_message=system, max_tokens=8000)
                return client.chat.completions.create(model="m", messages=messages)
        """,
        [(5, "PFX502")],
        id="the conversation cut to a token budget by a call",
    ),
    pytest.param(
        """
        class Chat:
            def respond(self, messages, system, vision):
                if vision:
                    messages = trim(messages, system_message=system, max_tokens=4000)
                else:
                    messages = trim(messages, system_message=system, max_tokens=8000)
                return client.chat.completions.create(model="m", messages=messages)
        """,
        [(5, "PFX502")],
        id="one cut on each branch is one finding",
    ),
    pytest.param(
        """
        def compact(messages, llm):
            system = [m for m in messages if m["role"] == "system"]
            summary = llm.summarize(messages)
            messages.clear()
            messages.extend(system)
            summary_message = {"role": "user", "content": summary}
            messages.append(summary_message)
        """,
        [(5, "PFX502")],
        id="a kept conversation emptied and refilled with a summary",
    ),
    pytest.param(
        """
        class Agent:
            def shrink(self):
                text = summarize(self.messages)
                self.messages.clear()
                self.messages.append({"role": "system", "content": self.system})
                self.messages.append(make_summary(text))
        """,
        [(5, "PFX502")],
        id="an instance's conversation refilled with a made summary",
    ),
    pytest.param(
        """
        class BufferedContext:
            async def get_messages(self) -> list[LLMMessage]:
                messages = self._messages[-self._buffer_size :]
                if messages and messages[0].kind == "tool":
                    messages = messages[1:]
                return messages
        """,
        [(4, "PFX502")],
        id="the recent part of an object's conversation handed on",
    ),
    pytest.param(
        """
        class ChatMemory:
            def get_messages(self, limit=None):
                limit = self.size if limit is None else limit
                return [f"{m['role']}: {m['text']}" for m in self._messages[-limit:]]
        """,
        [(5, "PFX502")],
        id="the recent part of an object's conversation rendered message by message",
    ),
    pytest.param(
        """
        class ConversationMemory:
            def add_run(self, run):
                self.runs.append(run)
                while len(self.runs) > self.max_runs:
                    self.runs.pop(0)
        """,
        [(6, "PFX502")],
        id="the exchanges a conversation memory keeps, cut at a bound",
    ),
    pytest.param(
        """
        def build(history, question, count, limit):
            kept, used = [], 0
            for message in reversed(history[1:]):
                n = count(message["content"])
                if used + n > limit - 1000:
                    break
                kept.insert(0, message)
                used += n
            return client.chat.completions.create(
                model="m", messages=[history[0], *kept, {"role": "user", "content": question}]
            )
        """,
        [(4, "PFX502")],
        id="the newest messages kept while a token budget lasts",
    ),
    pytest.param(
        """
        def condense(history, question, llm):
            prompt = TEMPLATE.format(chat_history=history, question=question)
            while llm.num_tokens(prompt) >= 4096 - 256:
                history = history[2:]
                prompt = TEMPLATE.format(chat_history=history, question=question)
            return llm.chat(prompt)
        """,
        [(5, "PFX502")],
        id="the oldest messages dropped until the prompt fits",
    ),
    pytest.param(
        """
        class Agent:
            def trim(self):
                for i in range(len(self.messages) - 2):
                    msg = self.messages[i]
                    content = msg.get("content", [])
                    for block in content:
                        if block.get("type") != "tool_result":
                            continue
                        block["content"] = "[truncated]"
            def ask(self, text):
                self.messages.append({"role": "user", "content": text})
                return client.chat.completions.create(model="m", messages=self.messages)
        """,
        [(10, "PFX504")],
        id="older tool results rewritten through an index loop and a content name",
    ),
    pytest.param(
        """
        from copy import deepcopy
        def run_messages(agent, session, run):
            history = session.get_messages(last_n_runs=agent.num_runs, limit=agent.limit)
            copied = [deepcopy(m) for m in history]
            run.messages += copied
        """,
        [(4, "PFX502")],
        id="a stored conversation fetched with a cap and added to the messages",
    ),
    pytest.param(
        """
        async def answer(store, chat_id, question):
            turns = await store.load_history(chat_id, max_turns=10)
            messages = [{"role": "system", "content": "Be brief."}, *turns]
            messages.append({"role": "user", "content": question})
            return await client.chat.completions.create(model="m", messages=messages)
        """,
        [(3, "PFX502")],
        id="a capped fetch spread into a request's messages",
    ),
    pytest.param(
        """
        def build(session, agent, run):
            history = [dict(m) for m in session.messages]
            prune_history(history, agent.max_turns_from_history)
            run.messages += history
        """,
        [(4, "PFX502")],
        id="a conversation cut in place by a call",
    ),
    pytest.param(
        """
        def respond(messages, max_tokens):
            messages = [{"role": "system", "content": "Be brief."}, *messages]
            used, messages = message_fit_in(messages, int(max_tokens * 0.95))
            return client.chat.completions.create(model="m", messages=messages)
        """,
        [(4, "PFX502")],
        id="a conversation fitted to a budget",
    ),
    pytest.param(
        """
        def chat(history, max_tokens):
            msg = [{"role": "system", "content": SYSTEM}]
            msg.extend([{"role": m["role"], "content": m["content"]} for m in history])
            used, msg = message_fit_in(msg, max_tokens)
            return llm.chat(msg)
        """,
        [(5, "PFX502")],
        id="a list made of role dicts, whatever its name, fitted to a budget",
    ),
    pytest.param(
        """
        class Bot:
            def ask(self, text):
                self.messages.append({"role": "user", "content": text})
                self.messages = self.messages[-10:] if len(self.messages) > 10 else self.messages
                return client.chat.completions.create(model="m", messages=self.messages)
        """,
        [(5, "PFX502")],
        id="a window taken in a conditional expression",
    ),
    pytest.param(
        """
        class Worker:
            def flush(self):
                if len(self.generator_agent.messages) > 2 * self.max_rounds + 1:
                    self.generator_agent.messages.pop(1)
                    self.generator_agent.messages.pop(1)
            def step(self, text):
                self.generator_agent.messages.append({"role": "user", "content": text})
                return client.chat.completions.create(
                    model="m", messages=self.generator_agent.messages
                )
        """,
        [(5, "PFX502")],
        id="another object's conversation that this one keeps, cut at a bound",
    ),
    pytest.param(
        """
        class Bot:
            def compact(self, summary):
                self.messages = [self.messages[0]] + summary + self.messages[1:]
            def ask(self, text):
                self.messages.append({"role": "user", "content": text})
                return client.chat.completions.create(model="m", messages=self.messages)
        """,
        [(4, "PFX501")],
        id="messages spliced in after the first one, spelled as a new list",
    ),
    pytest.param(
        """
        class Bot:
            def remind(self, note):
                self.messages = self.messages[:2] + [note] + self.messages[2:]
            def ask(self, text):
                self.messages.append({"role": "user", "content": text})
                return client.chat.completions.create(model="m", messages=self.messages)
        """,
        [(4, "PFX501")],
        id="a message spliced in after a head slice",
    ),
    pytest.param(
        """
        def answer(question, chat_history):
            messages = [{"role": "system", "content": SYSTEM}]
            for turn in chat_history[-5:]:
                messages.append({"role": "user", "content": turn[0]})
                messages.append({"role": "assistant", "content": turn[1]})
            messages.append({"role": "user", "content": question})
            return client.chat.completions.create(model="m", messages=messages)
        """,
        [(4, "PFX502")],
        id="a window of the history iterated into the messages",
    ),
    pytest.param(
        """
        def answer(question, chat_history):
            prompt = ""
            for chat in chat_history[-5:]:
                prompt += f"User: {chat['user']}\\nAssistant: {chat['bot']}\\n"
            prompt += f"User: {question}\\nAssistant:"
            messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]
            return client.chat.completions.create(model="m", messages=messages)
        """,
        [(4, "PFX502")],
        id="a window of the history iterated into the prompt text",
    ),
    pytest.param(
        """
        def answer(question, history):
            past = "\\n".join(f"{m['role']}: {m['content']}" for m in history[-8:])
            messages = [{"role": "user", "content": past + "\\n" + question}]
            return client.chat.completions.create(model="m", messages=messages)
        """,
        [(3, "PFX502")],
        id="a window of the history joined into the prompt text",
    ),
    pytest.param(
        """
        class Chat:
            def __init__(self):
                self.messages = [{"role": "system", "content": "You are a support bot."}]
            def compact(self, summary):
                self.messages = [self.messages[0], {"role": "user", "content": summary}] + (
                    self.messages[-4:]
                )
            def reply(self, text):
                self.messages.append({"role": "user", "content": text})
                return client.chat.completions.create(model="m", messages=self.messages)
        """,
        [(7, "PFX502")],
        id="the head and a summary message joined to the recent turns",
    ),
    pytest.param(
        _AGENT.format(edit="self.messages[1:] = [summary]"),
        [(9, "PFX501")],
        id="earlier messages replaced through a slice",
    ),
    pytest.param(
        _AGENT.format(edit="if len(self.messages) > 30:\n            self.messages[1:3] = []"),
        [(10, "PFX502")],
        id="messages cut through a slice at a length bound",
    ),
    pytest.param(
        _AGENT.format(edit="self.messages[:] = self.messages[-10:]"),
        [(9, "PFX502")],
        id="a window of the conversation assigned to all of it",
    ),
    pytest.param(
        """
        from .util import truncate
        class Session:
            def __init__(self):
                self.history = [{"role": "system", "content": "Hi"}]
            def say(self, text):
                self.history.append({"role": "user", "content": text})
                self.history = truncate(self.history, 20000)
                return client.chat.completions.create(model="m", messages=self.history)
        """,
        [(8, "PFX502")],
        id="the conversation cut to a size by an imported helper",
    ),
    pytest.param(
        """
        def truncate(messages, limit):
            while sum(len(m["content"]) for m in messages) > limit:
                del messages[1]
            return messages
        class Session:
            def __init__(self):
                self.history = [{"role": "system", "content": "Hi"}]
            def say(self, text):
                self.history.append({"role": "user", "content": text})
                self.history = truncate(self.history, 20000)
                return client.chat.completions.create(model="m", messages=self.history)
        """,
        [(4, "PFX501")],
        id="a helper of the file that cuts the conversation, reported at its edit",
    ),
)

QUIET = (
    pytest.param(
        """
        class Pager:
            def page(self, rows):
                return rows[-10:]
        """,
        id="the newest rows of a list that no condenser is given",
    ),
    pytest.param(
        """
        from .condenser import Condenser

        class NoOpCondenser(Condenser):
            def condense(self, view):
                return [event for event in view]
        """,
        id="a condenser that keeps every event",
    ),
    pytest.param(
        _REBUILT.format(
            body="""entry = {**entry}
        entry["content"] = entry["content"].strip()
        out.append(entry)"""
        ),
        id="every message of a copy normalised the same way on every request",
    ),
    pytest.param(
        _REBUILT.format(
            body="""if entry["role"] == "tool":
            entry = entry.copy()
            entry["content"] = entry["content"][:2000]
        out.append(entry)"""
        ),
        id="tool results of a copy capped by their kind, not their position",
    ),
    pytest.param(
        _REBUILT.format(
            body="""if i == 0:
            entry = entry.copy()
            entry["content"] = "You are terse."
        out.append(entry)"""
        ),
        id="the first message of a copy replaced on every request",
    ),
    pytest.param(
        """
        def documents_for_llm(documents, keep=3):
            out = []
            for i, doc in enumerate(documents):
                if i < len(documents) - keep:
                    doc = doc.copy()
                    doc["content"] = doc["content"][:100]
                out.append(doc)
            return out
        """,
        id="older documents of a list that is not a conversation cut",
    ),
    pytest.param(
        _AGENT.format(edit="self.messages[len(self.messages):] = [summary]"),
        id="messages added at the end through a slice",
    ),
    pytest.param(
        """
        from .util import truncate
        def say(history, text):
            messages = [*history, {"role": "user", "content": text}]
            return client.chat.completions.create(
                model="m", messages=messages, user=truncate(text, 64)
            )
        """,
        id="a text cut to a size, not the conversation",
    ),
    pytest.param(
        """
        class Chat:
            def __init__(self):
                self.messages = [{"role": "system", "content": "You are a support bot."}]
            def reset(self, greeting):
                self.messages = [self.messages[0], {"role": "assistant", "content": greeting}] + (
                    self.pending
                )
            def reply(self, text):
                self.messages.append({"role": "user", "content": text})
                return client.chat.completions.create(model="m", messages=self.messages)
        """,
        id="the head and a greeting joined to other messages",
    ),
    pytest.param(
        _PAIRS.format(bound="self.pairs * 4", start="-self.pairs * 2"),
        id="a window of pairs kept at half the bound it is cut at",
    ),
    pytest.param(
        """
        LIMIT = 10
        class Bot:
            def ask(self, text):
                self.history.append({"role": "user", "content": text})
                if len(self.history) > LIMIT + 20:
                    self.history = [self.history[0]] + self.history[-LIMIT:]
                return client.chat.completions.create(model="m", messages=self.history)
        """,
        id="head and window cut in blocks far above the window",
    ),
    pytest.param(
        """
        def send(results):
            messages = [{"role": "user", "content": results}]
            for m in messages:
                for block in m["content"]:
                    if block["type"] == "tool_result":
                        block["content"] = str(block["content"])
            return client.messages.create(model="m", messages=messages)
        """,
        id="blocks of a list built for one request",
    ),
    pytest.param(
        """
        def tidy(messages):
            for m in messages:
                for block in m["content"]:
                    if block["type"] == "tool_result":
                        continue
                    block["text"] = block["text"].strip()
        """,
        id="tool results skipped, the other blocks normalised",
    ),
    pytest.param(
        """
        from langchain_core.messages import BaseMessage, HumanMessage
        class Copilot:
            def chat(self, text):
                msgs: list[BaseMessage] = self.history + [HumanMessage(content=text)]
                reply = chain.invoke({"messages": msgs})
                self.history = msgs + [reply]
                self.last_exchange = msgs[-2:]
                self.recent = reply_log[-20:]
        """,
        id="last exchange kept aside, a window of another list",
    ),
    pytest.param(
        """
        class State(TypedDict):
            messages: Annotated[list, add_messages]
        def summarize(state: State) -> dict:
            return {"messages": state["messages"][-8:]}
        """,
        id="a reducer merges the update into the state",
    ),
    pytest.param(
        """
        def summarize(state: MessagesState) -> dict:
            return {"messages": state["messages"][-8:]}
        """,
        id="messages state with its reducer",
    ),
    pytest.param(
        """
        def preview(state) -> dict:
            return {"recent": state["messages"][-8:], "messages": state["messages"]}
        """,
        id="the window returned under another key",
    ),
    pytest.param(
        """
        from langchain_core.messages import trim_messages
        def call_model(state):
            kept = trim_messages(state["messages"], max_tokens=2000, strategy="first")
            return {"messages": [llm.invoke(kept)]}
        """,
        id="a trimmer keeping the oldest messages",
    ),
    pytest.param(
        """
        from langchain.memory import ConversationBufferMemory
        class ConversationBufferWindowMemory:
            pass
        full = ConversationBufferMemory()
        local = ConversationBufferWindowMemory()
        """,
        id="a full buffer, and a class of the same name defined here",
    ),
    pytest.param(
        """
        def reply(messages, summary):
            return [{"role": "system", "content": summary}, *messages]
        """,
        id="a summary sent before the whole conversation",
    ),
    pytest.param(
        """
        def report(messages, summary_lines):
            return "\\n".join(summary_lines) + str(len(messages))
        """,
        id="a summary joined to text, not to messages",
    ),
    pytest.param(
        """
        def non_empty(messages):
            return [m for m in messages if m["content"]]
        """,
        id="a filter that keeps what is not empty",
    ),
    pytest.param(
        """
        def chosen(options, keep):
            return [o for o in options if o in keep]
        """,
        id="a selection of something other than messages",
    ),
    pytest.param(
        """
        def respond(messages, question):
            question = truncate(question, max_tokens=200)
            return client.chat.completions.create(model="m", messages=[*messages, question])
        """,
        id="the question cut to a budget, not the conversation",
    ),
    pytest.param(
        """
        class Agent:
            def reset(self):
                self.messages.clear()
                self.messages.append({"role": "system", "content": self.system})
            def ask(self, text):
                self.messages.append({"role": "user", "content": text})
                return client.chat.completions.create(model="m", messages=self.messages)
        """,
        id="a conversation emptied to start again from its system message",
    ),
    pytest.param(
        """
        def report(messages, summary):
            summaries = []
            messages.clear()
            summaries.append(summary)
            return summaries
        """,
        id="a summary added to another list after a conversation is emptied",
    ),
    pytest.param(
        """
        class Context:
            def last_exchange(self):
                return self._messages[-2:]
            def recent_scores(self):
                return self._scores[-self.size :]
        """,
        id="an object's current exchange, or the recent part of something else, handed on",
    ),
    pytest.param(
        """
        def page(store, chat_id):
            history = store.get_messages(chat_id, limit=50)
            return {"items": [m.text for m in history]}
        def everything(session, run):
            history = session.get_messages(limit=None)
            run.messages += history
        """,
        id="a capped fetch shown to a user, and a fetch without a cap",
    ),
    pytest.param(
        """
        def build(messages, run):
            summarize(messages)
            filter_empty(messages)
            run.messages += messages
        """,
        id="calls on a conversation that name no size",
    ),
    pytest.param(
        """
        def respond(messages):
            messages = [{"role": "system", "content": "Be brief."}, *messages]
            return client.chat.completions.create(model="m", messages=messages)
        """,
        id="a conversation rebound to itself after a system message",
    ),
    pytest.param(
        """
        class Bot:
            def ask(self, text):
                self.messages.append({"role": "user", "content": text})
                self.messages = self.messages[-10:] if len(self.messages) > 40 else self.messages
                return client.chat.completions.create(model="m", messages=self.messages)
        """,
        id="a conditional expression that cuts at a high-water mark",
    ),
    pytest.param(
        """
        class Server:
            def report(self, messages, summary):
                messages = messages + [summary]
                del self.throttled_messages[0]
                self.errors.messages.remove(summary)
                return messages
        """,
        id="lists named messages in code that never speaks of chats",
    ),
    pytest.param(
        """
        class JobQueue:
            def add_run(self, run):
                self.runs.append(run)
                while len(self.runs) > self.max_runs:
                    self.runs.pop(0)
        """,
        id="runs kept by something that is not a conversation",
    ),
    pytest.param(
        """
        def last_question(history, count, limit):
            used = 0
            for message in reversed(history):
                used += count(message["content"])
                if used > limit:
                    raise ValueError("the chat history is too long to send")
            for message in reversed(history):
                if message["role"] == "user":
                    return message
        """,
        id="a conversation walked from its end to measure it, or to find its last question",
    ),
    pytest.param(
        """
        def from_first_question(history):
            while history and history[0]["role"] != "user":
                history = history[1:]
            return client.chat.completions.create(model="m", messages=history)
        """,
        id="the same leading messages dropped on every request",
    ),
    pytest.param(
        """
        from langchain_core.messages import AnyMessage

        def ui_message_reducer(
            left: list[AnyUIMessage] | AnyUIMessage, right: list[AnyUIMessage]
        ) -> list[AnyUIMessage]:
            # Merge the interface messages of a chat by id.
            merged = left.copy()
            by_id = {m["id"]: i for i, m in enumerate(merged)}
            for msg in right:
                if msg["id"] in by_id:
                    merged[by_id[msg["id"]]] = msg
                else:
                    merged.append(msg)
            return [m for m in merged if m.get("type") != "remove-ui"]
        """,
        id="a list of interface messages is no conversation",
    ),
    pytest.param(
        """
        class Chat:
            def show(self):
                for m in self.messages[-10:]:
                    print(m["role"], m["content"])
            def ask(self, question):
                for m in self.messages[-2:]:
                    log(m)
                self.messages.append({"role": "user", "content": question})
                return client.chat.completions.create(model="m", messages=self.messages)
        """,
        id="a window of the conversation only printed, or only the current exchange",
    ),
    pytest.param(
        """
        def summarize_logs(log_lines, question):
            prompt = ""
            for line in log_lines[-50:]:
                prompt += line + "\\n"
            messages = [{"role": "user", "content": prompt + question}]
            return client.chat.completions.create(model="m", messages=messages)
        """,
        id="the tail of a log iterated into the prompt is no conversation",
    ),
    pytest.param(
        """
        class Bot:
            def ask(self, extra):
                sent = [self.messages[0]] + extra + self.messages[1:]
                return client.chat.completions.create(model="m", messages=sent)
            def other(self):
                self.messages = self.messages[:1] + self.messages[1:]
        """,
        id="a spliced copy that is not kept, and a list rebuilt whole",
    ),
)


@pytest.mark.parametrize(("src", "expected"), FOUND)
def test_found(src, expected):
    assert _found(src) == expected


@pytest.mark.parametrize("src", QUIET)
def test_quiet(src):
    assert _found(src) == []
