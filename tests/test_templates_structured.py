"""Prompt files in YAML, JSON and TOML: which strings are prompts, and where they are."""

import pytest

from prefixlint.context import RuleContext, SourceError
from prefixlint.linting.engine import check_text
from prefixlint.sources import structured

TRAILING_ON = {"PFX402": {"trailing-whitespace": True}}  # as by default

CODES = frozenset({"PFX101", "PFX102", "PFX103", "PFX104", "PFX401", "PFX402", "PFX403"})


def findings(path, text):
    found = structured.check(text, RuleContext(path, CODES, options=TRAILING_ON))
    return sorted((d.code, d.span.line, d.span.column) for d in found)


def literal_positions_match(text, string):
    """Every literal slice of the string's map shows the same text in the file."""
    return all(
        text[s.source_start : s.source_end] == string.value[s.rendered_start : s.rendered_end]
        for s in string.host.slices
        if s.kind == "literal"
    )


YAML_STYLES = [
    ("literal block", "system: |\n  Line one.\n    indented {{ x }}\n\n  last\nother: 1\n"),
    ("stripped block", "system: |-\n  a {{ x }}\n  b\n"),
    ("kept block", "system: |+\n  a {{ x }}\n\n\nnext: 1\n"),
    ("double quoted", 'system: "Tab\\there \\u00e9 {{ x }}\\n and\n  folded  \n\n  line"\n'),
    ("single quoted", "system: 'It''s {{ x }}\n  folded'\n"),
    ("plain", "system: plain {{ x }} text\n  continued\n"),
    ("literal block with CRLF", "system: |\r\n  Line one.\r\n  b {{ x }}\r\n  c\r\n"),
]


@pytest.mark.parametrize(("style", "text"), YAML_STYLES)
def test_yaml_strings_map_back_to_the_file(style, text):
    (string,) = structured.prompt_strings(text, "p.yaml")
    assert literal_positions_match(text, string)
    placeholder = string.value.index("{{ x }}")
    assert text[string.host.to_source(placeholder) :].startswith("{{ x }}")


def test_yaml_folded_block_points_at_its_start():
    text = "a: 1\nsystem: >\n  folded {{ user_id }}\n\n  A paragraph that follows.\n"
    assert findings("p.yaml", text) == [("PFX103", 2, 9)]


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        (
            "p.yaml",
            "system_prompt: |-\n  Hello.\n  Session {{ session_id }}.\n  Rules follow.\n",
            [("PFX102", 3, 11)],
        ),
        (
            "p.yaml",
            'system: "Now {{ now() }}\\nRules follow."\n',
            [("PFX101", 1, 14)],
        ),
        (
            "p.json",
            '{"system": "Tab\\t\\u00e9 {user_id}\\nRules."}',
            [("PFX103", 1, 25)],
        ),
        (
            "p.json",
            '{"messages": [{"role": "user", "content": "{{ cwd }}\\nStatic."},'
            ' {"role": "user", "content": "Last {{ cwd }}\\nStatic."}]}',
            [("PFX104", 1, 44)],
        ),
        (
            "p.toml",
            '[prompt]\nsystem = """\nHi \\u00e9 {{ user.email }}\nRules.\n"""\n',
            [("PFX103", 3, 11)],
        ),
        (
            "p.toml",
            "system = '''{{ hostname }}\nRules.'''\nuser = \"{{ cwd }}\\nx\"\n",
            [("PFX104", 1, 13)],
        ),
        ("p.yaml", "jobs:\n  test:\n    env: {DATE: '{{ now() }} x'}\n    run: x   \n", []),
        ("p.json", '{"name": "{{ user_id }}\\nstatic", "scripts": {"a": "b  "}}', []),
        ("p.yaml", "instance_template: |\n  {{ working_dir }}\n  Static.\n", []),
        ("p.yaml", "next_step_template: '{{ cwd }} then text'\n", []),
        ("p.yaml", "", []),
        ("p.json", "[]", []),
        # Trailing whitespace counts where editors strip it: at the end of a line of the file.
        ("p.yaml", 'system_prompt_prefix: "Formatting re-enabled. "\n', []),
        ("p.yaml", "system_prompt_prefix: 'Step one:  '\nnext: 1\n", []),
        ("p.json", '{"system": "Rules:  \\nAnswer briefly."}', []),
        ("p.yaml", "system: |\n  Rules:  \n  Answer briefly.\n", [("PFX402", 2, 9)]),
    ],
)
def test_prompt_file_findings(path, text, expected):
    assert findings(path, text) == expected


