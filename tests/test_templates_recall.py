"""Template rules on the shapes real prompts take: name forms, expressions, dates, seams,
Markdown whitespace, and where in the template a value sits."""

import pytest

from prefixlint.context import RuleContext
from prefixlint.sources import source_module
from prefixlint.vocabulary import classify_name

TRAILING_ON = {"PFX402": {"trailing-whitespace": True}}  # as by default

VOLATILE = frozenset({"PFX101", "PFX102", "PFX103", "PFX104"})
RULES = "You are a careful assistant. Follow the rules below in every answer you give.\n"


def check(path, text, codes):
    ctx = RuleContext(path, frozenset(codes), options=TRAILING_ON)
    return source_module(path, text).check(text, ctx)


def findings(path, text, codes=VOLATILE):
    return sorted((d.code, d.span.line, d.span.column) for d in check(path, text, codes))


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("currentDateTime", "PFX101"),
        ("CURRENTDATE", "PFX101"),
        ("CURRENTDATETIME", "PFX101"),
        ("current-date", "PFX101"),
        ("session_id", "PFX102"),
        ("traceId", "PFX102"),
        ("SPAN_ID", "PFX102"),
        ("run.id", "PFX102"),
        ("conversationID", "PFX102"),
        ("toolcallid", "PFX102"),
        ("PREFERRED_NAME", "PFX103"),
        ("preferredname", "PFX103"),
        ("USER_AGENT", "PFX103"),
        ("userInstructions", "PFX103"),
        ("user.memory", "PFX103"),
        ("user_preferences", "PFX103"),
        ("gitRoot", "PFX104"),
        ("GITROOT", "PFX104"),
        ("isGitRepo", "PFX104"),
        ("directory_listing", "PFX104"),
        ("shell", "PFX104"),
        ("currentbranch", "PFX104"),
        ("serverName", "PFX104"),
        ("DB_HOST", "PFX104"),
        ("env", "PFX104"),
    ],
)
def test_volatile_name_forms(name, code):
    assert classify_name(name) == code


