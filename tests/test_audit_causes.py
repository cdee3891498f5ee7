"""Miss causes from the content of the change, on generated logs with known causes.

``audit_logs.py`` builds sessions with one cache breaker each (volatile values inserted,
replaced or removed, host and replica names, tools, whitespace, history, model switches) and
knows, from the data, which requests break and why. Every break must get its breaker's cause
and every other request ``first-seen``, in OpenAI and in Anthropic form.
"""

import json

import pytest
from audit_logs import BREAKERS, breaker, log_line, plan

from prefixlint.auditing import AuditOptions, classify, run_audit
from prefixlint.auditing.attribution import Divergence, cause_for
from prefixlint.auditing.environment import is_environment_line
from prefixlint.auditing.opaque import context_code, shape_code
from prefixlint.cache import CACHE_MODELS
from prefixlint.cache.base import CacheResult


def audited_causes(tmp_path, planned, fmt):
    path = tmp_path / f"{fmt}.jsonl"
    path.write_text("\n".join(log_line(p, fmt) for p in planned) + "\n", encoding="utf-8")
    report = run_audit([str(path)], AuditOptions(caches=("vllm",), what_if=False))
    return {record.line: (record.cause, record.component) for record in report.records}


CASES = [(b, fmt) for b in BREAKERS for fmt in b.formats]


@pytest.mark.parametrize(("breaker", "fmt"), CASES, ids=[f"{b.name}-{f}" for b, f in CASES])
def test_every_break_gets_its_cause(tmp_path, breaker, fmt):
    # Sessions 0 and 2 are clean, 1 and 3 carry the breaker.
    planned = plan(seed=7, sessions=4, breakers=(breaker,), fmt=fmt)
    breaks = [p for p in planned if p.expected is not None]
    assert breaks and all(p.expected == breaker.code for p in breaks)
    causes = audited_causes(tmp_path, planned, fmt)
    for line, request in enumerate(planned, start=1):
        cause, component = causes[line]
        if request.expected is None:
            assert cause in (None, "first-seen"), (line, cause, component)
        else:
            assert cause == request.expected, (line, cause, component)


def test_a_model_switch_names_the_model(tmp_path):
    planned = plan(seed=3, sessions=2, breakers=(breaker("model-switch-once"),))
    causes = audited_causes(tmp_path, planned, "openai")
    switched = [causes[i + 1] for i, p in enumerate(planned) if p.expected]
    # The switch and the way back.
    assert switched == [("PFX601", "model"), ("PFX601", "model")]


def test_a_model_switch_costs_nothing_on_a_server_of_one_model(tmp_path):
    # llama-server serves one model whatever a request names: its slot still holds the
    # conversation, so the switch is no cause there.
    planned = plan(seed=3, sessions=2, breakers=(breaker("model-switch-once"),))
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(log_line(p, "openai") for p in planned) + "\n", encoding="utf-8")
    options = AuditOptions(caches=("vllm", "llamacpp"), what_if=False)
    report = run_audit([str(path)], options)
    switched = {i + 1 for i, p in enumerate(planned) if p.expected}
    causes = {(r.model_cache, r.line): r.cause for r in report.records if r.line in switched}
    assert {causes["vllm", line] for line in switched} == {"PFX601"}
    # What it lost there it lost as on any other turn: a new tail, or a slot taken by the
    # other conversation.
    assert {causes["llamacpp", line] for line in switched} <= {None, "first-seen", "evicted"}
    hits = {(r.model_cache, r.line): r.cached_tokens for r in report.records}
    first = min(switched)
    assert hits["vllm", first] == 0 < hits["llamacpp", first]


SYSTEM = "# Policy\n\nYou help travellers.\n\n- Be brief.\n- Confirm first."


