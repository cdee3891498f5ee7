"""Per-request input before a long static block (PFX301): a fixed file's text, a later
message, a template joined from fixed texts. Each case is a short module and the
``(line, code)`` findings it must give."""

import textwrap

import pytest

from prefixlint import check_source

# About 180 tokens of fixed instructions on one line.
BLOCK = " ".join(
    f"{n}. Cite the passage you rely on, quote it exactly and keep the answer short."
    for n in range(1, 13)
)


def _found(src: str) -> list[tuple[int, str]]:
    found = check_source(textwrap.dedent(src), "app.py", select=("PFX301",))
    return sorted((d.span.line, d.code) for d in found)


FOUND = (
    pytest.param(
        """
        from pathlib import Path
        MANUAL = Path(__file__).with_name("manual.md")
        def manual_text():
            return MANUAL.read_text(encoding="utf-8")
        def ask(question):
            system = f"A staff member asks: {question}\\n<manual>\\n{manual_text()}\\n</manual>"
            return client.chat.completions.create(
                model="m", messages=[{"role": "system", "content": system}]
            )
        """,
        [(7, "PFX301")],
        id="the question before a fixed file's text read by a helper",
    ),
    pytest.param(
        """
        TEMPLATE = "Question: {question}\\n<doc>{doc}</doc>"
        class Reader:
            def __init__(self, path):
                self.doc = path.read_text()
            def ask(self, question):
                prompt = TEMPLATE.format(question=question, doc=self.doc)
                return client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": prompt}]
                )
        """,
        [(2, "PFX301")],
        id="the question before a file's text read when the object is made",
    ),
    pytest.param(
        """
        from pathlib import Path
        from langchain_core.prompts import ChatPromptTemplate
        POLICY = Path("policy.md").read_text()
        prompt = ChatPromptTemplate.from_messages(
            [("system", "Q: {question}\\n<policy>{policy}</policy>"), ("human", "{question}")]
        )
        chain = prompt | model
        def answer(question):
            return chain.invoke({"question": question, "policy": POLICY})
        """,
        [(6, "PFX301")],
        id="a template field before a field a pipeline fills with a fixed file's text",
    ),
    pytest.param(
        """
        HANDBOOK = open("handbook.txt").read()
        def ask(question):
            return client.chat.completions.create(model="m", messages=[
                {"role": "system", "content": f"Question: {question}\\n\\n{HANDBOOK}"},
                {"role": "user", "content": "Answer the question."},
            ])
        """,
        [(5, "PFX301")],
        id="a module constant holding a file's text",
    ),
    pytest.param(
        f"""
        RULES = "{BLOCK}"
        def ask(question):
            messages = [
                {{"role": "system", "content": "Be precise."}},
                {{"role": "user", "content": f"My question: {{question}}"}},
                {{"role": "user", "content": "Rules for the answer: " + RULES}},
                {{"role": "user", "content": "Please answer my question above."}},
            ]
            return client.chat.completions.create(model="m", messages=messages)
        """,
        [(6, "PFX301")],
        id="the question in an earlier message than the static block",
    ),
    pytest.param(
        f"""
        from langchain_core.prompts import ChatPromptTemplate
        RULES = "{BLOCK}"
        PROMPT = ChatPromptTemplate.from_messages(
            [("system", "Employee question: {{question}}\\n\\n" + RULES), ("human", "{{context}}")]
        )
        """,
        [(5, "PFX301")],
        id="a template field before a joined static block",
    ),
    pytest.param(
        """
        BASE = "You answer questions about the product."
        def respond(history, question, retriever):
            docs = "\\n".join(d.text for d in retriever.search(question))
            system = f"{BASE}\\nRelevant documents:\\n{docs}"
            messages = [
                {"role": "system", "content": system},
                *history,
                {"role": "user", "content": question},
            ]
            return client.chat.completions.create(model="m", messages=messages)
        """,
        [(5, "PFX301")],
        id="documents looked up with this turn's question before the conversation",
    ),
    pytest.param(
        """
        def respond(chat_history, user_input):
            system = {"role": "system", "content": f"The user now asks: {user_input}"}
            user = {"role": "user", "content": user_input}
            return client.chat.completions.create(
                model="m", messages=[system] + chat_history + [user]
            )
        """,
        [(3, "PFX301")],
        id="this turn's input in the system message of a concatenated conversation",
    ),
    pytest.param(
        """
        class Coder:
            def __init__(self):
                self.history = []
            def ask(self, question, retriever):
                context = retriever.search(question)
                messages = [
                    {"role": "system", "content": "You write code."},
                    {"role": "user", "content": f"Relevant code:\\n{context}"},
                    *self.history,
                    {"role": "user", "content": question},
                ]
                reply = client.chat.completions.create(model="m", messages=messages)
                self.history.append({"role": "user", "content": question})
                return reply
        """,
        [(9, "PFX301")],
        id="looked-up code before the conversation an object appends each question to",
    ),
    pytest.param(
        """
        class Chat:
            async def reply(self, role_prompt, history, query, rag_context=None):
                system_prompt = role_prompt
                if rag_context:
                    system_prompt = f"{role_prompt}\\nRelevant context:\\n{rag_context}"
                messages = [
                    {"role": "system", "content": system_prompt},
                    *history,
                    {"role": "user", "content": query},
                ]
                return await self.client.chat.completions.create(model="m", messages=messages)
        """,
        [(6, "PFX301")],
        id="retrieved context on one path before the conversation",
    ),
    pytest.param(
        """
        from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
        SYSTEM = "Answer with the retrieved context below.\\n\\n{context}"
        qa_prompt = ChatPromptTemplate.from_messages(
            [("system", SYSTEM), MessagesPlaceholder("chat_history"), ("human", "{input}")]
        )
        """,
        [(3, "PFX301")],
        id="a stuff-documents chain's context field before the history placeholder",
    ),
    pytest.param(
        """
        from langchain_core.prompts import ChatPromptTemplate
        prompt = ChatPromptTemplate.from_messages([
            ("system", "The user is asking: {question}. Be brief."),
            ("placeholder", "{chat_history}"),
            ("human", "{question}"),
        ])
        """,
        [(4, "PFX301")],
        id="the question field before a placeholder role",
    ),
)

