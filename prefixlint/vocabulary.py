"""Names that say a value changes between renders: time, ids, per-user data, the environment.

Identifiers are split into lowercase words (``currentDate`` -> ``current date``,
``runtime_info.date`` -> ``runtime info date``) and matched as whole word sequences at the end
of the name (its head noun), so ``update``, ``validate``, ``timeout`` or ``time_limit`` never
match ``date`` or ``time``. A trailing formatting word (``_str``, ``_iso``, ``_utc``, ...) is
ignored first, so ``current_date_str`` still reads as a date. A run-together word
(``CURRENTDATE``, ``useragent``) is split into known words when no phrase matches it whole, and
counts only when the split ends in a phrase of two or more words, so ``runtime`` stays a word.

A prompt written in German, French, Spanish or Italian may name its values in that language
(``datum``, ``fecha_hora``, ``utilisateur.prenom``): ``local_names`` gives those names, to add
as ``extra`` where the prose is in that language (``datum`` is an English word too).

Codes returned: ``PFX101`` time and date, ``PFX102`` unique ids and randomness, ``PFX103``
values that differ per user, ``PFX104`` snapshots of the machine or repository.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

from prefixlint.codes import ENVIRONMENT, PER_USER, TIMESTAMP, UNIQUE_ID

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def _listed(text: str) -> tuple[str, ...]:
    """The comma-separated entries of ``text``."""
    return tuple(item.strip() for item in text.split(",") if item.strip())


# Trailing words that format a value without changing what it is.
_FORMAT_WORDS = frozenset(
    _listed(
        """
        str, string, text, iso, utc, local, formatted, fmt, display, value, val, ms,
        sec, secs, seconds, millis, ns, epoch, hex, short, full
        """
    )
)

# A head word qualified by one of these names a setting, not a moment or an instance.
_SETTING_WORDS = frozenset(
    _listed(
        """
        max, min, maximum, minimum, limit, limits, budget, default, format, formats,
        total, per, cutoff, knowledge, training, release, expiry, deadline, elapsed,
        wait, sleep, timeout
        """
    )
)

# Word sequences matched at the end of a name, by code.
_PHRASES: dict[str, tuple[str, ...]] = {
    TIMESTAMP: _listed(
        """
        time, date, datetime, date time, timestamp, time stamp, now, today, clock,
        current time, current date, current year, current month, current day, weekday,
        day of week, todays date, today date, currentdate, currenttime, created at,
        updated at, modified at, sent at, started at, start time, end time, current datetime,
        local time, local date, utc time, system time, date and time, time of day
        """
    ),
    UNIQUE_ID: _listed(
        """
        uuid, guid, nonce, request id, req id, requestid, trace id, traceid, span id,
        session id, sessionid, correlation id, conversation id, conversationid, chat id,
        thread id, run id, runid, message id, msg id, transaction id, execution id,
        invocation id, idempotency key, cache buster, cachebuster, job id, event id,
        interaction id, response id, completion id, generation id, turn id, call id, tool call
        id, operation id, ticket id, case id, order id, visit id, device id, client request id,
        traceparent, request number, subagent id, episode id, attempt id, parent agent id,
        child agent id
        """
    ),
    PER_USER: _listed(
        """
        user name, username, user id, userid, user email, email, email address, user
        location, location, user locale, locale, user timezone, timezone, time zone, tz,
        user language, user city, user country, user address, first name, last name,
        full name, customer name, customer id, account id, account name, user profile,
        user info, user preferences, user memory, user memories, member id, phone
        number, user phone, user handle, user display name, preferred name, nickname,
        nick name, display name, user agent, preferences, preferred language, user
        instructions, personal instructions, memory, memories, user
        context, user bio, user settings, personalization, profile, birthday, user age,
        user role, user plan, user tier, user region, user country code, language
        """
    ),
    ENVIRONMENT: _listed(
        """
        cwd, pwd, working dir, working directory, workdir, work dir, current dir,
        current directory, current working directory, git status, git branch, git diff,
        git log, git commit, git sha, git head, current branch, branch name, branch, file list,
        file listing, file tree, files list, dir tree, directory tree, directory
        listing, dir listing, repo tree, repository tree, project tree, project
        structure, repo structure, repository structure, hostname, host name, os, os
        name, os version, platform, operating system, env vars, env var, environment
        variables, environ, system info, machine info, available hosts, python version,
        node version, kernel version, ip address, open files, open tabs, running
        processes, git root, repo root, repository root, project root, workspace root,
        shell, default
        shell, terminal, os type, os info, environment info, env info, git repo, is git repo,
        git user, git remote, git email, recent commits, directory structure, folder
        structure, file structure, project files, home dir, home directory, detected tools,
        installed tools, installed packages, current file, active file, open file,
        editor state, repo map, repomap, repository map, file map, code map, recent files,
        environment details, system information, current url, page url, browser state, repo
        name, repository name, repo directory, repository directory, repo dir, repo path,
        repository path, repo folder, project directory, project dir, project path, env, host,
        server name, machine name, abs path, absolute path, worktree, worktrees, worktree path,
        worktree root
        """
    ),
}

# Names of volatile values in the languages prompts are often written in, by code; the words
# of a person (``utilisateur``, ``usuario``) are in ``_PERSON_WORDS`` for every prompt.
_LOCAL_NAMES: dict[str, dict[str, tuple[str, ...]]] = {
    "de": {
        TIMESTAMP: _listed("datum, uhrzeit, zeit, zeitstempel, heute, jetzt, aktuelles datum"),
        PER_USER: _listed("vorname, nachname, benutzername, anrede, wohnort"),
    },
    "fr": {
        TIMESTAMP: _listed("date, heure, date heure, horodatage, aujourdhui, maintenant"),
        PER_USER: _listed("prenom, nom complet, courriel, adresse courriel"),
    },
    "es": {
        TIMESTAMP: _listed("fecha, hora, fecha hora, fecha actual, hoy, ahora, marca tiempo"),
        PER_USER: _listed("nombre usuario, apellido, apellidos, correo, correo electronico"),
    },
    "it": {
        TIMESTAMP: _listed("data odierna, data ora, ora attuale, oggi, adesso"),
        PER_USER: _listed("cognome, nome utente, nome completo, indirizzo email"),
    },
}


def local_names(language: str | None) -> dict[str, tuple[str, ...]]:
    """Names of volatile values in ``language`` (``de``, ``fr``, ``es``, ``it``), by code."""
    return _LOCAL_NAMES.get(language or "", {})


# Objects made per run whose ``id`` attribute is generated for each one.
_RUNTIME_OWNERS = frozenset({"task", "actor"})

# Word sequences that name per-request input: what the user asks and what the task brings.
_REQUEST_INPUTS = _listed(
    """
    question, questions, query, input, inputs, user input, task, task description,
    problem statement, problem, issue, request, user request, message, user message,
    messages, observation, history, chat history, conversation, transcript, text, content,
    document, documents, context, user prompt, prompt input, diff, patch, topic, code,
    snippet, arguments, selection, selected text, code description, feature description,
    feature request, bug description, bug report, change description, pending tasks,
    completed tasks, remaining tasks, open tasks, finished tasks, done tasks, prompt, goal,
    goals, plan, step by step plan, summary, conversation summary, task instructions,
    events, event history, trajectory, observations, feedback, user feedback
    """
)

# The part of the input that is new on every turn of a conversation.
_TURN_INPUTS = _listed(
    """
    question, query, user input, input, user message, user query, user question, utterance,
    user prompt, latest message, new message, current message
    """
)

# The words before ``prompt`` that make it what the request sends (``user_prompt``), where
# any other names a part of the prompt (``skills_prompt``, ``format_prompt``).
_PROMPT_SENDERS = frozenset(
    _listed("user, human, input, query, question, task, request, customer, client, raw, original")
)

# What a request is about, item by item: a field of one (``issue_title``, ``pr_body``,
# ``ticket_description``) is as new per request as the item itself.
_INPUT_ITEMS = _listed(
    """
    issue, github issue, pr, pull request, merge request, ticket, bug, question, problem,
    task, request, query, document, article, paper, email, post
    """
)
_ITEM_FIELDS = frozenset(
    _listed(
        """
        title, body, number, description, details, text, content, summary, url, link,
        labels, comments, author
        """
    )
)

# Words that name the result of a retrieval made for the current question.
_LOOKUP_WORDS = frozenset({"rag", "retrieved", "retrieval", "relevant", "reranked"})

# Names of the documents a retrieval step hands a prompt for the current question: LangChain's
# stuff-documents chains (``create_stuff_documents_chain``, ``create_retrieval_chain``) fill
# ``{context}`` (``DOCUMENTS_KEY`` in ``langchain.chains.combine_documents.base``), prompt
# flow's RAG templates ``{{contexts}}``.
_TURN_CONTEXTS = _listed("context, contexts, retrieved context, documents, search results")

# Names of a conversation's earlier turns, as a template iterates or inlines them.
_CONVERSATIONS = _listed(
    """
    history, chat history, conversation history, message history, messages, chat messages,
    conversation, dialogue, dialog, turns, previous messages, past messages, events, event
    history, trajectory
    """
)

# Qualifiers that make an input-named value fixed text (``tool.inputs``, ``system_message``,
# ``welcome_message``, ``tool_call.arguments``) or the deployment's (``project_context``: the
# project's instructions), not the request.
_DESCRIBED_OWNERS = frozenset(
    _listed(
        """
        agent, agents, tool, tools, function, functions, schema, example, examples, sample,
        samples, demo, demos, default, defaults, template, spec, system, welcome, greeting,
        fallback, intro, introduction, base, static, fixed, format, style, persona, personality,
        character, assistant, bot, footer, header, signature, disclaimer, call, project,
        projects, repo, repos, repository, repositories, workspace, codebase, product, company,
        organization
        """
    )
)

# Words that make a whole name volatile wherever they appear in it.
_ANYWHERE: dict[str, frozenset[str]] = {
    UNIQUE_ID: frozenset({"uuid", "guid", "nonce", "random", "rand", "randint"}),
}
_NOT_RANDOM_HEADS = frozenset({"seed", "state"})
# ``env`` after one of these is a template engine's or a simulator's environment object
# (``jinja_env``, ``template_env``, ``gym_env``), not the process environment.
_OBJECT_ENV_OWNERS = frozenset({"jinja", "jinja2", "template", "templates", "tpl", "gym", "sim"})

# The people a product serves: a record named after one (``traveller``, ``patient``) holds
# that person's details, so each of its fields differs per user (``traveller.home_airport``).
# ``member`` is not one: in code it is mostly a team's member agent or an enum's member.
_PERSON_RECORDS = frozenset(
    _listed(
        """
        user, customer, person, employee, traveller, traveler, reviewer, patient,
        student, learner, guest, passenger, shopper, buyer, subscriber, visitor, player,
        reader, viewer, applicant, recipient, requester, participant, attendee, tenant,
        utilisateur, usager, benutzer, nutzer, kunde, kundin, usuario, cliente, utente
        """
    )
)
# A per-user head word (``email``, ``location``) qualified by anything else (``support_email``,
# ``file_location``) names something fixed, unless the qualifier is about the person.
_PERSON_WORDS = _PERSON_RECORDS | frozenset(
    _listed(
        """
        users, client, caller, sender, my, your, current, account, author, owner, human,
        contact
        """
    )
)


# A per-user phrase qualified by one of these (``bot_display_name``) belongs to something else.
_NOT_A_PERSON = frozenset(
    _listed(
        """
        bot, assistant, agent, app, application, company, product, model, service, tool,
        system, project, org, organization, team, brand, site, support, default, repo,
        repository
        """
    )
)


def _by_code(**lists: str) -> dict[str, str]:
    """Invert ``CODE_NAME="a, b"`` keyword lists into ``{"a": code, "b": code}``."""
    codes = {
        "timestamp": TIMESTAMP,
        "unique_id": UNIQUE_ID,
        "per_user": PER_USER,
        "environment": ENVIRONMENT,
    }
    return {item: codes[kind] for kind, text in lists.items() for item in _listed(text)}


# Callables whose result differs per call, by their dotted name.
_CALLS = _by_code(
    timestamp="""
        now, today, utcnow, strftime_now, strftime, isoformat, time.time, time.time_ns,
        time.localtime, time.gmtime, time.ctime, time.asctime, time.strftime, datetime.now,
        datetime.utcnow, datetime.today, date.today, datetime.datetime.now,
        datetime.datetime.utcnow, datetime.datetime.today, datetime.date.today, pendulum.now,
        arrow.now, arrow.utcnow
    """,
    unique_id="""
        uuid1, uuid4, uuid6, uuid7, uuid.uuid1, uuid.uuid4, uuid.uuid7, random, randint,
        random_id, random.random, random.randint, random.choice, random.getrandbits,
        secrets.token_hex, secrets.token_urlsafe, secrets.token_bytes, os.urandom
    """,
    per_user="getpass.getuser",
    environment="""
        cwd, getcwd, os.getcwd, Path.cwd, pathlib.Path.cwd, os.listdir, os.scandir, os.walk,
        glob.glob, socket.gethostname, platform.node, platform.system, platform.platform,
        platform.release, platform.uname, os.uname, os.getenv, os.environ.get,
        subprocess.check_output, subprocess.run
    """,
)

# Jinja filters that only make sense on a date or time value, or that draw at random.
_FILTERS = _by_code(
    timestamp="""
        date, datetime, strftime, timestamp, datetimeformat, dateformat, timeago,
        naturaltime, humanize
    """,
    unique_id="uuid",
)

_POSSESSIVE = re.compile(r"['\u2019]s\b")
_CHECK_ORDER = (UNIQUE_ID, PER_USER, ENVIRONMENT, TIMESTAMP)


@lru_cache(maxsize=8192)  # the same names recur in every file
def split_words(name: str) -> tuple[str, ...]:
    """Lowercase words of an identifier or dotted path (camelCase, snake_case, dots, calls),
    or of a label in prose (a possessive is its noun: ``the user's name`` is ``the user
    name``)."""
    return tuple(word.lower() for word in _WORD.findall(_POSSESSIVE.sub("", name)))


def _phrase_codes(lists: Iterable[tuple[str, Iterable[str]]]) -> dict[tuple[str, ...], str]:
    """``{words: code}`` for named phrases; for a phrase listed twice, the first code wins."""
    table: dict[tuple[str, ...], str] = {}
    for code, names in lists:
        for name in names:
            words = split_words(name)
            if words:
                table.setdefault(words, code)
    return table


_BUILT_IN = _phrase_codes((code, _PHRASES[code]) for code in _CHECK_ORDER)
_LONGEST = max(len(words) for words in _BUILT_IN)
_KNOWN_WORDS = (
    frozenset(word for words in _BUILT_IN for word in words if len(word) > 1) | _PERSON_WORDS
)
_MIN_RUN_TOGETHER = 5
_MAX_PARTS = 4


@lru_cache(maxsize=64)
def _extra_table(extra: tuple[tuple[str, tuple[str, ...]], ...]) -> dict[tuple[str, ...], str]:
    return _phrase_codes(extra)


def _head(words: tuple[str, ...]) -> tuple[str, ...]:
    """``words`` without trailing formatting words and numbers (``uuid4`` -> ``uuid``)."""
    end = len(words)
    while end > 1 and (words[end - 1] in _FORMAT_WORDS or words[end - 1].isdigit()):
        end -= 1
    return words[:end]


def _match_phrases(
    words: tuple[str, ...], extra: dict[tuple[str, ...], str], shortest: int = 1
) -> str | None:
    """The code of the longest phrase (of at least ``shortest`` words) that ends ``words``
    (user phrases first)."""
    longest = max(_LONGEST, max(map(len, extra), default=0))
    for length in range(min(longest, len(words)), shortest - 1, -1):
        phrase = words[-length:]
        if phrase in extra:
            return extra[phrase]
        code = _BUILT_IN.get(phrase)
        if code:
            return _qualified(code, phrase, words[:-length])
    return None


def _qualified(code: str, phrase: tuple[str, ...], qualifiers: tuple[str, ...]) -> str | None:
    """``code``, unless the words before the phrase make it a setting or someone else's."""
    if code == TIMESTAMP and any(q in _SETTING_WORDS for q in qualifiers):
        return None
    if code == PER_USER and any(q in _NOT_A_PERSON for q in qualifiers):
        return None
    if (
        code == PER_USER
        and len(phrase) == 1
        and qualifiers
        and not any(q in _PERSON_WORDS for q in qualifiers)
    ):
        return None
    return code