def with_line(line, text=SYSTEM, at=2):
    lines = text.split("\n")
    return "\n".join([*lines[:at], line, *lines[at:]])


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        # A line holding a volatile value added or removed.
        (SYSTEM, with_line("Current date and time: 2026-03-02 09:00:01 UTC"), "PFX101"),
        (with_line("Current date and time: 2026-03-02 09:00:01 UTC"), SYSTEM, "PFX101"),
        (SYSTEM, with_line("The time now is 09:14:07."), "PFX101"),
        (SYSTEM, with_line("Request ID: 7f3a2b1c-1111-2222-3333-444455556666"), "PFX102"),
        (SYSTEM, with_line("Served by host: api-2.prod.internal"), "PFX104"),
        (SYSTEM, with_line("Replica: billing-2"), "PFX104"),
        # A value line replaced by another value line (another variant of the prompt).
        (with_line("Today's date: 2026-03-02."), with_line("Replica: billing-3"), "PFX104"),
        # Short opaque tokens, by context and by shape.
        (with_line("Replica: billing-2"), with_line("Replica: billing-3"), "PFX104"),
        (with_line("Host: web-a"), with_line("Host: web-b"), "PFX104"),
        (
            with_line("Runs on ip-10-0-3-17.ec2.internal."),
            with_line("Runs on ip-10-0-4-17.ec2.internal."),
            "PFX104",
        ),
        (with_line("Session token 9f3ab2 ok"), with_line("Session token c41d07 ok"), "PFX102"),
        (with_line("Build 9f3ab2 ok"), with_line("Build c41d07 ok"), "PFX102"),
        # A value line added or removed with the blank line that sets it apart, at the top
        # or the end, or left behind as a blank line.
        (SYSTEM, "Current date: 2026-03-07\n\n" + SYSTEM, "PFX101"),
        ("Current date: 2026-03-07\n\n" + SYSTEM, "\n\n" + SYSTEM, "PFX101"),
        (SYSTEM, SYSTEM + "\n\nSession: 312f5cbd9388ebacb551c7762785c31f", "PFX102"),
        (SYSTEM + "\n\nSession: 312f5cbd9388ebacb551c7762785c31f", SYSTEM, "PFX102"),
        # An e-mail address is the user's: its line added or changed elsewhere.
        (SYSTEM, with_line("You are talking to Dana (dana@example.com), plan: pro"), "PFX103"),
        (
            with_line("You are talking to Dana (dana@example.com), plan: pro"),
            with_line("You are talking to Dana (dana@example.com), plan: team"),
            "PFX103",
        ),
        (SYSTEM, with_line("User: Dana Whitfield <dana@example.com>"), "PFX103"),
        # Machine names with several numbers, lines of several labelled tokens.
        (
            with_line("Running on ip-10-0-3-17"),
            with_line("Running on ip-10-0-4-22"),
            "PFX104",
        ),
        (SYSTEM, with_line("Running on ip-10-0-3-17"), "PFX104"),
        (SYSTEM, with_line("pid 4123 on replica 3"), "PFX104"),
        (SYSTEM, with_line("Environment: python 3.11.4 on linux, node 20"), "PFX104"),
        (SYSTEM, with_line("Git branch: main (HEAD d953174), 8 files modified"), "PFX104"),
        # A date and the time after it changed together, in one line of text.
        (
            "Find flights. Now: 03/05/2026 11:44 AM. Be brief.",
            "Find flights. Now: 03/06/2026 12:51 PM. Be brief.",
            "PFX101",
        ),
        (
            "Read a file. The time is 05 Mar 2026, 15:51 UTC.",
            "Read a file. The time is 06 Mar 2026, 16:58 UTC.",
            "PFX101",
        ),
        # A per-user value in prose: "the user's name is ...", changed or added.
        (
            with_line("The user's name is Dana and they are on the pro plan."),
            with_line("The user's name is Mateo and they are on the team plan."),
            "PFX103",
        ),
        (SYSTEM, with_line("The user's timezone is Europe/Oslo."), "PFX103"),
        # A labelled value inserted into a line, or removed from it.
        ("List a directory.", "List a directory. Request id: be17fe45d7334b5e.", "PFX102"),
        ("Find flights. Current date: 2026-03-05", "Find flights.", "PFX101"),
        # Not a value: a rule added or rewritten, a counter, a word changed.
        (
            SYSTEM,
            with_line("- Never promise refunds before 2026-01-01 unless the fare allows it."),
            None,
        ),
        (with_line("You have 5 turns left."), with_line("You have 4 turns left."), None),
        (with_line("Tone: formal"), with_line("Tone: casual"), None),
        (with_line("The tone is formal."), with_line("The tone is casual."), None),
        (SYSTEM, with_line("- Offer a voucher."), None),
        (SYSTEM, with_line("You have 5 turns left of 10."), None),
        (SYSTEM, with_line("Rules: see 3.2 and 4.1"), None),
        # A rule that holds an address, rewritten; a date whose sentence changed after it.
        (
            with_line("- Write to support@example.com when a refund is above the limit of a plan."),
            with_line("- Write to support@example.com when a refund is above what a plan allows."),
            None,
        ),
        (
            "Find flights. Now: 03/05/2026 11:44 AM, be brief.",
            "Find flights. Now: 03/06/2026 12:51 PM, be kind.",
            None,
        ),
        # A sentence without a value inserted into a line; a value line added while other
        # lines changed too (another prompt, not a value added).
        ("List a directory.", "List a directory. Use it often.", None),
        (SYSTEM, "Replica: billing-2\n" + SYSTEM.replace("Be brief", "Be kind"), None),
    ],
)
def test_system_prompt_change_code(before, after, expected):
    assert classify.text_change_code(before, after, system=True) == expected


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("Served by host: ", "PFX104"),
        ("Worker ", "PFX104"),
        ("Request ID: ", "PFX102"),
        ("Tone: ", None),
    ],
)
def test_context_code(label, expected):
    assert context_code(label) == expected


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("api-1.prod.internal", "PFX104"),
        ("billing-2", "PFX104"),
        ("ip-10-0-3-17", "PFX104"),
        ("dana@example.com", None),
        ("c41d07", "PFX102"),
        ("req_8fJ2kL9x", "PFX102"),
        ("formal", None),
        ("42", None),
    ],
)
def test_shape_code(token, expected):
    assert shape_code(token) == expected


