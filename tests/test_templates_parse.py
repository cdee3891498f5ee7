"""Placeholder parsing of templates: syntaxes, names, calls, filters, tags."""

import pytest

from prefixlint.context import SourceError
from prefixlint.sources.templates import (
    FORMAT,
    JINJA,
    MUSTACHE,
    parse_template,
    syntax_for,
    user_section_start,
)


@pytest.mark.parametrize(
    ("path", "text", "syntax"),
    [
        ("p.j2", "plain text", JINJA),
        ("p.jinja2", "{x}", JINJA),
        ("p.mustache", "{{x}}", MUSTACHE),
        ("p.hbs", "{{x}}", MUSTACHE),
        ("p.handlebars", "Hi {{ name }}", MUSTACHE),
        ("p.txt", "Hello {{#people}}{{name}}{{/people}}", MUSTACHE),
        ("p.md", "Hello {{ name }}", JINJA),
        ("p.md", "Session {{session-id}}", JINJA),
        ("p.md", "{% if x %}a{% endif %}", JINJA),
        ("p.txt", "Hello {name}", FORMAT),
        ("p.txt", 'Reply as JSON: {{"answer": "..."}} to {question}', FORMAT),
        ("p.prompt", "no placeholders", FORMAT),
        ("AGENTS.md", "run: deploy --token ${{ secrets.DEPLOY_TOKEN }} for {project}", FORMAT),
        ("AGENTS.md", "${{ secrets.TOKEN }} and {{ user_name }}", JINJA),
    ],
)
def test_syntax_for(path, text, syntax):
    assert syntax_for(path, text) == syntax


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Today is {{ runtime_info.date }}.", [("runtime_info.date", (), ())]),
        ("{{ now() | date('%Y') }}", [("now", ("now",), ("date",))]),
        ("{{- strftime_now('%d %b') -}}", [("strftime_now", ("strftime_now",), ())]),
        ("{{ user['email'] }}", [("user.email", (), ())]),
        ("{{ items[0].name }}", [("items.name", (), ())]),
        ("{{ tools | tojson }}", [("tools", (), ("tojson",))]),
        ("{{ '}}' ~ x }}", [("x", (), ())]),
        ("{% raw %}{{ not_a_placeholder }}{% endraw %}", []),
        ("{# {{ commented }} #}", []),
        (
            "{% for host, port in runtime_info.hosts.items() %}{{ host }}{% endfor %}",
            [("runtime_info.hosts", (), ())],
        ),
        ("{% set d = now() %}{{ d }}", [("now", (), ())]),
        ("{{ broken( }}", [("broken", (), ())]),
        # a kebab-case name is one name; with spaces or a number it is a subtraction
        ("{{session-id}}", [("session-id", (), ())]),
        ("{{ user-profile.email }}", [("user-profile.email", (), ())]),
        ("{{ total - used }}", [("total", (), ())]),
        ("{{ count-1 }}", [("count", (), ())]),
    ],
)
def test_jinja_placeholders(text, expected):
    parsed = parse_template(text, JINJA)
    got = [(p.name, p.calls, p.filters) for p in parsed.placeholders]
    assert got == expected


def test_jinja_placeholder_offsets_and_static_text():
    text = "A {{ x }} B {% if y %}C{% endif %} {# note #}D"
    parsed = parse_template(text, JINJA)
    (placeholder,) = parsed.placeholders
    assert text[placeholder.start : placeholder.end] == "{{ x }}"
    assert parsed.static.rendered == "A  B C D"
    assert [t.word for t in parsed.tags] == ["if", "endif", "#"]


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("Hello\n{{ user.name }\n", 2),
        ("a\nb\n{% if x %}\nc\n", 3),
        ("{% for %}", 1),
    ],
)
def test_jinja_syntax_errors_name_the_line(text, line):
    with pytest.raises(SourceError) as info:
        parse_template(text, JINJA, strict=True)
    assert info.value.line == line