def classify_words(
    words: tuple[str, ...], extra: Mapping[str, Iterable[str]] | None = None
) -> str | None:
    """The code for a name already split into lowercase words, or ``None``."""
    if not words:
        return None
    frozen = tuple((code, tuple(names)) for code, names in (extra or {}).items() if names)
    return _classify(words, frozen)


@lru_cache(maxsize=4096)
def _classify(words: tuple[str, ...], extra: tuple[tuple[str, tuple[str, ...]], ...]) -> str | None:
    head = _head(words)
    if head[-1] in ("env", "environment") and len(head) > 1 and head[-2] in _OBJECT_ENV_OWNERS:
        return None
    table = _extra_table(extra) if extra else {}
    code = _match_phrases(head, table)
    if code:
        return code
    split = _split_run_together(head)
    if split is not None and (code := _match_phrases(split, table, shortest=2)):
        return code
    if len(head) > 1 and head[-1] in ("name", "id") and head[-2] in _PERSON_RECORDS:
        return PER_USER  # ``student_name``, ``patient_id``: the person's, not a thing's
    for code, anywhere in _ANYWHERE.items():
        if any(w in anywhere for w in words) and head[-1] not in _NOT_RANDOM_HEADS:
            return code
    return None


def _split_run_together(words: tuple[str, ...]) -> tuple[str, ...] | None:
    """``words`` with each run-together word split into known words, or ``None`` if none is."""
    result: list[str] = []
    changed = False
    for word in words:
        parts = None
        if len(word) >= _MIN_RUN_TOGETHER and word not in _KNOWN_WORDS:
            parts = _segment(word)
        result.extend(parts or (word,))
        changed = changed or parts is not None
    return tuple(result) if changed else None