def test_an_opaque_token_in_history_is_an_edit():
    # Outside the system prompt a changed booking reference is the conversation edited.
    system = {"role": "system", "content": "Help."}
    before = [
        system,
        {"role": "user", "content": "Booking ZF4A07."},
        {"role": "assistant", "content": "ok"},
    ]
    after = [
        system,
        {"role": "user", "content": "Booking ZF4A08."},
        {"role": "assistant", "content": "ok"},
    ]
    assert (
        classify.messages_code(before, [*after, {"role": "user", "content": "x"}], 1, True)
        == "PFX501"
    )


@pytest.mark.parametrize("same", [True, False])
def test_a_system_message_holding_a_date_inserted_or_removed(same):
    system = {"role": "system", "content": SYSTEM}
    dated = {"role": "system", "content": "Current date and time: 2026-03-02 09:00:01 UTC"}
    user, answer = {"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}
    before, after = [system, user, answer], [system, dated, user, answer, user]
    assert classify.messages_code(before, after, 1, same) == "PFX101"
    assert classify.messages_code(after, [system, user, answer, user], 1, same) == "PFX101"
    # A system message with rules, not values: not a volatile value.
    rules = {"role": "system", "content": "Be brief and never promise refunds."}
    assert classify.messages_code(before, [system, rules, user, answer], 1, True) == "PFX501"


def test_a_system_message_edit_is_not_history():
    before = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "hi"}]
    after = [
        {"role": "system", "content": SYSTEM + "\n- Be kind."},
        {"role": "user", "content": "hi"},
    ]
    assert classify.messages_code(before, after, 0, True) == "content-changed"


def result(prompt, cached, reason="first-seen"):
    return CacheResult(prompt_tokens=prompt, cached_tokens=cached, miss_reason=reason)