@pytest.mark.parametrize(
    "name",
    [
        "runtime",
        "RUNTIME",
        "update",
        "candidate",
        "timeline",
        "overtime",
        "agent_memory",
        "tool_profile",
        "stack_trace",
        "role",
        "document_id",
        "custom_instructions",
        "bot_display_name",
        "default_locale",
        "assistant_name",
        "env_name",
        "hosted_model",
        "server_count",
    ],
)
def test_words_that_only_look_volatile(name):
    assert classify_name(name) is None


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        # ids and dates at the top of the prompt, in every placeholder syntax
        ("p.j2", "Session: {{ session_id }}\n" + RULES, [("PFX102", 1, 10)]),
        ("p.mustache", "Trace {{trace_id}}\n" + RULES, [("PFX102", 1, 7)]),
        ("p.txt", "Span %(span_id)s\n" + RULES, [("PFX102", 1, 6)]),
        ("p.txt", "Run $run_id\n" + RULES, [("PFX102", 1, 5)]),
        ("p.md", "Run `echo $HOSTNAME` first.\n" + RULES, []),
        ("p.md", "Match foo($HOSTNAME) and $hostname_x.\n" + RULES, []),
        ("p.txt", "Run ${run_id}\n" + RULES, [("PFX102", 1, 5)]),
        ("p.txt", "Today is {CURRENTDATE}.\n" + RULES, [("PFX101", 1, 10)]),
        ("p.md", "The date is {{currentDateTime}}.\n" + RULES, [("PFX101", 1, 13)]),
        ("p.md", "Call me {{PREFERRED_NAME}}.\n" + RULES, [("PFX103", 1, 9)]),
        ("p.md", "Agent: {{USER_AGENT}}\n" + RULES, [("PFX103", 1, 8)]),
        # placeholders holding expressions or spaces, classified by the words inside
        ("p.md", "Root: {{gitRoot or cwd}}\n" + RULES, [("PFX104", 1, 7)]),
        ("p.md", "Files:\n{{directory listing}}\n" + RULES, [("PFX104", 2, 1)]),
        ("p.mustache", "Agent {{ user agent }}\n" + RULES, [("PFX103", 1, 7)]),
        ("p.j2", "{{ (user.timezone or 'UTC') | upper }}\n" + RULES, [("PFX103", 1, 1)]),
        # names inside mustache sections, and fields of volatile objects
        ("p.mustache", "{{#user}}Hi {{name}}!{{/user}}\n" + RULES, [("PFX103", 1, 13)]),
        ("p.mustache", "{{#each users}}{{this.email}}{{/each}}\n" + RULES, [("PFX103", 1, 16)]),
        ("p.mustache", "{{#tools}}{{name}}: {{description}}{{/tools}}\n" + RULES, []),
        ("p.j2", "Bio: {{ user_profile.bio }}\n" + RULES, [("PFX103", 1, 6)]),
        ("p.j2", "Format: {{ date_format.short }}\n" + RULES, []),
        # environment variables read by name, or listed by a loop over them
        ("p.j2", "Warehouse: {{ env.WAREHOUSE_HOST }}\n" + RULES, [("PFX104", 1, 12)]),
        (
            "p.md",
            "Variables:\n{% for key, value in env.items() %}\n- {{ key }}={{ value }}\n"
            "{% endfor %}\n" + RULES,
            [("PFX104", 3, 3)],
        ),
        ("skprompt.txt", "Connected to {{$serverName}}.\n" + RULES, [("PFX104", 1, 14)]),
        ("p.j2", "Deploy target: {{ env_name }}\n" + RULES, []),
        # a request id as the first line of a role block
        ("p.prompt", '{{role "system"}}\n{{request_id}}\n' + RULES, [("PFX102", 2, 1)]),
        # static text after the value on its own line is lost too
        (
            "p.json",
            '{"tools": [{"name": "s", "description": "Trace {trace_id}. ' + RULES.strip() + '"}]}',
            [("PFX102", 1, 48)],
        ),
        # a few words after it on its line are not worth a finding
        ("p.j2", RULES + "\n## Context\nToday's date is {{ today }} (UTC).\n", []),
        # a JavaScript template literal's call, read by its name
        ("p.txt", "Commands run in ${cwd.toPosix()}.\n" + RULES, [("PFX104", 1, 17)]),
        ("p.txt", "Width ${settings.width.toFixed(0)} px.\n" + RULES, []),
    ],
)
def test_volatile_placeholders(path, text, expected):
    assert findings(path, text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Today is 01-12-2026.\n" + RULES, [("PFX101", 1, 10)]),
        ("The date is 1.12.2026\n" + RULES, [("PFX101", 1, 13)]),
        ("Current date: 2026/12/01\n" + RULES, [("PFX101", 1, 15)]),
        ("The time is 10:30 AM on 2026-12-01.\n" + RULES, [("PFX101", 1, 13)]),
        ("It is Monday, December 1, 2026.\n" + RULES, [("PFX101", 1, 7)]),
        ("Today is Monday.\n" + RULES, [("PFX101", 1, 10)]),
        ("Today's date and time is 3:45 PM EDT on Tuesday.\n" + RULES, [("PFX101", 1, 26)]),
        ("It's currently 14:05.\n" + RULES, [("PFX101", 1, 16)]),
        ("Current Date/Time: 2025-05-14 10:00\n" + RULES, [("PFX101", 1, 20)]),
        ("**Current date**: 2025-09-03\n" + RULES, [("PFX101", 1, 19)]),
        ("Today's date is: 04/30/2024\n" + RULES, [("PFX101", 1, 18)]),
        ("The current system time is 2025-08-24.\n" + RULES, [("PFX101", 1, 28)]),
        ("Always use today's date, which is November 9, 2025.\n" + RULES, [("PFX101", 1, 35)]),
        (
            "The current date and hour including timezone is Thu May 14 2026 19:00:00 GMT.\n"
            + RULES,
            [("PFX101", 1, 49)],
        ),
        ("The current time (UTC) is 10:30.\n" + RULES, [("PFX101", 1, 27)]),
        ("The current date in Oslo is 2026-12-01.\n" + RULES, [("PFX101", 1, 29)]),
        ("Remember the current actual time: Friday, April 03, 2026\n" + RULES, [("PFX101", 1, 35)]),
        ("Current date: YYYY-MM-DD\n" + RULES, [("PFX101", 1, 15)]),
        ("Write dates as YYYY-MM-DD.\n" + RULES, []),
        # quiet counterparts: no "now" noun, or a date that is not the current one
        ("The release date, which is 2024-05-01, is fixed.\n" + RULES, []),
        ("The current date format is ISO, as in 2024-01-15.\n" + RULES, []),
        # a positional field filled with the date
        ("The current date is {}. Be kind.\n" + RULES, [("PFX101", 1, 21)]),
        ("Current date: %s\n" + RULES, [("PFX101", 1, 15)]),
        ("You know the current date Wednesday, March 06, 2024.\n" + RULES, [("PFX101", 1, 27)]),
        ("Ask about today's date Monday, 3 June 2024 first.\n" + RULES, [("PFX101", 1, 24)]),
        ("Remind them of the date March 5, 2024 when it began.\n" + RULES, []),
        ("Write the current date 2024-01-01 in ISO form.\n" + RULES, []),
        ("**Founded**: 2019-01-01\n" + RULES, []),
        ("Use {} for the date and %s for the name.\n" + RULES, []),
        ("Edit it 10:30 times and do it now 10 times.\n" + RULES, []),
        ("Founded 01-12-2019 in Oslo.\n" + RULES, []),
        ("It is 5 steps away. Today is a good day.\n" + RULES, []),
        ("If today is Friday, remind the user of the weekly report.\n" + RULES, []),
        ("For example: today's date is 2024-01-15, so ...\n" + RULES, []),
        ('For example, if <env> says "Today\'s date: 2025-07-01", search for 2025.\n' + RULES, []),
        ('Read the header. E.g. "Current date: 2025-07-01" means July.\n' + RULES, []),
        ('The header reads: "Current date: 2025-07-01".\n' + RULES, [("PFX101", 1, 34)]),
        # "it is now" or "it is currently" straight before the date
        ("It is now 1 Dec 2026, 09:12.\n" + RULES, [("PFX101", 1, 11)]),
        ("It is now 3 steps long.\n" + RULES, []),
        # a bare date label with a date and nothing else on its line: a rendering's header
        ("Date: 30-11-2026\n" + RULES, [("PFX101", 1, 7)]),
        ("**Date:** 1 Dec 2026, 09:12\n" + RULES, [("PFX101", 1, 11)]),
        ("- Time: 09:12 UTC\n" + RULES, [("PFX101", 1, 9)]),
        ("Effective date: 2026-01-01\n" + RULES, []),
        ("Date: 30-11-2026 is when the policy began.\n" + RULES, []),
        ("```\nDate: 30-11-2026\n```\n" + RULES, []),
        # a field of a record written out (an order in an example), not the prompt's header
        ("For instance:\norder_number: 2020230\ndate: 2023-04-23\n" + RULES, []),
        ("Orders:\ndate: 2023-04-23\nstore_location: Seattle\n" + RULES, []),
        (RULES + "\nDate: 30-11-2026\n", []),
        # a moment to the second: the stamp of the run that wrote the file
        ("Snapshot generated 2026-11-30T23:41:07Z by the sync job.\n" + RULES, [("PFX101", 1, 20)]),
        ("Built at 2026-11-30 23:41:07 UTC.\n" + RULES, [("PFX101", 1, 10)]),
        ("Call the tool with after='2025-01-01T00:00:00Z'.\n" + RULES, []),
        ('    {"timestamp": "2026-04-20T14:03:11Z"}\n' + RULES, []),
        ("Use `2026-04-20T14:03:11Z` as the format.\n" + RULES, []),
        ("```\nlogged 2026-04-20 14:03:11\n```\n" + RULES, []),
    ],
)
def test_pasted_current_dates(text, expected):
    assert findings("p.txt", text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "<env>\nWorking directory: /home/ana/app\nPlatform: linux\n</env>\n" + RULES,
            [("PFX104", 2, 20)],
        ),
        ("- OS Version: Darwin 25.6.0\n" + RULES, [("PFX104", 1, 15)]),
        ("Is directory a git repo: No\n" + RULES, [("PFX104", 1, 26)]),
        ("The user's email address is ana@example.com. Greet her.\n" + RULES, [("PFX103", 1, 29)]),
        ("User timezone: Europe/Oslo\n" + RULES, [("PFX103", 1, 16)]),
        ("Session ID: 3f2a9c1e-8b7d-4e6f-9a0b-1c2d3e4f5a6b\n" + RULES, [("PFX102", 1, 13)]),
        # quiet counterparts: a label before prose, someone else's address, a marked blank
        ("Platform: use the web tool for this.\n" + RULES, []),
        ("Support email: help@example.com\n" + RULES, []),
        ("Shell: prefer short commands\n" + RULES, []),
        ("Working directory: [project-dir]\n" + RULES, []),
        ("Session ID: the id of the session\n" + RULES, []),
        ("Example output:\n```\npid: 42\ncwd: /Users/me/proj\n```\n" + RULES, []),
    ],
)
def test_pasted_values_of_the_machine_and_the_user(text, expected):
    assert findings("p.txt", text) == expected