STABLE_TEXT = "Answer in two sentences, cite the policy you rely on, never guess."


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        # a value that ends its own string still costs the stable strings after it
        (
            "p.json",
            '{"messages": [{"role": "system", "content": [\n'
            '  {"type": "text", "text": "Account: {{user.email}}"},\n'
            f'  {{"type": "text", "text": "{STABLE_TEXT}"}}]}}]}}',
            [("PFX103", 2, 38)],
        ),
        (
            "p.yaml",
            "messages:\n  - role: system\n    content: 'Request {{ nonce }}'\n"
            f"  - role: system\n    content: {STABLE_TEXT}\n  - role: user\n"
            "    content: '{{ question }}'\n",
            [("PFX102", 3, 23)],
        ),
        (
            "p.json",
            '{"tools": [{"name": "a", "description": "Cached for {{conversation_id}}."},\n'
            f' {{"name": "b", "description": "{STABLE_TEXT}"}}]}}',
            [("PFX102", 1, 53)],
        ),
        # the values after the first in the stable part are folded into it
        (
            "p.yaml",
            "system: 'Session {{ session_id }}'\ninstructions: |\n  Host {{ hostname }}\n"
            f"  {STABLE_TEXT}\n",
            [("PFX102", 1, 18)],
        ),
        # nothing stable after it: the user turn, or no other stable string
        (
            "p.yaml",
            f"messages:\n  - role: system\n    content: {STABLE_TEXT}\n  - role: system\n"
            "    content: 'Request {{ nonce }}'\n  - role: user\n    content: '{{ question }}'\n",
            [],
        ),
        ("p.json", '{"system": "Account: {{user.email}}", "user": "' + STABLE_TEXT + '"}', []),
    ],
)
def test_the_stable_strings_of_a_prompt_file_are_one_stable_part(path, text, expected):
    assert findings(path, text) == expected


def test_a_value_folds_the_later_stable_strings_into_its_message():
    text = "system: 'Session {{ session_id }}'\ninstructions: |\n  Host {{ hostname }}\n  Rules.\n"
    (found,) = structured.check(text, RuleContext("p.yaml", CODES))
    assert found.extra["folded_lines"] == [3]
    assert found.fix is None  # the end of its string is not the end of the stable part


@pytest.mark.parametrize(
    ("path", "text", "line"),
    [
        ("p.yaml", "system: |\n  ok\n bad: [\n", 3),
        ("p.yaml", "a: 'unclosed\n", 2),
        ("p.json", '{\n  "system": "x",\n}', 3),
        ("p.toml", 'a = "x"\nb = \n', 2),
    ],
)
def test_syntax_errors_name_the_line(path, text, line):
    with pytest.raises(SourceError) as info:
        structured.check(text, RuleContext(path, CODES))
    assert info.value.line == line


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{\n  // launch settings\n  "configurations": [{"name": "a", "args": ["//x"],},],\n}', []),
        ('{\n  /* agent */\n  "system": "Host {{ hostname }}\\nRules."\n}', [("PFX104", 3, 19)]),
        ('{\n  "system": "a // b {{ cwd }}\\nRules." // note\n}', [("PFX104", 2, 21)]),
    ],
)
def test_json_with_comments_is_read(text, expected):
    assert findings("p.json", text) == expected


