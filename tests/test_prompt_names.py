"""The request part a prompt's name says it is for (``name_region``/``text_region``)."""

import pytest

from prefixlint.pyflow.prompt_words import LAST, PROMPT, SYSTEM, TOOLS, text_region


@pytest.mark.parametrize(
    ("name", "region"),
    [
        ("SYSTEM_PROMPT", SYSTEM),
        ("QUERY_REWRITE_SYSTEM_PROMPT", SYSTEM),
        ("FACT_RETRIEVAL_PROMPT", PROMPT),
        ("USER_MEMORY_EXTRACTION_PROMPT", PROMPT),
        ("user_profile_prompt", PROMPT),
        ("USER_PROMPT", LAST),
        ("user_message_template", LAST),
        ("user_turn_prompt", LAST),
        ("USER_TEMPLATE", LAST),
        ("user_query_prompt", None),
        ("user_prompt_for_user_memory", None),
        ("tool_schemas", TOOLS),
        ("answer", None),
    ],
)
def test_prompt_name_region(name: str, region: str | None) -> None:
    assert text_region(name) == region