@lru_cache(maxsize=4096)
def _segment(word: str) -> tuple[str, ...] | None:
    """The fewest known words that spell ``word`` (``currentdate`` -> current, date)."""
    best: list[tuple[str, ...] | None] = [()] + [None] * len(word)
    for end in range(1, len(word) + 1):
        for start in range(max(end - 20, 0), end - 1):
            previous = best[start]
            if previous is None or word[start:end] not in _KNOWN_WORDS:
                continue
            candidate = (*previous, word[start:end])
            current = best[end]
            if current is None or len(candidate) < len(current):
                best[end] = candidate
    found = best[len(word)]
    return found if found and 1 < len(found) <= _MAX_PARTS else None


def classify_name(name: str, extra: Mapping[str, Iterable[str]] | None = None) -> str | None:
    """``PFX101``..``PFX104`` when ``name`` says its value changes per render, else ``None``.

    ``name`` is an identifier, a dotted path (``runtime_info.date``, ``user.email``) or a call
    (``now()``); ``extra`` maps codes to further names that count (a rule option).
    """
    name = name.strip()
    if name.endswith(")"):
        call = classify_call(name.split("(", 1)[0])
        if call:
            return call
        name = name.split("(", 1)[0]
    if _runtime_identity(name):
        return UNIQUE_ID
    code = classify_words(split_words(name), extra)
    return PER_USER if code is None and _person_field(name) else code