@pytest.mark.parametrize(
    "text",
    [
        # every value in the final section, after the static text
        RULES * 3 + "\n## Session\nDate: {{ date }}\nUser: {{ user_name }}\nUse this context.\n",
        RULES * 3 + "\n<CONTEXT>\nThe working directory is {{ cwd }}\n</CONTEXT>\n",
        RULES * 3 + "\nDate: {{ today }}\nSession: {{ session_id }}\n",
        # followed only by closing tags, empty wrappers and labels that introduce values
        RULES * 3 + "\n# This run\n<env>\nRepository: {{ repo_name }}\n</env>\n\n<diff>\n"
        "{{ diff }}\n</diff>\n",
        RULES * 3 + "\nTicket: {{ ticket_ref }}\nCustomer: {{ customer.name }}\n\nCustomer email:\n"
        "{{ ticket.body }}\n\nAgent notes:\n{{ agent.notes }}\n",
    ],
)
def test_values_in_the_final_section_are_quiet(text):
    assert findings("p.j2", text) == []


def test_a_value_at_the_top_of_a_sectioned_prompt_is_reported():
    text = "# Context\nDate: {{ today }}\n\n# Rules\n" + RULES * 3
    assert findings("p.md", text) == [("PFX101", 2, 7)]


def test_a_value_inside_a_wrapper_before_static_text_is_reported():
    text = "<env>\nRepository: {{ repo_name }}\n</env>\n\nCustomer email:\n" + RULES * 2
    assert findings("p.md", text) == [("PFX104", 2, 13)]


def test_a_value_before_much_static_text_in_the_final_section_is_reported():
    text = RULES + "\n## Context\nDate: {{ today }}\n" + RULES * 6
    assert findings("p.md", text) == [("PFX101", 4, 7)]


def test_messages_count_one_token_in_the_singular():
    (finding,) = check("p.j2", "Id {{ session_id }}\nRules.\n", VOLATILE)
    assert "the 2 static tokens after it" in finding.message
    assert "the 1 token before it" in finding.message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Ticket#{{ n }} is open.\n", [("PFX404", 1, 8)]),
        ("Region:{{ code }} here.\n", [("PFX404", 1, 8)]),
        ("Use a-{{ b }} now.\n", [("PFX404", 1, 7)]),
        ("See ({{ x }}) and # {{ y }} and : {{ z }}.\n", []),
        ("Open <step_{{ step_number }}> now.\n", []),
        ("Pay **${{ price }}** now.\n", []),
        ("Call f({{ x }}) and g[{{ y }}] now.\n", []),
        ("Use key={{ v }} here.\n", [("PFX404", 1, 9)]),
        ("See https://github.com/{{ repo }} and /home/{{ dir }}/x.\n", []),
        ("Mail support@{{ domain }} or file.{{ ext }} now.\n", []),
        # after the first per-request value, the tokens are recomputed anyway
        ("Question: {{ question }}\nScore={{ s }} here.\n", []),
        ("Today is {{ current_date }}.\nScore={{ s }} here.\n", []),
        ("Score={{ s }} here.\nQuestion: {{ question }}\n", [("PFX404", 1, 7)]),
    ],
)
def test_placeholder_glued_through_a_mark(text, expected):
    assert findings("p.j2", text, {"PFX404"}) == expected


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        # Markdown hard line breaks are intentional
        ("p.md", "Name: Ada  \nRole: assistant  \nRules.\n", []),
        ("p.md", "Name: Ada  \n\nRules.  \n", []),
        # ...but a single space, a tab or a blank line of spaces is trailing whitespace
        ("p.md", "Name: Ada \nRules.\n", [("PFX402", 1, 10)]),
        ("p.md", "Name: Ada \t\nRules.\n", [("PFX402", 1, 10)]),
        ("p.md", "Name.\n   \nRules.\n", [("PFX402", 2, 1)]),
        # a Cursor rule file is Markdown (with front matter)
        ("r.mdc", "---\nalwaysApply: true\n---\nName: Ada  \nRules. \n", [("PFX402", 5, 7)]),
        # outside Markdown, two spaces are trailing whitespace
        ("p.txt", "Name: Ada  \nRules.\n", [("PFX402", 1, 10)]),
        # a missing blank line before one heading where all others have one
        ("p.md", "T.\n\n# A\nx\n\n# B\ny\n# C\nz\n\n# D\nw\n", [("PFX402", 8, 1)]),
        # spacing without a convention (more than a quarter differ) is not drift
        ("p.md", "T.\n\n# A\nx\n# B\ny\n\n# C\nz\n# D\nw\n\n# E\nv\n", []),
        # headings of another level keep their own spacing
        ("p.md", "T.\n\n# A\nx\n## a1\ny\n\n# B\nz\n## b1\n\n# C\nw\n", []),
        # comments in a fenced code block are not headings
        ("p.md", "T.\n\n# A\nx\n\n# B\n```\ny\n# c\n# d\n```\n\n# C\nz\n", []),
    ],
)
def test_markdown_whitespace(path, text, expected):
    assert findings(path, text, {"PFX402"}) == expected