@pytest.mark.parametrize(
    ("same_conversation", "cached", "expected"),
    [
        # Within a conversation, a model switch that cost tokens is PFX601, even when the
        # new model's cache already held most of the shared prefix.
        (True, 700, ("PFX601", 300, "model")),
        (True, 1000, ("first-seen", 0, None)),
        # A cache that ignores the model and served all the two share lost only the
        # predecessor's tail that no cache could reuse.
        (True, 990, ("first-seen", 0, None)),
        (True, 989, ("PFX601", 11, "model")),
        # Another conversation's request: only when the shared prefix was mostly not served.
        (False, 700, ("first-seen", 0, None)),
        (False, 100, ("PFX601", 900, "model")),
    ],
)
def test_cause_for_a_routing_change(same_conversation, cached, expected):
    divergence = Divergence(
        predecessor_line=1,
        predecessor_tokens=1000,
        shared_tokens=990,
        routing_changed=("model",),
        same_conversation=same_conversation,
    )
    cause = cause_for(divergence, result(1200, cached))
    assert (cause.code, cause.cost, cause.component) == expected


@pytest.mark.parametrize("cached", [0, 700, 990])
def test_a_routing_change_is_no_cause_on_a_cache_that_reads_no_model(cached):
    divergence = Divergence(
        predecessor_line=1,
        predecessor_tokens=1000,
        shared_tokens=990,
        routing_changed=("model",),
        same_conversation=True,
    )
    blind = cause_for(divergence, result(1200, cached), namespace_params=frozenset())
    assert blind.code == "first-seen"
    seeing = cause_for(divergence, result(1200, cached))
    assert seeing.code == ("first-seen" if cached == 990 else "PFX601")


@pytest.mark.parametrize(
    ("changed", "model", "expected"),
    [
        (("params.prompt_cache_key",), "openai", ("PFX601", "params.prompt_cache_key")),
        (("params.prompt_cache_key",), "vllm", ("first-seen", None)),
        (("params.prompt_cache_key",), "sglang", ("first-seen", None)),
        (("params.prompt_cache_key",), "unlimited", ("first-seen", None)),
        (("params.cache_salt",), "vllm", ("PFX601", "params.cache_salt")),
        (("params.cache_salt",), "sglang", ("PFX601", "params.cache_salt")),
        (("params.cache_salt",), "belady", ("PFX601", "params.cache_salt")),
        (("params.cache_salt",), "openai", ("first-seen", None)),
        (("params.cache_salt",), "anthropic", ("first-seen", None)),
        # both changed: each model names the one it reads
        (("params.cache_salt", "params.prompt_cache_key"), "vllm", ("PFX601", "params.cache_salt")),
        (
            ("params.cache_salt", "params.prompt_cache_key"),
            "openai",
            ("PFX601", "params.prompt_cache_key"),
        ),
        (("model", "params.cache_salt"), "gemini", ("PFX601", "model")),
        (("params.cache_salt",), "llamacpp", ("first-seen", None)),
    ],
)
def test_a_namespace_change_is_the_cause_only_where_the_model_reads_it(changed, model, expected):
    divergence = Divergence(
        predecessor_line=1,
        predecessor_tokens=1000,
        shared_tokens=990,
        routing_changed=changed,
        same_conversation=True,
    )
    params = CACHE_MODELS[model].namespace_params
    cause = cause_for(divergence, result(1200, 0), namespace_params=params)
    assert (cause.code, cause.component) == expected


@pytest.mark.parametrize(
    ("changed", "model", "expected"),
    [
        # another session's opening, in another namespace: it could never have been reused
        (("params.prompt_cache_key",), "openai", "first-seen"),
        (("params.cache_salt",), "vllm", "first-seen"),
        # the same namespace for this model: the changed date is the cause
        (("params.prompt_cache_key",), "vllm", "PFX101"),
        (("params.cache_salt",), "openai", "PFX101"),
        ((), "openai", "PFX101"),
    ],
)
def test_a_session_opening_in_another_namespace_is_first_seen(changed, model, expected):
    divergence = Divergence(
        predecessor_line=1,
        predecessor_tokens=1000,
        shared_tokens=400,
        code="PFX101",
        component="system",
        routing_changed=changed,
        session_opening=True,
    )
    params = CACHE_MODELS[model].namespace_params
    assert cause_for(divergence, result(1200, 0), namespace_params=params).code == expected