@pytest.mark.parametrize(
    ("path", "text", "stable"),
    [
        ("p.yaml", "system_prompt: x\n", "all"),
        ("p.yaml", "agent:\n  templates:\n    system_template: x\n", "all"),
        ("p.yaml", "agent:\n  templates:\n    instance_template: x\n", "none"),
        ("p.yaml", "tools:\n  - description: x\n", "all"),
        ("p.yaml", "prompt: x\n", "marker"),
        ("p.json", '{"messages": [{"role": "system", "content": "x"}]}', "all"),
        ("p.json", '{"messages": [{"role": "user", "content": "x"}]}', "none"),
    ],
)
def test_stability_by_key(path, text, stable):
    strings = structured.prompt_strings(text, path)
    (string,) = [s for s in strings if s.value == "x"]
    assert string.stable == stable


BODY = "  You summarise the channel for the status page.\n  Write for customers.\n"


@pytest.mark.parametrize(
    ("path", "text", "keys"),
    [
        # a file named for prompts: its texts of several lines under a name are prompts
        ("prompts.yaml", "summary: |\n" + BODY + "model: gpt-4o\n", [("summary",)]),
        ("ops_prompts.yaml", "a:\n  b: |\n" + BODY.replace("  ", "    "), [("a", "b")]),
        ("prompts.json", '{"summary": "Line one.\\nLine two."}', [("summary",)]),
        # one-line values, list items and files not named for prompts are not
        ("prompts.yaml", "summary: one line\n", []),
        ("prompts.yaml", "notes:\n  - |\n" + BODY.replace("  ", "    "), []),
        ("ops.yaml", "summary: |\n" + BODY, []),
        ("stack_template.yaml", "user_data: |\n" + BODY, []),
    ],
)
def test_a_file_named_for_prompts_holds_named_prompts(path, text, keys):
    assert [s.path for s in structured.prompt_strings(text, path)] == keys


@pytest.mark.parametrize(
    ("path", "owner"),
    [
        (("system_prompt",), ()),
        (("tools", 0, "description"), ()),
        (("messages", 0, "content"), ()),
        (("planner", "system"), ("planner",)),
        (("agents", "executor", "system_prompt"), ("agents", "executor")),
        (("agent", "templates", "system_template"), ("agent",)),
    ],
)
def test_stable_owner(path, owner):
    assert structured.stable_owner(path) == owner


TWO_PROMPTS = (
    "incident:\n  system: |\n    Request {{ request_id }}\n    You summarise incidents for"
    " customers, in plain words and three sentences.\n"
    "runbook:\n  system: |\n    Host: {{ hostname }}\n    You help an engineer follow the"
    " runbook, one step at a time, with the exact command.\n"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # two named prompts: a stable part each, a finding each
        (TWO_PROMPTS, [("PFX102", 3, 13), ("PFX104", 7, 11)]),
        # one prompt's system text and tools: one stable part, later values folded
        (
            "system: |\n  Request {{ request_id }}\n  You summarise incidents for customers.\n"
            "tools:\n  - description: |\n      Host {{ hostname }} is where it runs, always.\n"
            "    parameters: {}\n",
            [("PFX102", 2, 11)],
        ),
    ],
)
def test_each_named_prompt_is_its_own_stable_part(text, expected):
    assert findings("p.yaml", text) == expected


def test_non_prompt_files_have_no_prompt_strings():
    text = "name: ci\non: push\njobs:\n  build:\n    steps:\n      - run: make\n"
    assert structured.prompt_strings(text, "ci.yaml") == []


RULES = "You are a careful assistant. Follow the rules below in every answer you give."


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("p.json", '\ufeff{"system": "Today is {{ date }}. ' + RULES + '"}\n'),
        ("p.toml", '\ufeffsystem = "Today is {{ date }}. ' + RULES + '"\n'),
        ("p.yaml", '\ufeffsystem: "Today is {{ date }}. ' + RULES + '"\n'),
    ],
)
def test_a_byte_order_mark_is_reported_and_the_file_still_read(path, text):
    assert [code for code, *_ in findings(path, text)] == ["PFX101", "PFX403"]