LONG_NOTE = "This example shows every feature of the format, one section after another. " * 4


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        # a comment renders nothing, however long, and whatever it holds
        ("p.hbs", "{{!\n  " + LONG_NOTE + "\n  \n}}\n" + RULES, []),
        ("p.hbs", "{{!-- Today is {{today}}. " + LONG_NOTE + " --}}\n" + RULES, []),
        ("p.hbs", "{{!-- Today is {{today}} --}}\n" + RULES, []),
        # the text after it is still the template's
        ("p.hbs", "{{! " + LONG_NOTE + "}}\nToday is {{today}}.\n" + RULES, [("PFX101", 2, 10)]),
        ("p.hbs", "{{! " + LONG_NOTE + "}}\nRules. \n" + RULES, [("PFX402", 2, 7)]),
    ],
)
def test_long_mustache_comments(path, text, expected):
    assert findings(path, text, VOLATILE | {"PFX402"}) == expected


def test_missing_blank_line_fix_inserts_one():
    text = "T.\n\n# A\nx\n\n# B\ny\n# C\nz\n\n# D\nw\n"
    (finding,) = check("p.md", text, {"PFX402"})
    (edit,) = finding.fix.edits
    assert (edit.start, edit.end, edit.replacement) == (text.index("# C"), text.index("# C"), "\n")


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        # Semantic Kernel skprompt.txt: {{$input}} is the request, {{time.now}} a clock
        ("skprompt.txt", "It is {{time.now}}.\n" + RULES + "{{$input}}\n", [("PFX101", 1, 7)]),
        ("skprompt.txt", RULES + "{{$history}}\nUser: {{$input}}\n", []),
        # handlebars files: mustache tags, triple braces, sections, and comments as text
        ("welcome.hbs", "Session {{sessionId}}\n" + RULES, [("PFX102", 1, 9)]),
        ("card.handlebars", "Hi {{{user.first_name}}}.\n" + RULES, [("PFX103", 1, 4)]),
        ("list.hbs", "{{#each users}}{{this.email}}{{/each}}\n" + RULES, [("PFX103", 1, 16)]),
        ("note.hbs", "{{!-- filled with the session id --}}\n" + RULES, []),
        ("last.hbs", RULES + "Session {{sessionId}}\n", []),
        # Prompty: YAML front matter, then role lines
        (
            "chat.prompty",
            "---\nname: Chat\nmodel:\n  api: chat\n---\nsystem:\nSession {{session_id}}\n"
            + RULES
            + "\nuser:\n{{question}} at {{now}}\n",
            [("PFX102", 7, 9)],
        ),
        # Dotprompt: front matter and role blocks; the user block is not the stable part
        (
            "answer.prompt",
            '---\nmodel: m\n---\n{{role "system"}}\n'
            + RULES
            + '{{role "user"}}\nDate {{date}}\n{{question}}\n',
            [],
        ),
    ],
)
def test_prompt_file_kinds(path, text, expected):
    assert findings(path, text) == expected