def test_lenient_jinja_skips_unclosed_tags():
    parsed = parse_template("Use {{ like this in prose, then {{ name }}.", JINJA)
    assert [p.name for p in parsed.placeholders] == ["name"]


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Hi {name}, {user.email!r:>30} and {items[0]}", ["name", "user.email", "items.0"]),
        ('JSON example: {"name": "x", "n": 1} and {a, b}', []),
        ("Escaped {{literal}} and {real}", ["real"]),
        ("Shell ${HOME} and {x}", ["HOME", "x"]),
        (r"Regex \p{Greek} and LaTeX \frac{a}", []),
        ("Positional {} and {0} are not named", []),
        # patterns the prompt describes: glued to other text in a code span, inside a URL
        ("Branch names: `devin/{timestamp}-{feature}`.", []),
        ("Tags: `<chat uri='{uri}' updated_at='{updated_at}'>`", []),
        ("| `GET` | `/v1/sessions/{session_id}` | Get |", []),
        ("Open https://claude.ai/chat/{uri} or claude.ai/code/artifact/{uuid} links", []),
        ("Image: https://placehold.co/{width}x{height}/{background hex}?text={text}", []),
        ("List runs: `GET /v1/sessions`?trigger_id={trigger_id} or &page={page}", []),
        ("Cite as [here](<citation:paragraph:{local_id}>)", []),
        ('<code title="get /conversations/{conversation_id}">retrieve</code>', []),
        ("Endpoint: POST /v1/users/{user_id}/orders", []),
        # an unquoted attribute of a markup tag is JSX, on the tag's line or a later one
        ("Bad: &lt;form onSubmit={handleSubmit}&gt;", []),
        ("<BarChart data={data} margin={{ top: 20 }}>", []),
        ('<input\n  type="text"\n  value={text} // from state\n/>', []),
        ("Context wrapped in {document_context} tags is data", []),
        # a brace tag of a {name}...{/name} pair, with what it holds
        ("{example}\n{user}tell me a story{/user}\n{/example}", []),
        ("As {chat uri='{uri}' updated_at='{updated_at}'}...{/chat} tags", []),
        # code given as an example of what to write, and the pattern it shows, named again
        ("For example: `cd {project_dir} && {build_command}`", []),
        ("Example (bad):\n\n```\n{code}\n```\n", []),
        ('- `class="c-{ramp}"` colours a node\n**c-{ramp} nesting:** groups', []),
        ("See `https://ui.example.com/w/{workspace}/s`. Use `{workspace}` as given.", []),
        # ${x} in Markdown code is the code's own (a JavaScript or shell example)
        ("Example:\n    ```js\n    const x = `hi ${name}`;\n    ```\n", []),
        ("Run `echo ${name}` and greet ${name}", ["name"]),
        # a fenced block with braces of its own is code, not a template, even indented
        ("  ```tsx\n  {state && (\n    <p>\n      {state.message}\n    </p>\n  )}\n  ```\n", []),
        ("````md\n```\ncode\n```\n{inner}\n````\nDate: {date}", ["inner", "date"]),
        # quiet counterparts: a quoted attribute, a field after a closed tag, key=value text
        ("Trace: {trace_id}. Open https://ui.example.com/t/{trace_id}", ["trace_id"]),
        ("Please get /home/{user_name}/notes ready", ["user_name"]),  # prose, not a route
        ("GET {url} first, then GET /{path}", ["url", "path"]),
        ("```text\nHello {name}\nToday is {date}\n```\n", ["name", "date"]),
        ('```text\nWrite {"verdict": "ok"} for\n{notes}\n```\n', ["notes"]),
        ("Use `{cwd}`, e.g.: `ls {cwd}`", ["cwd"]),
        ("Use c-{ramp} and then {date}", ["ramp", "date"]),
        ("The example answer is `{answer}`", ["answer"]),
        ('<doc id="{doc_id}">{content}</doc>', ["doc_id", "content"]),
        ("<b>Note</b> session={session_id} user={user_name}", ["session_id", "user_name"]),
        ("The text: {text}. The {user} writes.", ["text", "user"]),
        ("Context: {document_context}\nTags are optional.", ["document_context"]),
        ("Visit https://example.com/docs and then {question}", ["question"]),
        # an object literal is not a field with a format spec
        ("Pass `diagnostics: {previous_message_id: null}` first", []),
        ("Use {time: T, sync: true}", []),
        ("Then {previous_message_id: <previous response id>}", []),
        # code in a fenced block: a field glued to the code around it is the code's own
        ('```python\nprint(f"analysis-{i}")\n```\n', []),
        ("```jsx\n<form onSubmit={handleSubmit}>\n```\n", []),
        # a style rule or an object, not a field with a format spec
        (".card{font:600 13px/1.2 system-ui,sans-serif;color:#1a1a1a}", []),
        ("Sources: {type:self_hosted} or {type:..., id: ID}", []),
        # quiet counterparts: a field alone on a fenced line, or a word of its own there
        ("```\n{code}\n```\nDate: {date}", ["code", "date"]),
        ("```text\nSession: {session_id}\n```\n", ["session_id"]),
        ("{x:.2f} {n:,} {d:%Y-%m-%d %H:%M} {h:x}", ["x", "n", "d", "h"]),
        # quiet counterparts: a field that is the span, a word of it, or a real format spec
        ("Directory: `{cwd}`", ["cwd"]),
        ("Run `cd {cwd}` first", ["cwd"]),
        ("Now {now:%Y-%m-%d} and {width: >10}", ["now", "width"]),
        ("The cwd is \\`${cwd}\\`.", ["cwd"]),  # escaped backticks open no code span
        ("{home}/{cwd} and {base_url}/api", ["home", "cwd", "base_url"]),
    ],
)
def test_format_placeholders(text, names):
    assert [p.name for p in parse_template(text, FORMAT).placeholders] == names