def _person_field(name: str) -> bool:
    """Whether ``name`` reads a field of a record named after a person (``traveller.name``,
    ``reviewer.notes``): neither one owned by something else (``user.team_name``) nor what
    the person sends (``customer.message``), which is the request's input."""
    owner, dot, attribute = name.rpartition(".")
    if not dot or not attribute or attribute.startswith("_"):
        return False
    words = split_words(owner.rsplit(".", 1)[-1])
    if not words or words[-1] not in _PERSON_RECORDS or is_request_input(attribute):
        return False
    return not owned_by_other(attribute)


def owned_by_other(name: str) -> bool:
    """Whether ``name`` says it belongs to something other than a person
    (``organization_profile``, ``bot_name``): a field of a user's record that is not theirs."""
    return any(word in _NOT_A_PERSON for word in split_words(name))


def names_other_owner(attributes: Iterable[str]) -> bool:
    """Whether a path's attributes after an object go through a thing other than that object
    (``state.branch.project.name``: the project's name, not a field of the branch): an
    attribute whose head word names a project, a tool, a company, ...."""
    for attribute in attributes:
        words = split_words(attribute)
        if words and words[-1] in _NOT_A_PERSON:
            return True
    return False


# Programs whose output is the date or time, a fresh id, or the person running them; the
# output of any other command run while the prompt is rendered is a snapshot of the machine
# or the repository (``git status``, ``ls``, ``cat package.json``).
_COMMANDS = _by_code(
    timestamp="date, gdate",
    unique_id="uuidgen, mktemp",
    per_user="whoami, id, logname",
)
_COMMAND_WORD = re.compile(r"[\w./-]+")