def test_cause_for_no_breakpoint_names_cache_control():
    divergence = Divergence(predecessor_line=1, predecessor_tokens=1000, shared_tokens=1000)
    cause = cause_for(divergence, result(1200, 0), no_breakpoint=True)
    assert (cause.code, cause.cost, cause.component, cause.located) == (
        "PFX303",
        1000,
        "cache_control",
        False,
    )


POLICY = "\n".join(
    ["# Support policy", ""]
    + [f"- Rule {n}: answer questions about topic {n} from the handbook only." for n in range(30)]
    + ["Be brief and kind."]
)


def first_request_causes(tmp_path, sessions):
    """The cause of each session's only request; ``sessions`` are ``(system, model)``."""
    lines = [
        json.dumps(
            {
                "timestamp": f"2026-03-02T09:00:{index:02d}Z",
                "session_id": f"s{index}",
                "request": {
                    "model": model,
                    "messages": [
                        {"role": "system", "content": system},
                        {"role": "user", "content": f"Question {index}?"},
                    ],
                },
            }
        )
        for index, (system, model) in enumerate(sessions)
    ]
    path = tmp_path / "sessions.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = run_audit([str(path)], AuditOptions(caches=("vllm",), what_if=False))
    return [record.cause for record in report.records]


@pytest.mark.parametrize(
    ("sessions", "expected"),
    [
        # What a prefix shared by conversations carries: a volatile value is named.
        ([(POLICY, "m"), (with_line("Current date: 2026-03-02", POLICY), "m")], "PFX101"),
        (
            [(with_line("Session: 5aaa2b25628e", POLICY), "m"), (POLICY, "m")],
            "PFX102",
        ),
        # Another prompt or another model is another conversation's, not a change of this one.
        ([(POLICY, "m"), (POLICY.replace("Rule 3:", "Rule three:"), "m")], "first-seen"),
        ([(POLICY, "m"), (POLICY, "other-model")], "first-seen"),
        # The request with the same head is the one to compare with, not a later one that
        # shares as many whole blocks (its prompt ends in a value line).
        (
            [(POLICY, "m"), (POLICY + "\nSession: 5aaa2b25628e", "m"), (POLICY, "m")],
            "first-seen",
        ),
        (
            [
                (POLICY, "m"),
                (POLICY + "\nSession: 5aaa2b25628e", "m"),
                (POLICY + "\nSession: 91c0d3e4f5a6", "m"),
            ],
            "PFX102",
        ),
        # A prompt that differs only in a value is compared with before another prompt that
        # happens to share more tokens.
        (
            [
                ("Current date: 2026-03-01\n" + POLICY, "m"),
                (POLICY.replace("Rule 29:", "Rule twenty-nine:"), "m"),
                (with_line("Current date: 2026-03-02", POLICY, at=3), "m"),
            ],
            "PFX101",
        ),
    ],
)
def test_a_session_first_request_against_other_sessions(tmp_path, sessions, expected):
    assert first_request_causes(tmp_path, sessions)[-1] == expected


LONG_POLICY = "\n".join(
    ["# Support policy", "Current date: 2026-03-01"]
    + [f"- Rule {n}: answer questions about topic {n} from the handbook only." for n in range(120)]
)