GUIDANCE = (
    "Guidance: answer from the retrieved passages only, quote the passage you rely on, say"
    " when the passages do not answer the question, keep to three short paragraphs, use the"
    " customer's terms for products, never promise refunds or delivery dates, and end with"
    " one line that says which passages you used and why they apply to this question.\n"
)


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        # the question before a paragraph of static guidance in a template file
        ("answer.j2", "Question: {{ question }}\n\n" + GUIDANCE, [("PFX301", 1, 11)]),
        ("answer.j2", "Question: {{ question }}\n\nAnswer concisely.\n", []),
        ("answer.j2", GUIDANCE + "\nQuestion: {{ question }}\n", []),
        # a user-turn value of a prompt file may carry a paragraph of its own instructions
        ("agent.yaml", "task_template: |\n  {{ task }}\n  " + GUIDANCE, []),
        # fixed text named like input is not the request: the stable part goes on
        ("a.j2", "{{ system_message }}\n" + GUIDANCE, []),
        ("a.j2", "{{ welcome_message }}\nSession {{ session_id }}\n" + GUIDANCE, []),
        # a field that describes a tool's or an agent's inputs is not the request
        ("a.j2", "{% for agent in agents %}{{ agent.inputs }}{% endfor %}\n" + GUIDANCE, []),
        # what a writing or review request brings: a diff, a topic, a document's text
        (
            "commit.j2",
            "Write a commit message for:\n\n{{ diff }}\n\n" + GUIDANCE,
            [("PFX301", 3, 1)],
        ),
        ("outline.txt", "Topic: {topic}\n\n" + GUIDANCE, [("PFX301", 1, 8)]),
        ("review.j2", "Contract:\n{{ contract_text }}\n\n" + GUIDANCE, [("PFX301", 2, 1)]),
        ("commit.j2", GUIDANCE + "\n{{ diff }}\n", []),
        ("a.j2", "{{ git_diff }}\n" + GUIDANCE, []),
        # code to review, and a slash command's arguments
        ("review.j2", "Review this code:\n{{ code }}\n\n" + GUIDANCE, [("PFX301", 2, 1)]),
        ("review.md", "Review PR $ARGUMENTS now.\n\n" + GUIDANCE, [("PFX301", 1, 11)]),
        ("review.md", "Run `gh pr view $ARGUMENTS` first.\n\n" + GUIDANCE, []),
        # the project's own instructions and a tool call's arguments are not the request
        ("agent.j2", "{{ project_context }}\n" + GUIDANCE, []),
        ("agent.j2", "{{ repo_context }}\n" + GUIDANCE, []),
        ("chat.j2", "{{ tool_call.arguments }}\n" + GUIDANCE, []),
        # what the user asked for by its plainer names: the prompt, the goals, the plan made
        # for this task, the summary of the conversation so far
        ("plan.j2", "The user asked: {{ prompt }}\n\n" + GUIDANCE, [("PFX301", 1, 17)]),
        ("agent.txt", "GOALS:\n\n{goals}\n\n" + GUIDANCE, [("PFX301", 3, 1)]),
        ("step.j2", "Plan:\n{{ step_by_step_plan }}\n\n" + GUIDANCE, [("PFX301", 2, 1)]),
        ("code.yaml", "system: |\n  {SUMMARY}\n  " + GUIDANCE, [("PFX301", 2, 3)]),
        ("a.j2", "{{ system_prompt }}\n" + GUIDANCE, []),
        ("a.j2", "{{ base_prompt }}\n" + GUIDANCE, []),
        ("a.j2", "{{ skillsPrompt }}\n" + GUIDANCE, []),
        ("s.j2", "<events>\n{{ events }}\n</events>\n" + GUIDANCE, [("PFX301", 2, 1)]),
        (
            "fix.j2",
            "Fix issue #{{ issue_number }}: {{ issue_title }}\n" + GUIDANCE,
            [("PFX301", 1, 12)],
        ),
        ("fix.j2", "Fix {{ example_issue_title }} like this.\n" + GUIDANCE, []),
    ],
)
def test_question_before_static_guidance(path, text, expected):
    assert findings(path, text, {"PFX301"}) == expected


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        # a date after the question, before a block of static guidance: a warning
        (
            "a.j2",
            "Question: {{ question }}\nToday is {{ today }}.\n\n" + GUIDANCE,
            [("PFX101", 2, 10, "warning")],
        ),
        (
            "a.txt",
            "Task: {task}\nSession {session_id}\n\n" + GUIDANCE,
            [("PFX102", 2, 9, "warning")],
        ),
        # a short tail after it is not worth a finding
        ("a.txt", "Question: {question}\nAsked at {timestamp}.\nAnswer in one paragraph.\n", []),
        # in the user section the prompt is the request's anyway
        ("a.md", RULES + "\n## User\n{{ question }}\nToday is {{ today }}.\n\n" + GUIDANCE, []),
        # a value before the question leads, and the one after it is folded into it
        (
            "a.j2",
            "Today is {{ today }}.\n"
            + RULES
            + "Q: {{ question }}\nUser {{ user_name }}\n\n"
            + GUIDANCE,
            [("PFX101", 1, 10, "error")],
        ),
        # a name that only looks volatile after the question stays quiet
        ("a.j2", "Question: {{ question }}\nFormat: {{ date_format }}\n\n" + GUIDANCE, []),
        # just before the question, in the last section of what is stable until it: cheap
        # there, but not once the question moves after the guidance
        (
            "a.md",
            RULES
            + "\nInputs:\n- message_id: {{ messageId }}\n- question: {{ question }}\n\n"
            + GUIDANCE,
            [("PFX102", 4, 15, "warning")],
        ),
        (
            "a.md",
            RULES + "\nInputs:\n- message_id: {{ messageId }}\n- question: {{ question }}\n",
            [],
        ),
    ],
)
def test_a_volatile_value_after_the_input_is_a_warning(path, text, expected):
    found = check(path, text, VOLATILE)
    got = sorted((d.code, d.span.line, d.span.column, d.severity.value) for d in found)
    assert got == expected


def test_a_value_after_the_input_names_the_input_and_has_no_fix():
    text = "Question: {{ question }}\nToday is {{ today }}.\n\n" + GUIDANCE
    [found] = check("a.j2", text, VOLATILE)
    assert "`{{ question }}` (line 1)" in found.message
    assert found.fix is None