def classify_command(command: str) -> str:
    """The code of the output of shell ``command``, run when the prompt is rendered (a
    Markdown command file's ``!`git status` ``): the date for ``date``, an id for ``uuidgen``,
    the user for ``whoami``; any other output is a snapshot of the environment."""
    first = _COMMAND_WORD.match(command.strip())
    program = first.group(0).rsplit("/", 1)[-1] if first else ""
    return _COMMANDS.get(program, ENVIRONMENT)


def _runtime_identity(name: str) -> bool:
    """Whether ``name`` reads the ``id`` attribute of a task or actor object (``task.id``,
    ``self.parent_task.id``): the identity such objects get when they are made at run time,
    new for every task. A plan's ``task_id`` key or field names a step and does not count."""
    owner, dot, attribute = name.rpartition(".")
    if not dot or attribute != "id":
        return False
    words = split_words(owner.rsplit(".", 1)[-1])
    return bool(words) and words[-1] in _RUNTIME_OWNERS


def classify_call(callee: str) -> str | None:
    """The code for a call whose result changes per call (``datetime.now``, ``uuid4``, ...).

    ``callee`` is a dotted name without arguments. A fully qualified name is looked up first,
    then its last one or two parts, so ``dt.datetime.now`` and ``now`` both count.
    """
    parts = callee.strip().split(".")
    for start in range(len(parts)):
        code = _CALLS.get(".".join(parts[start:]))
        if code:
            return code
    return None