@pytest.mark.parametrize(
    ("param", "cache", "expected"),
    [
        # the other user's key or salt is no namespace here: the changed date is the cause
        ("prompt_cache_key", "vllm", "PFX101"),
        ("prompt_cache_key", "unlimited", "PFX101"),
        ("cache_salt", "openai", "PFX101"),
        # it is here: the other user's request could never have been reused
        ("prompt_cache_key", "openai", "first-seen"),
        ("cache_salt", "vllm", "first-seen"),
        ("cache_salt", "unlimited", "first-seen"),
    ],
)
def test_a_session_opening_with_another_users_key(tmp_path, param, cache, expected):
    lines = [
        json.dumps(
            {
                "session_id": user,
                "request": {
                    "model": "gpt-4o",
                    param: user,
                    "messages": [
                        {"role": "system", "content": LONG_POLICY.replace("03-01", date)},
                        {"role": "user", "content": "Where is my refund?"},
                    ],
                },
            }
        )
        for user, date in (("alice", "03-01"), ("bob", "03-02"))
    ]
    path = tmp_path / "users.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = run_audit([str(path)], AuditOptions(caches=(cache,), what_if=False))
    assert report.records[-1].cause == expected


def git_prompt(status, branch="main", commits=("abc1234 Fix the login form",)):
    """A coding agent's system prompt holding a snapshot of its repository."""
    return "\n".join(
        [
            "You are a coding agent. Follow the project's style guide.",
            "",
            "gitStatus: This is the git status at the start of the conversation.",
            f"Current branch: {branch}",
            "",
            "Status:",
            *status,
            "",
            "Recent commits:",
            *commits,
            "",
            "Answer in short paragraphs and run the tests before you finish.",
        ]
    )


TAGGED = "\n".join(
    [
        "You are a coding agent.",
        "<git_status>",
        "On branch main",
        "Your branch is up to date with 'origin/main'.",
        "",
        "Changes not staged for commit:",
        "\tmodified:   src/app.py",
        "</git_status>",
        "Be brief.",
    ]
)
LISTING = "Project files:\n%s\nKeep answers short."


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        # changed-file status lines: added, removed, replaced, a clean tree dirtied
        (git_prompt([" M Makefile"]), git_prompt([" M Makefile", "?? docs/"]), "PFX104"),
        (git_prompt([" M src/app.py", " D LICENSE"]), git_prompt([" M src/app.py"]), "PFX104"),
        (git_prompt(["M  src/app.py", "?? notes.txt"]), git_prompt(["A  src/new.py"]), "PFX104"),
        (git_prompt(["(clean)"]), git_prompt(["R  old.py -> new.py"]), "PFX104"),
        # a new commit, a branch switch with its status
        (
            git_prompt(["(clean)"]),
            git_prompt(["(clean)"], commits=("9f8e7d6 Add signup", "abc1234 Fix the login form")),
            "PFX104",
        ),
        (git_prompt([" M Makefile"]), git_prompt(["?? docs/"], branch="feature/login"), "PFX104"),
        # git's own long status and branch sentences
        (TAGGED, TAGGED.replace("src/app.py", "README"), "PFX104"),
        (
            TAGGED,
            TAGGED.replace(
                "up to date with 'origin/main'.", "ahead of 'origin/main' by 2 commits."
            ),
            "PFX104",
        ),
        (TAGGED, TAGGED.replace("src/app.py", "src/app.py\n\tdeleted:    old.txt"), "PFX104"),
        # directory listings: items, a tree, ls -l rows
        (
            LISTING % "- /home/ana/app/\n  - src/\n    - app.py",
            LISTING % "- /home/ana/app/\n  - src/\n    - app.py\n    - db.py\n  - tests/",
            "PFX104",
        ),
        (
            LISTING % "├── src\n│   └── app.py\n└── README.md",
            LISTING % "├── src\n│   ├── app.py\n│   └── db.py\n└── README.md",
            "PFX104",
        ),
        (
            LISTING % "total 8\ndrwxr-xr-x  2 ana staff  64 Mar  1 12:00 src",
            LISTING % "total 16\ndrwxr-xr-x  3 ana staff  96 Mar  2 12:00 src",
            "PFX104",
        ),
        # quiet near-misses: instructions that mention git, a heading, a bullet of prose
        (
            "Rules:\nRun git status before you commit.\nBe brief.",
            "Rules:\nRun git status and git diff before every commit.\nBe brief.",
            None,
        ),
        ("Rules:\n## Style\nBe brief.", "Rules:\n## Tone\nBe brief.", None),
        ("Rules:\n- Be kind.\nBe brief.", "Rules:\n- Be kind and fast.\nBe brief.", None),
        # the status changed and so did an instruction: not the snapshot alone
        (
            git_prompt([" M Makefile"]),
            git_prompt([" M Makefile", "?? docs/"]).replace("Answer in short", "Answer in long"),
            None,
        ),
    ],
)
def test_a_changed_environment_snapshot_in_the_system_prompt(before, after, expected):
    assert classify.text_change_code(before, after, system=True) == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (" M src/app.py", True),
        ("?? notes.txt", True),
        ("M src/app.py", True),
        ("\tnew file:   src/db.py", True),
        ("## main...origin/main [ahead 1]", True),
        ("nothing to commit, working tree clean", True),
        ('  (use "git add <file>..." to update what will be committed)', True),
        ("Main branch (you will usually use this for PRs): main", True),
        ("<git_status>", True),
        ("Working directory: /home/ana/app", True),
        ("  - app.py", True),
        # prose, markdown, and a unified diff's lines are not snapshot lines
        ("Run git status before you commit.", False),
        ("A cat.", False),
        ("- Be kind.", False),
        ("## Rules", False),
        ("Status:", False),
        ("<rules>", False),
        ("deadbeef is a placeholder.", False),
        ("diff --git a/src/app.py b/src/app.py", False),
        ("index 83db48f..bf269f4 100644", False),
        ("@@ -1,3 +1,4 @@", False),
        ("+    return total", False),
        ("--- a/src/app.py", False),
    ],
)
def test_environment_lines_are_told_by_their_form(line, expected):
    assert is_environment_line(line) is expected