def test_folded_value_after_the_input_is_listed():
    text = (
        "Today is {{ today }}.\n" + RULES + "Q: {{ question }}\nUser {{ user_name }}\n\n" + GUIDANCE
    )
    [found] = check("a.j2", text, VOLATILE)
    assert found.extra["folded_lines"] == [4]


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        # what the user types when a VS Code prompt file runs is its input
        (
            "p.prompt.md",
            "Map this codebase: **${input:target}**\n\n" + GUIDANCE,
            [("PFX301", 1, 22)],
        ),
        (
            "p.prompt.md",
            "Analyze ${input:targetClass:Enter the class name (e.g. OrderService)}\n\n" + GUIDANCE,
            [("PFX301", 1, 9)],
        ),
        ("p.prompt.md", GUIDANCE + "\nAnalyze ${input:target}.\n", []),
        # an input variable shown in a code span of documentation is still asked for: quiet
        # when the static text before it is all there is
        ("p.prompt.md", "Say hello.\n\n${input:name}\n", []),
        # a selection or selected text is the request's too
        ("p.prompt.md", "Explain ${selection}\n\n" + GUIDANCE, [("PFX301", 1, 9)]),
        # the repositories' or projects' context is the deployment's, not the request's
        ("agent.md", "{{REPOS_CONTEXT}}\n\n" + GUIDANCE, []),
        ("agent.md", "{{ projects_context }}\n\n" + GUIDANCE, []),
        # a description of the code to write is the request
        ("write.txt", "Task:\n{code_description}\n\n" + GUIDANCE, [("PFX301", 2, 1)]),
        ("write.txt", "Tool:\n{tool_description}\n\n" + GUIDANCE, []),
        # the tasks an agent still has open change with every step
        ("plan.txt", "Open tasks: `{pending_tasks}`\n\n" + GUIDANCE, [("PFX301", 1, 14)]),
        ("plan.txt", "Tasks:\n{tasks}\n\n" + GUIDANCE, []),
        # the arguments a shell wrapper passes on, but not in code or glued to a word
        ("fix.md", "Fix this: $@\n\n" + GUIDANCE, [("PFX301", 1, 11)]),
        ("fix.md", 'Run `claude -p "$@"` first.\n\n' + GUIDANCE, []),
        ("fix.md", "Write to a$@b.c or $@home.\n\n" + GUIDANCE, []),
    ],
)
def test_inputs_of_prompt_files_and_commands(path, text, expected):
    assert findings(path, text, {"PFX301"}) == expected


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        # a command file inlines a command's output where ``!`cmd` `` stands
        ("commit.md", "- Status: !`git status`\n" + RULES, [("PFX104", 1, 11)]),
        ("commit.md", "!`git log --oneline -10`\n" + RULES, [("PFX104", 1, 1)]),
        ("stamp.md", "Now: !`date +%F`\n" + RULES, [("PFX101", 1, 6)]),
        ("who.md", "You work for !`whoami`.\n" + RULES, [("PFX103", 1, 14)]),
        # the commands after the first are folded into it
        ("commit.md", "!`git status`\n!`git diff HEAD`\n" + RULES, [("PFX104", 1, 1)]),
        # a command shown in a fenced example, or written inside a word or code, does not run
        ("doc.md", "```markdown\nStatus: !`git status`\n```\n" + RULES, []),
        ("doc.md", "Wow!`git status` is a typo.\n" + RULES, []),
        ("doc.md", "Run `git status` first.\n" + RULES, []),
        # at the end, after the static text, it costs nothing
        ("commit.md", RULES + "\nStatus: !`git status`\n", []),
    ],
)
def test_command_output_in_a_command_file(path, text, expected):
    assert findings(path, text) == expected


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        # an environment variable that envsubst fills: upper case with an underscore
        ("p.md", "Context:\n$APP_CONTEXT\n\n" + GUIDANCE, [("PFX301", 2, 1)]),
        ("p.md", "Branch: $GIT_BRANCH\n" + RULES, [("PFX104", 1, 9)]),
        # in code, or a bare $HOME, it is the shell's
        ("p.md", "Run `echo $APP_CONTEXT` first.\n\n" + GUIDANCE, []),
        ("p.md", "Your files are in $HOME.\n\n" + GUIDANCE, []),
        ("p.md", "```\nexport A=$GIT_BRANCH\n```\n" + RULES, []),
        # a name that says nothing is no finding
        ("p.md", "Key: $OPENAI_API_KEY\n" + RULES, []),
    ],
)
def test_environment_variable_placeholders(path, text, expected):
    assert findings(path, text, VOLATILE | {"PFX301"}) == expected


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        # the language a user asked to be answered in is theirs
        ("a.prompt", '{{role "system"}}\nRespond in {{language}}.\n' + RULES, [("PFX103", 2, 12)]),
        ("a.j2", "Reply in {{ user.language }}.\n" + RULES, [("PFX103", 1, 10)]),
        # a language that names something else, or a model, is not
        ("a.j2", "Code in {{ code_language }}.\n" + RULES, []),
        ("a.j2", "You are a {{ language_model }}.\n" + RULES, []),
    ],
)
def test_a_users_language(path, text, expected):
    assert findings(path, text) == expected


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        # the absolute paths of the worktrees a handlebars loop lists
        (
            "p.hbs",
            "Roots:\n{{#each worktrees}}\n- `{{abs_path}}`\n{{/each}}\n" + RULES,
            [("PFX104", 3, 4)],
        ),
        ("p.j2", "Worktree: {{ worktree }}\n" + RULES, [("PFX104", 1, 11)]),
        # a field of another thing reached through a volatile object is that thing's
        ("p.j2", 'App "{{ state.branch.project.name }}".\n' + RULES, []),
        ("p.j2", 'Tool "{{ git_status.tool.name }}".\n' + RULES, []),
        # the volatile object's own fields still are
        ("p.j2", "Branch: {{ state.branch.name }}\n" + RULES, [("PFX104", 1, 9)]),
        ("p.j2", "Bio: {{ user_profile.tool_preferences }}\n" + RULES, [("PFX103", 1, 6)]),
    ],
)
def test_machine_paths_and_fields_of_other_things(path, text, expected):
    assert findings(path, text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("TODAY IS: {{year}}-{{month}}-{{day}}\n" + RULES, [("PFX101", 1, 11)]),
        ("The current date is {{value}}.\n" + RULES, [("PFX101", 1, 21)]),
        ("- Working directory: {{wd}}\n" + RULES, [("PFX104", 1, 22)]),
        ("Host: {{h}}\n" + RULES, [("PFX104", 1, 7)]),
        # labels that name no date or machine, or that say more than a label
        ("Date format: {{fmt}}\n" + RULES, []),
        ("Language: {{lang}}\n" + RULES, []),
        ("Reply in the style of the date {{x}} shows.\n" + RULES, []),
    ],
)
def test_a_label_before_a_placeholder_names_what_it_holds(text, expected):
    assert findings("p.md", text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "# Assistant\n\n## The person you are talking to\n\nRole: **{{ role }}**\n\n"
            "## Rules\n\n" + RULES,
            [("PFX103", 5, 9)],
        ),
        ("## User profile\n\nLevel: {level}\n\n## Rules\n\n" + RULES, [("PFX103", 3, 8)]),
        # the request's input under such a heading, headings about something else, or rules
        # for people in general
        ("## User question\n\n{{ role }}\n\n## Rules\n\n" + RULES, []),
        ("## The user\n\n{{ question }}\n\n## Rules\n\n" + RULES, []),
        ("## Product\n\n{{ role }}\n\n## Rules\n\n" + RULES, []),
        ("## Customer support guidelines\n\n{{ tier }}\n\n## Rules\n\n" + RULES, []),
    ],
)
def test_a_heading_about_the_person_addressed_names_what_its_values_hold(text, expected):
    assert findings("p.md", text) == expected


def test_a_value_after_fixed_text_named_like_input_is_still_in_the_stable_part():
    text = "{{ welcome_message }}\nSession {{ session_id }}\n" + GUIDANCE
    assert findings("a.j2", text) == [("PFX102", 2, 9)]


def test_a_volatile_value_glued_to_text_is_reported_once():
    text = "run={{ run_id }}\n" + RULES
    assert findings("p.j2", text, VOLATILE | {"PFX404"}) == [("PFX102", 1, 5)]