def classify_filter(name: str) -> str | None:
    """The code for a Jinja filter that implies a volatile value (``| date``, ``| strftime``)."""
    return _FILTERS.get(name.strip().lower())


def is_request_input(name: str, extra: Iterable[str] = ()) -> bool:
    """Whether ``name`` holds per-request input (``question``, ``problem_statement``, ...).

    A snapshot of the machine or repository (``git_diff``) is PFX104's, not input. A field
    of a tool, an agent or an example (``agent.inputs``, ``example.question``: the
    word just before names the owner) describes it, and is not the request's input.
    """
    return _names_input(name, _input_phrases(tuple(extra))) or _names_item_field(name)


def is_turn_input(name: str) -> bool:
    """Whether ``name`` holds what the user sends in this turn (``question``, ``user_input``),
    new on every turn of a conversation, unlike its ``task`` or ``problem_statement``."""
    return _names_input(name, _turn_phrases())


def names_lookup(name: str) -> bool:
    """Whether ``name`` holds what was looked up for this request (``rag_context``,
    ``retrieved_docs``, ``relevant_chunks``, ``search_results``): new with every question."""
    words = split_words(name.split("(", 1)[0])
    return bool(_LOOKUP_WORDS.intersection(words)) or words[-2:] == ("search", "results")