def git_session_causes(tmp_path, first, second):
    """The second request's ``(cause, component)``: one session, two turns, ``first`` and
    ``second`` as ``(system prompt, last user message)``."""
    (system_1, question_1), (system_2, question_2) = first, second
    turn_1 = [{"role": "user", "content": question_1}]
    turn_2 = [*turn_1, {"role": "assistant", "content": "Done."}]
    turn_2.append({"role": "user", "content": question_2})
    lines = [
        json.dumps(
            {
                "session_id": "s",
                "request": {
                    "model": "m",
                    "messages": [{"role": "system", "content": system}, *turn],
                },
            }
        )
        for system, turn in ((system_1, turn_1), (system_2, turn_2))
    ]
    path = tmp_path / "git.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = run_audit([str(path)], AuditOptions(caches=("vllm",), what_if=False))
    return report.records[-1].cause, report.records[-1].component


PATCH = (
    "Review this patch:\n\ndiff --git a/src/app.py b/src/app.py\n@@ -1,2 +1,2 @@\n-    %s\n+    %s"
)


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        (
            (git_prompt([" M Makefile"]), "Fix the build."),
            (git_prompt([" M Makefile", "?? docs/"]), "Now the docs."),
            ("PFX104", "messages[0]"),
        ),
        # quiet near-misses: the instructions changed; the user pasted another diff
        (
            (git_prompt([" M Makefile"]), "Fix the build."),
            (git_prompt([" M Makefile"]).replace("style guide", "git workflow"), "Now."),
            ("content-changed", "messages[0]"),
        ),
        (
            (git_prompt([" M Makefile"]), PATCH % ("return a", "return b")),
            (git_prompt([" M Makefile"]), PATCH % ("return a", "return c")),
            ("first-seen", None),
        ),
    ],
)
def test_a_sessions_changed_git_status_is_named_an_environment_snapshot(
    tmp_path, first, second, expected
):
    cause = git_session_causes(tmp_path, first, second)
    assert cause[0] == expected[0]
    if expected[1] is not None:
        assert cause[1] == expected[1]
