import pytest

from prefixlint.vocabulary import (
    classify_call,
    classify_command,
    classify_filter,
    classify_name,
    is_request_input,
    is_turn_input,
    names_lookup,
    names_other_owner,
    split_words,
)


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("currentDate", ("current", "date")),
        ("runtime_info.date", ("runtime", "info", "date")),
        ("HTTPServerTime", ("http", "server", "time")),
        ("uuid4", ("uuid", "4")),
        ("now()", ("now",)),
        ("", ()),
    ],
)
def test_split_words(name, words):
    assert split_words(name) == words


@pytest.mark.parametrize(
    ("name", "code"),
    [
        # time and date
        ("runtime_info.date", "PFX101"),
        ("currentDate", "PFX101"),
        ("current_date", "PFX101"),
        ("current_date_str", "PFX101"),
        ("CURRENT_TIME", "PFX101"),
        ("date", "PFX101"),
        ("today", "PFX101"),
        ("now", "PFX101"),
        ("now()", "PFX101"),
        ("timestamp", "PFX101"),
        ("timestamp_ms", "PFX101"),
        ("datetime", "PFX101"),
        ("created_at", "PFX101"),
        ("todays_date", "PFX101"),
        ("start_time", "PFX101"),
        ("datetime.now()", "PFX101"),
        ("strftime_now('%d %b %Y')", "PFX101"),
        ("state.clock", "PFX101"),
        # unique ids and randomness
        ("uuid", "PFX102"),
        ("uuid4", "PFX102"),
        ("request_id", "PFX102"),
        ("requestId", "PFX102"),
        ("trace_id", "PFX102"),
        ("session_id", "PFX102"),
        ("sessionID", "PFX102"),
        ("correlation_id", "PFX102"),
        ("conversation_id", "PFX102"),
        ("nonce", "PFX102"),
        ("random_example", "PFX102"),
        ("uuid_str", "PFX102"),
        ("ctx.run_id", "PFX102"),
        ("subagent_id", "PFX102"),
        ("parentAgentId", "PFX102"),
        ("episodeId", "PFX102"),
        ("attempt_id", "PFX102"),
        # per user
        ("user_name", "PFX103"),
        ("userName", "PFX103"),
        ("username", "PFX103"),
        ("user_id", "PFX103"),
        ("user.email", "PFX103"),
        ("email", "PFX103"),
        ("user.name", "PFX103"),
        ("location", "PFX103"),
        ("user_location", "PFX103"),
        ("locale", "PFX103"),
        ("user_timezone", "PFX103"),
        ("timezone", "PFX103"),
        ("customer_name", "PFX103"),
        ("patient_name", "PFX103"),
        ("state.player_name", "PFX103"),
        ("traveller_id", "PFX103"),
        ("first_name", "PFX103"),
        ("user_profile", "PFX103"),
        ("language", "PFX103"),
        ("user.language", "PFX103"),
        # environment
        ("cwd", "PFX104"),
        ("working_dir", "PFX104"),
        ("runtime_info.working_dir", "PFX104"),
        ("workingDirectory", "PFX104"),
        ("git_status", "PFX104"),
        ("git_branch", "PFX104"),
        ("file_tree", "PFX104"),
        ("directory_listing", "PFX104"),
        ("hostname", "PFX104"),
        ("os_name", "PFX104"),
        ("platform", "PFX104"),
        ("env_vars", "PFX104"),
        ("env", "PFX104"),
        ("shell_env", "PFX104"),
        ("environment_variables", "PFX104"),
        ("runtime_info.available_hosts", "PFX104"),
        ("project_structure", "PFX104"),
        ("session-id", "PFX102"),
        ("user-name", "PFX103"),
        ("repository_info.repo_name", "PFX104"),
        ("repository_info.repo_directory", "PFX104"),
        ("repoPath", "PFX104"),
        ("project_dir", "PFX104"),
        ("abs_path", "PFX104"),
        ("worktrees.abs_path", "PFX104"),
        ("absolutePath", "PFX104"),
        ("worktree_root", "PFX104"),
        # a field of a record named after a person the product serves
        ("traveller.home_airport", "PFX103"),
        ("reviewer.notes", "PFX103"),
        ("self.patient.name", "PFX103"),
        ("reviewer.locale", "PFX103"),
    ],
)
def test_volatile_names(name, code):
    assert classify_name(name) == code


@pytest.mark.parametrize(
    "name",
    [
        "produit.email",
        "member.description",  # a team's member agent
        "member.value",  # an enum's member
        "branch_protection",
        "update",
        "validate",
        "candidate",
        "identity",
        "width",
        "user_question",
        "user_query",
        "user_input",
        "user_message",
        "timeout",
        "max_tokens",
        "document_id",
        "tool_id",
        "model_id",
        "task_id",  # a plan's task, the same on every request of the session
        "step_id",
        "id",
        "name",
        "agent_name",
        "tool_name",
        "tool_names",
        "file_name",
        "customer_names_file",
        "authorized_imports",
        "problem_statement",
        "task",
        "instructions",
        "time_limit",
        "max_time",
        "date_format",
        "knowledge_cutoff_date",
        "release_date",
        "support_email",
        "file_location",
        "random_seed",
        "user",
        "username_field_label_text_x",
        "runtime",
        "runtime_info",
        "repository_info",
        "repository_url",
        "project_name",
        "repo_owner_type",
        "macros",
        "managed_agents",
        "timeline",
        "datum",
        "dated_view",
        "outdated",
        "mandate",
        "nowrap",
        "known",
        "osmosis",
        "hostile",
        "traveller",
        "code_language",
        "language_model",
        "user.team_name",
        "customer.message",
        "ctx.user_info.organization_profile",
        "client.base_url",
        # a workspace passed in is the deployment's configuration
        "workspace_dir",
        "workspace",
        "",
    ],
)
def test_stable_names(name):
    assert classify_name(name) is None


