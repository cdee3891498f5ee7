"""The ``if`` that chose between two lines of a chat template."""

import pytest

from prefixlint.sources.chat_template.branches import deciding_if

SOURCE = """{%- for m in messages %}
    {%- if m.role == 'assistant' %}
        {%- if loop.index0 > last_query %}
            {{- m.reasoning + m.content }}
        {%- elif m.tool_calls %}
            {{- m.content + 'calls' }}
        {%- else %}
            {{- m.content }}
        {%- endif %}
    {%- else %}
        {{- m.content }}
    {%- endif %}
{%- endfor %}
{{- 'end' }}
"""


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        (4, 8, 3),  # the arms of the inner if
        (8, 4, 3),
        (6, 8, 3),
        (4, 11, 2),  # an inner arm and the outer else: the outer if
        (4, 4, None),  # one line
        (4, 14, None),  # a line outside every if
        (1, 13, None),
    ],
)
def test_deciding_if(first, second, expected):
    assert deciding_if(SOURCE, first, second) == expected