def test_severity_follows_the_share_of_the_prefix_lost():
    early = check("p.md", "Date: {{ date }}\n" + RULES * 4, VOLATILE)
    late = check("p.md", RULES * 4 + "Date: {{ date }}\n" + RULES, VOLATILE)
    assert [d.severity.value for d in early] == ["error"]
    assert [d.severity.value for d in late] == ["warning"]


DOCKERFILE = (
    "ARG WORKDIR=/app\n\nFROM python:3.12-slim\nWORKDIR ${WORKDIR}\nCOPY . .\n"
    "RUN pip install -r requirements.txt\n"
)
LOGGING = (
    "import logging\n\nlogging.basicConfig(\n    level=logging.INFO,\n"
    "    format='%(asctime)s %(levelname)s %(message)s',\n)\nlogger = logging.getLogger(__name__)\n"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the variables of example code pasted without a fence belong to the code
        ("Use this Dockerfile:\n\n" + DOCKERFILE + "\n" + RULES, []),
        ("Configure logging like this:\n" + LOGGING + "\n" + GUIDANCE, []),
        (
            "Run:\nexport PATH=$HOME/bin:$PATH\ncd /srv/app\nnpm install\necho $user_id\n" + RULES,
            [],
        ),
        # ... and in code that nests backticks inside a span
        ("Tag reads with `updateTag(`user-$userId`)`; then refresh.\n" + RULES, []),
        # the same syntaxes in the prompt's prose are its placeholders
        ("Work in ${workdir} only.\n" + RULES, [("PFX104", 1, 9)]),
        ("Greet ${user_id} by name.\n" + RULES, [("PFX103", 1, 7)]),
        ("Tag the reply for $user_id first.\n" + RULES, [("PFX103", 1, 19)]),
        ("Today is %(current_date)s.\n" + RULES, [("PFX101", 1, 10)]),
        ("Question: %(message)s\n\n" + GUIDANCE, [("PFX301", 1, 11)]),
        # a block of fields written as assignments is the template's, not a program
        ("cwd=${cwd}\nos=${os_name}\nshell=${shell}\n" + RULES, [("PFX104", 1, 5)]),
        # one code-like line in prose is not a program
        ("Always answer.\nlevel=${user_id}\nBe brief.\n" + RULES, [("PFX103", 2, 7)]),
        # an escaped backtick opens no code
        ("The directory is \\`${cwd}\\`.\n" + RULES, [("PFX104", 1, 20)]),
    ],
)
def test_fields_of_code_shown_without_a_fence(text, expected):
    assert findings("p.txt", text, VOLATILE | {"PFX301", "PFX404"}) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # what an assistant remembers of its user, pasted as text
        (
            "User memory: Ana is a nurse in Oslo who prefers short answers.\n" + RULES,
            [("PFX103", 1, 14)],
        ),
        ("The user's memory is: likes tea, lives in Oslo.\n" + RULES, [("PFX103", 1, 23)]),
        ("**User preferences:** metric units, no emoji\n" + RULES, [("PFX103", 1, 23)]),
        (
            "## User memories\n\n- Prefers metric units\n- Has a dog named Max\n\n" + RULES,
            [("PFX103", 3, 3)],
        ),
        (
            "<user_memories>\nUser collects bottle caps.\n</user_memories>\n" + RULES,
            [("PFX103", 2, 1)],
        ),
        ("About the user:\n1. Works night shifts at a plant\n" + RULES, [("PFX103", 2, 4)]),
        ("Here is the user's memory: likes tea.\n" + RULES, [("PFX103", 1, 28)]),
        ("## Memories\n- User works night shifts\n\n" + RULES, [("PFX103", 2, 3)]),
        ("<memories>\nUser lives in Oslo.\n</memories>\n" + RULES, [("PFX103", 2, 1)]),
        ("Member notes (from memory): Allergic to shellfish.\n" + RULES, [("PFX103", 1, 29)]),
        ("Customer notes: prefers aisle seats.\n" + RULES, [("PFX103", 1, 17)]),
        # quiet: a blank marker, a description or instruction, an example, code, other words
        ("<memories>\nThese come from earlier chats.\n</memories>\n" + RULES, []),
        ("Memory: 512 MB per worker\n" + RULES, []),
        ("<userMemories>\n[Injected at runtime]\n</userMemories>\n" + RULES, []),
        ("User profile: `<the profile text box>`\n" + RULES, []),
        ("User memory: none\n" + RULES, []),
        ("# User Bio\n\nThis profile is shown to you in every conversation.\n" + RULES, []),
        ("User preferences: you should respect them when they apply.\n" + RULES, []),
        ("User preferences are respected when they apply.\n" + RULES, []),
        ("<example_user_memories>User collects caps</example_user_memories>\n" + RULES, []),
        ("<example>\nUser memory: likes tea\n</example>\n" + RULES, []),
        ("Example:\n```\nUser memory: likes tea\n```\n" + RULES, []),
        ("User profile:\n```\nName: {{ name }}\n```\n" + RULES, []),
        ("## Memory\nKeep notes in the memory tool.\n" + RULES, []),
        ("## User Profile\n\nWrite a concise snapshot of the user.\n" + RULES, []),
        ("User preferences: summarize them in one line.\n" + RULES, []),
        ("Agent memory: the tool stores facts between runs.\n" + RULES, []),
        ("### User memory\n- Long-lived knowledge tied to a person or account\n" + RULES, []),
    ],
)
def test_a_pasted_user_memory_is_a_per_user_value(text, expected):
    assert findings("p.md", text) == expected


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        # a field that starts a file's path says where a file lives, as a URL pattern does
        (
            "p.md",
            "Settings are in:\n* project - {working_directory}/.claude/settings.json\n" + RULES,
            [],
        ),
        ("p.md", "Logs go to {home_dir}/logs/app.log when enabled.\n" + RULES, []),
        # the field alone, or before a folder, is the value
        ("p.md", "Working directory: {working_directory}\n" + RULES, [("PFX104", 1, 20)]),
        ("p.md", "Work in {working_directory}/src only.\n" + RULES, [("PFX104", 1, 9)]),
        # a Jinja or mustache placeholder is the template's own, wherever it is
        ("p.j2", "Edit {{ cwd }}/.claude/settings.json only.\n" + RULES, [("PFX104", 1, 6)]),
    ],
)
def test_a_field_that_starts_a_file_path(path, text, expected):
    assert findings(path, text) == expected


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        # a paragraph that documents the placeholder syntax shows examples, not values
        (
            "p.md",
            "Holes are lookups only (`{{ user.name }}`, `{{ $index }}`, literals like"
            " `{{ true }}`).\n\n" + RULES,
            [],
        ),
        ("p.md", "Write `{{ user.email }}` or a literal such as `{{ 0 }}`.\n\n" + RULES, []),
        # a value in a code span of another paragraph is still the prompt's
        (
            "p.md",
            "Literals like `{{ true }}` work.\n\nYour email is `{{ user.email }}`.\n" + RULES * 3,
            [("PFX103", 3, 16)],
        ),
        (
            "p.md",
            "Your email is `{{ user.email }}`, not `{{ alias }}`.\n" + RULES,
            [("PFX103", 1, 16)],
        ),
        # a Jinja file's placeholders are its own
        ("p.j2", "Use `{{ user.name }}` or `{{ true }}`.\n" + RULES, [("PFX103", 1, 6)]),
    ],
)
def test_placeholders_shown_as_syntax_examples(path, text, expected):
    assert findings(path, text) == expected


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        # front matter holds the loader's settings: never rendered into the prompt
        ("p.prompty", "---\nname: fixer\ngenerated_at: 2024-11-02T10:00:00Z\n---\n" + RULES, []),
        ("p.md", "---\nlayout: post\ndate: 2024-05-22 10:00:00\n---\n" + RULES, []),
        (
            "p.prompty",
            "---\nname: fixer\n---\nsystem:\nHost {{ hostname }}.\n" + RULES,
            [("PFX104", 5, 6)],
        ),
        # a rule line of dashes later in the file is not front matter
        ("p.txt", "---\nDate: 30-11-2026\n---\n" + RULES, [("PFX101", 2, 7)]),
    ],
)
def test_front_matter_is_not_prompt_text(path, text, expected):
    assert findings(path, text, VOLATILE) == expected