QUIET = (
    pytest.param(
        """
        from pathlib import Path
        MANUAL = Path("manual.md")
        def ask(question):
            return client.chat.completions.create(model="m", messages=[
                {"role": "system", "content": f"<manual>\\n{MANUAL.read_text()}\\n</manual>"},
                {"role": "user", "content": question},
            ])
        """,
        id="the file's text first, the question last",
    ),
    pytest.param(
        """
        def ask(question, doc_path):
            system = f"Question: {question}\\n{open(doc_path).read()}"
            return client.chat.completions.create(
                model="m", messages=[{"role": "system", "content": system}]
            )
        """,
        id="a file chosen per request is no static block",
    ),
    pytest.param(
        """
        import sys
        def ask(question):
            system = f"Question: {question}\n{sys.stdin.read()}"
            return client.chat.completions.create(
                model="m", messages=[{"role": "system", "content": system}]
            )
        """,
        id="a stream read is no file",
    ),
    pytest.param(
        """
        def ask(question):
            messages = [
                {"role": "system", "content": "Be precise."},
                {"role": "user", "content": f"My question: {question}"},
                {"role": "user", "content": "Please answer my question above."},
            ]
            return client.chat.completions.create(model="m", messages=messages)
        """,
        id="a short static message after the question",
    ),
    pytest.param(
        """
        from langchain_core.prompts import ChatPromptTemplate
        RULES = "Answer in one sentence."
        PROMPT = ChatPromptTemplate.from_messages(
            [("system", "Employee question: {question}\\n\\n" + RULES), ("human", "{context}")]
        )
        """,
        id="a template field before a short joined text",
    ),
    pytest.param(
        """
        TEMPLATE = "Question: {question}\\n<doc>{doc}</doc>"
        class Reader:
            def __init__(self, path):
                self.path = path
            def ask(self, question):
                self.doc = self.path.read_text()
                prompt = TEMPLATE.format(question=question, doc=self.doc)
                return client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": prompt}]
                )
        """,
        id="a file read for every request",
    ),
    pytest.param(
        """
        TEMPLATE = "<doc>{doc}</doc>\\nQuestion: {question}"
        class Reader:
            def __init__(self, path):
                self.doc = path.read_text()
            def ask(self, question):
                prompt = TEMPLATE.format(question=question, doc=self.doc)
                return client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": prompt}]
                )
        """,
        id="the file's text before the question",
    ),
    pytest.param(
        """
        from pathlib import Path
        from langchain_core.prompts import ChatPromptTemplate
        POLICY = "Be brief."
        prompt = ChatPromptTemplate.from_messages(
            [("system", "Q: {question}\\n<policy>{policy}</policy>"), ("human", "{question}")]
        )
        chain = prompt | model
        def answer(question):
            return chain.invoke({"question": question, "policy": POLICY})
        """,
        id="a template field before a field filled with a short text",
    ),
    pytest.param(
        """
        def step(history, task, observation):
            messages = [
                {"role": "system", "content": f"Solve this task: {task}"},
                *history,
                {"role": "user", "content": observation},
            ]
            return client.chat.completions.create(model="m", messages=messages)
        """,
        id="the conversation's task before its history is the same every turn",
    ),
    pytest.param(
        """
        def respond(history, question):
            messages = [
                {"role": "system", "content": "You answer questions."},
                *history,
                {"role": "user", "content": question},
            ]
            return client.chat.completions.create(model="m", messages=messages)
        """,
        id="a static system message before the conversation",
    ),
    pytest.param(
        """
        def respond(question, retriever):
            docs = "\\n".join(d.text for d in retriever.search(question))
            messages = [
                {"role": "system", "content": f"You answer questions.\\n{docs}"},
                {"role": "user", "content": question},
            ]
            return client.chat.completions.create(model="m", messages=messages)
        """,
        id="documents for the question with no conversation after them",
    ),
    pytest.param(
        """
        def respond(question, memory):
            recalled = memory.search(question)
            messages = [
                {"role": "system", "content": f"Question: {question}"},
                *recalled,
                {"role": "user", "content": question},
            ]
            return client.chat.completions.create(model="m", messages=messages)
        """,
        id="messages looked up with the question are new every turn as well",
    ),
    pytest.param(
        """
        class Bot:
            def ask(self, question, memory):
                self.recalled = memory.search(question)
                messages = [
                    {"role": "system", "content": f"Question: {question}"},
                    *self.recalled,
                    {"role": "user", "content": question},
                ]
                return client.chat.completions.create(model="m", messages=messages)
        """,
        id="messages an object looks up with the question are new every turn as well",
    ),
    pytest.param(
        """
        def respond(history, question, profile):
            messages = [
                {"role": "system", "content": f"The customer: {profile}"},
                *history,
                {"role": "user", "content": question},
            ]
            return client.chat.completions.create(model="m", messages=messages)
        """,
        id="a per-conversation value before the conversation",
    ),
    pytest.param(
        """
        from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
        prompt = ChatPromptTemplate.from_messages([
            ("system", "Use the context: {context}"),
            ("human", "{input}"),
            MessagesPlaceholder("agent_scratchpad"),
        ])
        """,
        id="a placeholder after this turn's input is its own scratchpad",
    ),
    pytest.param(
        """
        from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
        prompt = ChatPromptTemplate.from_messages([
            ("system", "You are {persona}. Answer in {language}."),
            MessagesPlaceholder("chat_history"),
            ("human", "{input}"),
        ])
        """,
        id="per-conversation fields before the history placeholder",
    ),
    pytest.param(
        """
        from langchain_core.prompts import ChatPromptTemplate
        prompt = ChatPromptTemplate.from_messages([
            ("system", "Answer from the context.\\n\\n{context}"),
            ("human", "{input}"),
        ])
        """,
        id="retrieved context with no conversation after it",
    ),
    pytest.param(
        f"""
        SHELL_PROMPTS = {{"bash": \"\"\"case ${{ZSH_EVAL_CONTEXT:-}} in
        {BLOCK}
        esac\"\"\"}}
        def script(name, content):
            disable_prompt = SHELL_PROMPTS.get(name, "")
            return disable_prompt + content
        """,
        id="braces of a text known only by its name and never filled are text",
    ),
)


@pytest.mark.parametrize(("src", "expected"), FOUND)
def test_found(src, expected):
    assert _found(src) == expected


@pytest.mark.parametrize("src", QUIET)
def test_quiet(src):
    assert _found(src) == []
