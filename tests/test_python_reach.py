"""Python prompt analysis on small real-world shapes: what is found, where, and what stays quiet.

Each case is a short module and the findings it must give, as ``(line, code)`` pairs.
"""

import textwrap

import pytest

from prefixlint.config import Settings
from prefixlint.engine import check_text

PYTHON_CODES = ("PFX1", "PFX2", "PFX3", "PFX4", "PFX5")
RULES = "Follow every rule of the handbook below, in order, without exception.\\n" * 80


def _found(src: str) -> list[tuple[int, str]]:
    found = check_text(textwrap.dedent(src), "app.py", Settings(select=PYTHON_CODES))
    return sorted((d.span.line, d.code) for d in found)


FOUND = (
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
)


@pytest.mark.parametrize(("src", "expected"), FOUND)
def test_found(src, expected):
    assert _found(src) == expected