def test_line_endings_of_a_file_with_front_matter_are_the_whole_file_s():
    text = "---\r\nname: fixer\r\n---\r\nsystem:\r\n" + RULES.replace("\n", "\r\n")
    assert findings("p.prompty", text, {"PFX401"}) == [("PFX401", 1, 4)]


PROMPT_FLOW_CHAT = (
    "system:\nYou are a helpful assistant. Answer from the context.\n{{contexts}}\n\n"
    "{% if chat_history %}{% for item in chat_history %}\nuser:\n{{item.inputs.question}}\n"
    "assistant:\n{{item.outputs.answer}}\n{% endfor %}{% endif %}\n\nuser:\n{{question}}\n"
)


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        # this turn's documents before the conversation that this turn's question follows
        ("chat.jinja2", PROMPT_FLOW_CHAT, [("PFX301", 3, 1)]),
        (
            "qa.txt",
            "Context:\n{context}\n\nChat history:\n{chat_history}\n\nQuestion: {question}\n",
            [("PFX301", 2, 1)],
        ),
        (
            "chat.mustache",
            "Sources: {{retrieved_docs}}\n{{#messages}}{{role}}: {{content}}\n{{/messages}}\n"
            "User: {{query}}\n",
            [("PFX301", 1, 10)],
        ),
        # after the conversation, with the question, it is where it belongs
        (
            "chat.j2",
            "Be helpful.\n{% for m in chat_history %}{{ m.content }}\n{% endfor %}\n"
            "{{ contexts }}\n{{ question }}\n",
            [],
        ),
        # no question follows the conversation: a summary of it, not a turn of it
        ("sum.j2", "{{ context }}\n{% for m in messages %}{{ m.content }}{% endfor %}\n", []),
        # the fields of earlier turns that the loop prints are not this turn's question
        (
            "chat.j2",
            "{{ context }}\n{% for item in history %}{{ item.question }}{% endfor %}\nBye.\n",
            [],
        ),
        # a value that stays the same for the whole conversation is not this turn's
        (
            "chat.j2",
            "{{ task }}\n{% for m in history %}{{ m.content }}{% endfor %}\n{{ question }}\n",
            [],
        ),
        ("chat.j2", "{{ project_context }}\n{{ chat_history }}\n{{ question }}\n", []),
    ],
)
def test_turn_input_before_the_conversation(path, text, expected):
    assert findings(path, text, {"PFX301"}) == expected


_AGENTS = """researcher:
  role: >
    {topic} Senior Data Researcher
  goal: >
    Uncover cutting-edge developments in {topic}
  backstory: >
    You're a seasoned researcher with a knack for uncovering the latest developments.
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a crewAI agent's texts open its system prompt, before the framework's own
        (_AGENTS, [("PFX301", 2)]),
        (_AGENTS.replace("{topic} Senior", "Senior"), [("PFX301", 4)]),
        # the same keys outside an agent's definition are settings
        ("researcher:\n  role: {topic}\n", []),
    ],
)
def test_agent_definition_fields(text, expected):
    found = check("agents.yaml", text, {"PFX301"})
    assert [(d.code, d.span.line) for d in found] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # input at the top of a long prompt: reported
        ("{{ question }}\n" + GUIDANCE * 4, [("PFX301", 1)]),
        # near the end of a long prompt, most of it is cached: quiet
        (GUIDANCE * 8 + "\n{{ question }}\n" + GUIDANCE, []),
        # a Semantic Kernel function given the input (`$input`)
        ("{{memory.recall $input}}\n" + GUIDANCE, [("PFX301", 1)]),
        ("Feedback: {{feedback}}\n" + GUIDANCE, [("PFX301", 1)]),
    ],
)
def test_input_position_in_a_long_prompt(text, expected):
    found = check("prompts/a.txt", text, {"PFX301"})
    assert [(d.code, d.span.line) for d in found] == expected