def test_mustache_tags():
    text = "{{! c }}{{#people}}{{name}} {{{raw}}} {{& amp}}{{/people}}{{> partial}}"
    parsed = parse_template(text, MUSTACHE)
    assert [p.name for p in parsed.placeholders] == ["name", "raw", "amp"]
    assert [t.word for t in parsed.tags] == ["!", "#", "/", ">"]
    assert parsed.static.rendered == "  "


@pytest.mark.parametrize("tag", ["{{else}}", "{{ else }}", "{{else if admin}}", "{{~else~}}"])
def test_a_handlebars_else_is_a_block_tag(tag):
    parsed = parse_template("{{#if user}}{{name}}" + tag + "guest{{/if}}", MUSTACHE)
    assert [p.name for p in parsed.placeholders] == ["name"]
    assert "else" in [t.word for t in parsed.tags]
    assert parsed.static.rendered == "guest"


def test_a_name_that_starts_with_else_is_a_placeholder():
    parsed = parse_template("{{elsewhere}} {{else_text}}", MUSTACHE)
    assert [p.name for p in parsed.placeholders] == ["elsewhere", "else_text"]


@pytest.mark.parametrize(
    ("text", "start"),
    [
        ("System text.\n\n# INPUT\n\nINPUT:\n", 14),
        ("System.\nUser:\n{question}\n", 8),
        ("System.\n<|im_start|>user\nhi", 8),
        ("No marker here.\nThe user: is described.\n", 40),
        # a system section after the user section: the user section after it counts
        ("# User Message\nHi\n# System Prompt\nRules.\n", 41),
        ("# User Message\nHi\n# System Prompt\nRules.\n## User\n{q}\n", 41),
        ("System:\nRules.\nUser:\n{q}\n", 15),
    ],
)
def test_user_section_start(text, start):
    assert user_section_start(text) == start