@pytest.mark.parametrize(
    ("path", "text", "position"),
    [
        ("p.yaml", "system: |\r\n  Hello.\r\n  Rules.\r\n", (1, 10)),
        ("p.json", '{"system": "Hello."}\r\n', (1, 21)),
        ("p.toml", 'name = "x"\r\nsystem = "Hello."\r\n', (1, 11)),
    ],
)
def test_crlf_in_a_prompt_file_is_reported(path, text, position):
    assert findings(path, text) == [("PFX401", *position)]


def test_crlf_fix_rewrites_the_whole_file():
    from prefixlint.linting.fixer import apply_edits

    text = "system: |\r\n  Hello.\r\n  Rules.\r\nother: 1\r\n"
    (finding,) = structured.check(text, RuleContext("p.yaml", CODES))
    fixed, _ = apply_edits(text, [finding.fix])
    assert fixed == text.replace("\r\n", "\n")


def test_files_that_are_not_prompt_files_stay_quiet():
    assert findings("p.yaml", "\ufeffname: x\r\nvalue: 1\r\n") == []
    assert findings("config.json", '{"schema": 1, "description": "Summarize."}\r\n') == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # YAML reads ``{{flow_name}}`` as a flow mapping used as a key: it composes, not loads.
        ("name: {{flow_name}}\ndescription: A flow.\n", []),
        (
            "name: {{flow_name}}\nsystem: |\n  Session {{ session_id }}. " + RULES + "\n",
            [("PFX102", 3, 11)],
        ),
        ("system: Summarize.\n---\ndescription: Answer.\n", []),
        (
            "system: Summarize.\n---\nsystem: Session {{ session_id }}. " + RULES + "\n",
            [("PFX102", 3, 17)],
        ),
    ],
)
def test_yaml_that_composes_but_does_not_load_is_still_read(text, expected):
    assert findings("p.yaml", text) == expected


def test_tool_descriptions_in_a_bare_list_of_tools_are_prompts():
    text = (
        '[{"name": "search", "description": "Session {session_id}. ' + RULES + '",'
        ' "input_schema": {"type": "object"}}]'
    )
    assert findings("p.json", text) == [("PFX102", 1, 45)]


@pytest.mark.parametrize("key", ["preprompt", "SYSPROMPT", "agentInstructions"])
def test_run_together_prompt_keys(key):
    text = f'{key}: "Session {{{{ session_id }}}}. {RULES}"\n'
    assert [code for code, *_ in findings("p.yaml", text)] == ["PFX102"]


@pytest.mark.parametrize(
    ("key", "quiet"),
    [
        ("command", True),
        ("prompt_name", True),
        ("template_path", True),
        ("model", True),
        ("system", False),
        ("instructions", False),
    ],
)
def test_strings_whose_key_names_no_text_stay_quiet(key, quiet):
    text = f'PromptHooks:\n  - {key}: "Host {{{{ hostname }}}}. {RULES}"\n'
    assert (findings("p.yaml", text) == []) is quiet


def test_keys_that_do_not_say_prompt_stay_quiet():
    assert findings("p.yaml", 'name: "Session {{ session_id }}. ' + RULES + '"\n') == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # prose or Markdown saved as .json is read as the text it is
        ("<tools>\n## Tools\nToday is {{ date }}.\n" + RULES * 8, [("PFX101", 3, 10)]),
        ('AVAILABLE TOOLS:\n1. search\n   {\n     "q": {"type": "string"}\n   }\n', []),
        # a file that starts like JSON and is broken is still unparsable, at its line
        ('{\n  "system": "x"\n}\n```\n', [("PFX902", 4, 1)]),
        ('\ufeff [\n  {"system": "x"},\n', [("PFX902", 3, 1)]),
        # JSON with comments that opens with a comment is JSON
        ('// settings\n{\n  "remoteEnv": {"DIR": "${localWorkspaceFolder}"}\n}\n', []),
        ('/* agent */\n{"system": "Host {{ hostname }}\\nRules."}\n', [("PFX104", 2, 18)]),
    ],
)
def test_a_json_file_is_read_as_what_it_starts_like(text, expected):
    found = check_text(text, "tools.json")
    assert sorted((d.code, d.span.line, d.span.column) for d in found) == expected