def test_extra_names_extend_a_code():
    assert classify_name("tenant_slug") is None
    assert classify_name("tenant_slug", {"PFX103": ["tenant_slug"]}) == "PFX103"
    assert classify_name("ctx.tenantSlug", {"PFX103": ["tenant_slug"]}) == "PFX103"
    assert classify_name("build_number", {"PFX104": ["build number"]}) == "PFX104"


@pytest.mark.parametrize(
    ("callee", "code"),
    [
        ("datetime.now", "PFX101"),
        ("datetime.datetime.now", "PFX101"),
        ("dt.datetime.utcnow", "PFX101"),
        ("time.time", "PFX101"),
        ("date.today", "PFX101"),
        ("strftime_now", "PFX101"),
        ("now", "PFX101"),
        ("uuid.uuid4", "PFX102"),
        ("uuid4", "PFX102"),
        ("secrets.token_hex", "PFX102"),
        ("random.choice", "PFX102"),
        ("os.getcwd", "PFX104"),
        ("Path.cwd", "PFX104"),
        ("socket.gethostname", "PFX104"),
        ("platform.system", "PFX104"),
        ("getpass.getuser", "PFX103"),
        ("json.dumps", None),
        ("format", None),
        ("str.join", None),
        ("time.sleep", None),
    ],
)
def test_classify_call(callee, code):
    assert classify_call(callee) == code


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("date", "PFX101"),
        ("strftime", "PFX101"),
        ("random", None),  # a random pick: PFX203, not an id
        ("upper", None),
        ("tojson", None),
        ("join", None),
    ],
)
def test_classify_filter(name, code):
    assert classify_filter(name) == code


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("question", True),
        ("user_question", True),
        ("problem_statement", True),
        ("task", True),
        ("observation", True),
        ("agent_info.content", True),
        ("tool_name", False),
        ("authorized_imports", False),
        ("system_prompt", False),
        ("prompt", True),
        ("user_prompt", True),
        ("task_prompt", True),
        # a named part of the prompt, the same for every request
        ("skillsPrompt", False),
        ("format_prompt", False),
        ("WINDOW", False),
        ("custom_label", False),
        # a request input named with a word that is also a formatting word
        ("contract_text", True),
        ("email_text", True),
        ("example_text", False),
        # what a writing or a review request brings
        ("diff", True),
        ("staged_diff", True),
        ("topic", True),
        ("tool.diff", False),
        ("git_diff", False),
        # what a coding request describes, and a reported bug
        ("code_description", True),
        ("feature_request", True),
        ("bug_report", True),
        # an agent's run state: the tasks still open and those done
        ("pending_tasks", True),
        ("completed_tasks", True),
        ("tasks", False),
        ("example_pending_tasks", False),
        ("tool_description", False),
        # the context of repositories or projects is the deployment's
        ("REPOS_CONTEXT", False),
        ("projects_context", False),
        ("selection", True),
        ("selected_text", True),
        # an agent's personality is the agent's, the same for every request it serves
        ("personality_context", False),
        ("character_description", False),
        # a field of the item the request is about
        ("issue_title", True),
        ("events", True),
        ("trajectory", True),
        ("issue_number", True),
        ("pr_description", True),
        ("pullRequestBody", True),
        ("ticket_body", True),
        ("example_issue_title", False),
        ("tool_description", False),
        ("issue_tracker", False),
        ("task_name", False),
    ],
)
def test_is_request_input(name, expected):
    assert is_request_input(name) is expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("question", True),
        ("user_input", True),
        ("latest_message", True),
        ("task", False),
        ("problem_statement", False),
        ("tool_input", False),
    ],
)
def test_is_turn_input(name, expected):
    assert is_turn_input(name) is expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("rag_context", True),
        ("retrieved_docs", True),
        ("relevant_chunks", True),
        ("search_results", True),
        ("context", False),
        ("search_engine", False),
    ],
)
def test_names_lookup(name, expected):
    assert names_lookup(name) is expected


def test_is_request_input_extra_names():
    assert not is_request_input("clause_body")
    assert is_request_input("clause_body", ["clause body"])


@pytest.mark.parametrize(
    ("command", "code"),
    [
        ("git status", "PFX104"),
        ("git log --oneline -10", "PFX104"),
        ("ls -la", "PFX104"),
        ("cat package.json", "PFX104"),
        ("date +%Y-%m-%d", "PFX101"),
        ("/bin/date", "PFX101"),
        ("uuidgen", "PFX102"),
        ("whoami", "PFX103"),
    ],
)
def test_classify_command(command, code):
    assert classify_command(command) == code


@pytest.mark.parametrize(
    ("attributes", "expected"),
    [
        (["project", "name"], True),
        (["tool"], True),
        (["name"], False),
        (["tool_preferences"], False),
        ([], False),
    ],
)
def test_names_other_owner(attributes, expected):
    assert names_other_owner(attributes) is expected


def test_a_possessive_is_its_noun():
    assert split_words("the user's name") == ("the", "user", "name")
    assert classify_name("The user\u2019s timezone") == "PFX103"
    assert split_words("user_s") == ("user", "s")  # identifiers are unchanged
