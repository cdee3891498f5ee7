"""The same prompt text built with different whitespace on different paths (PFX402): each
case is a short module and the ``(line, code)`` findings it must give."""

import textwrap

import pytest

from prefixlint import check_source

WHITESPACE_CODES = ("PFX401", "PFX402")
SEND = """
def send(client, question, **options):
    return client.chat.completions.create(model="m", messages=[
        {"role": "system", "content": system(**options)},
        {"role": "user", "content": question},
    ])
"""


def _found(src: str) -> list[tuple[int, str]]:
    found = check_source(textwrap.dedent(src) + SEND, "app.py", select=WHITESPACE_CODES)
    return sorted((d.span.line, d.code) for d in found)


FOUND = (
    pytest.param(
        """
        RULES = ["Cite sources.", "Be brief."]
        def system(windows):
            if windows:
                body = "\\r\\n".join(RULES)
            else:
                body = "\\n".join(RULES)
            return body
        """,
        [(7, "PFX402")],
        id="CRLF join on one branch, LF on the other",
    ),
    pytest.param(
        """
        def system(items, compact):
            if compact:
                return "Checklist:\\n" + "\\n".join(items)
            return "Checklist:\\n" + "\\n\\n".join(items)
        """,
        [(5, "PFX402")],
        id="returns joined with one newline and with two",
    ),
    pytest.param(
        """
        def system(repo, draft):
            if draft:
                return f"Repository {repo}. "
            return f"Repository {repo}."
        """,
        [(5, "PFX402")],
        id="a trailing space on one return",
    ),
    pytest.param(
        '''
        import textwrap
        def system(kind):
            if kind == "short":
                return textwrap.dedent(
                    """\\
                    Track action items.
                    Keep answers short.
                    """
                )
            return """\\
                    Track action items.
                    Keep answers short.
                    """
        ''',
        [(11, "PFX402")],
        id="dedent on one path only",
    ),
    pytest.param(
        """
        PROMPT = "Be brief.\\n"
        def system(trim):
            if trim:
                return "Be brief.\\n".strip()
            return "Be brief.\\n"
        """,
        [(6, "PFX402")],
        id="strip on one path only",
    ),
)

QUIET = (
    pytest.param(
        """
        def system(items, compact):
            if compact:
                return "Checklist: " + ", ".join(items)
            return "Checklist:\\n" + "\\n".join(items)
        """,
        id="different separators, not only whitespace",
    ),
    pytest.param(
        """
        def system(repo, draft):
            if draft:
                return f"Draft of {repo}."
            return f"Repository {repo}."
        """,
        id="different words",
    ),
    pytest.param(
        '''
        import textwrap
        def system(kind):
            if kind == "short":
                return textwrap.dedent("""
                    Track action items.
                    """)
            return textwrap.dedent("""
                    Track action items.
                    """)
        ''',
        id="dedent on both paths",
    ),
    pytest.param(
        """
        def system(**options):
            return "Be brief."
        def question_text(q, draft):
            if draft:
                return f"{q} "
            return f"{q}"
        def ask(client, q, draft):
            return client.chat.completions.create(model="m", messages=[
                {"role": "system", "content": system()},
                {"role": "user", "content": question_text(q, draft)},
            ])
        """,
        id="drift only in the last user message",
    ),
)


@pytest.mark.parametrize(("src", "expected"), FOUND)
def test_found(src, expected):
    assert _found(src) == expected


@pytest.mark.parametrize("src", QUIET)
def test_quiet(src):
    assert _found(src) == []


_TWO_REQUESTS = """
import textwrap
SYSTEM = '''
    You answer from the agreement only.
    Quote the section for every statement.
    '''
class Reader:
    def ask(self, question):
        return client.chat.completions.create(model="m", messages=[
            {{"role": "system", "content": {first}}},
            {{"role": "user", "content": question}},
        ])
    def stream(self, question):
        return client.chat.completions.create(model="m", stream=True, messages=[
            {{"role": "system", "content": {second}}},
            {{"role": "user", "content": question}},
        ])
"""


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    (
        pytest.param(
            "textwrap.dedent(SYSTEM).strip()",
            "SYSTEM.strip()",
            [(15, "PFX402")],
            id="dedented by one request of a class, not by the other",
        ),
        pytest.param(
            "textwrap.dedent(SYSTEM)", "textwrap.dedent(SYSTEM)", [], id="the same text in both"
        ),
        pytest.param("SYSTEM.strip()", "question.strip()", [], id="different texts"),
    ),
)
def test_requests_of_a_class_send_one_text(first: str, second: str, expected) -> None:
    src = _TWO_REQUESTS.format(first=first, second=second)
    found = check_source(src, "app.py", select=WHITESPACE_CODES)
    assert sorted((d.span.line, d.code) for d in found) == expected