def names_turn_context(name: str) -> bool:
    """Whether ``name`` holds what is new with this turn: its input (``question``), or the
    documents looked up for it (``retrieved_docs``, ``{context}``, ``contexts``)."""
    return is_turn_input(name) or names_lookup(name) or _names_input(name, _context_phrases())


def names_conversation(name: str) -> bool:
    """Whether ``name`` holds a conversation's earlier turns (``chat_history``,
    ``messages``), not an example's or a tool's (``example.messages``)."""
    return _names_input(name, _conversation_phrases())


def _names_input(name: str, phrases: frozenset[tuple[str, ...]]) -> bool:
    words = split_words(name.split("(", 1)[0])
    if classify_words(words) == ENVIRONMENT:
        return False  # ``git_diff``: a snapshot of the repository, not what the user sent
    # The name as written, then without a trailing formatting word: ``contract_text`` is the
    # contract's text, ``question_str`` the question.
    for candidate in dict.fromkeys((words, _head(words))):
        for length in range(1, min(len(candidate), 4) + 1):
            if candidate[-length:] in phrases:
                owner = candidate[-length - 1] if len(candidate) > length else ""
                if candidate[-length:] == ("prompt",) and owner:
                    return owner in _PROMPT_SENDERS  # ``skills_prompt``: a part of the prompt
                return owner not in _DESCRIBED_OWNERS
    return False


def _names_item_field(name: str) -> bool:
    """Whether ``name`` is a field of the request's item (``issue_title``, ``pr_description``),
    not of a described one (``example_issue_title``)."""
    words = split_words(name.split("(", 1)[0])
    if len(words) < 2 or words[-1] not in _ITEM_FIELDS:
        return False
    item = words[:-1]
    for phrase in _item_phrases():
        if item[-len(phrase) :] == phrase:
            owner = item[-len(phrase) - 1] if len(item) > len(phrase) else ""
            return owner not in _DESCRIBED_OWNERS
    return False


@lru_cache(maxsize=1)
def _item_phrases() -> tuple[tuple[str, ...], ...]:
    return tuple(sorted({split_words(p) for p in _INPUT_ITEMS}, key=len, reverse=True))


@lru_cache(maxsize=1)
def _turn_phrases() -> frozenset[tuple[str, ...]]:
    return frozenset(split_words(p) for p in _TURN_INPUTS)


@lru_cache(maxsize=1)
def _context_phrases() -> frozenset[tuple[str, ...]]:
    return frozenset(split_words(p) for p in _TURN_CONTEXTS)


@lru_cache(maxsize=1)
def _conversation_phrases() -> frozenset[tuple[str, ...]]:
    return frozenset(split_words(p) for p in _CONVERSATIONS)


@lru_cache(maxsize=64)
def _input_phrases(extra: tuple[str, ...]) -> frozenset[tuple[str, ...]]:
    phrases = {split_words(p) for p in (*_REQUEST_INPUTS, *extra)}
    return frozenset(p for p in phrases if p)
