"""Data: the calls whose results vary between runs or come back in no fixed order.

Keys are fully qualified names as ``pyflow.scopes`` spells them (as libcst does), so
``from datetime import datetime as dt; dt.now()`` and ``import datetime; datetime.datetime.now()``
both read ``datetime.datetime.now``. Values are ``(rule code, granularity)``: ``"instant"``
changes on every call, ``"daily"`` once a day, ``"process"`` once per process or machine.
"""

from __future__ import annotations

from collections.abc import Iterable

from prefixlint.codes import ENVIRONMENT, LINE_ENDINGS, PER_USER, TIMESTAMP, UNIQUE_ID

REQUEST_INPUT = "input"  # a per-request value (a parameter); only PFX301 reports it
PARAMETER = "parameter"  # stands for an argument inside a function summary; never reported
IMPORTED = "imported"  # the result of a function imported from a module of the same package

INSTANT = "instant"
DAILY = "daily"
PROCESS = "process"


def _names(text: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in text.split(",") if item.strip())


VOLATILE_CALLS: dict[str, tuple[str, str]] = {
    **dict.fromkeys(
        _names(
            """
            datetime.datetime.now, datetime.datetime.utcnow, datetime.datetime.today,
            time.time, time.time_ns, time.monotonic, time.perf_counter, time.strftime,
            time.ctime, time.localtime, time.gmtime, time.asctime, arrow.now, arrow.utcnow,
            pendulum.now, django.utils.timezone.now, django.utils.timezone.localtime,
            pandas.Timestamp.now, pandas.Timestamp.utcnow
            """
        ),
        (TIMESTAMP, INSTANT),
    ),
    **dict.fromkeys(
        _names("datetime.date.today, pendulum.today, django.utils.timezone.localdate"),
        (TIMESTAMP, DAILY),
    ),
    **dict.fromkeys(
        _names(
            """
            uuid.uuid1, uuid.uuid4, uuid.uuid6, uuid.uuid7, os.urandom, secrets.token_hex,
            secrets.token_urlsafe, secrets.token_bytes, secrets.choice, secrets.randbelow,
            secrets.randbits, random.random, random.randint, random.randrange, random.uniform,
            random.getrandbits, random.randbytes, random.gauss, random.normalvariate,
            random.triangular, numpy.random.rand, numpy.random.randint, numpy.random.random
            """
        ),
        (UNIQUE_ID, INSTANT),
    ),
    **dict.fromkeys(
        _names("getpass.getuser, locale.getlocale, locale.getdefaultlocale"), (PER_USER, PROCESS)
    ),
    **dict.fromkeys(
        _names("opentelemetry.trace.get_current_span, time.process_time"), (UNIQUE_ID, INSTANT)
    ),
    **dict.fromkeys(
        _names(
            """
            os.getcwd, os.getcwdb, pathlib.Path.cwd, pathlib.Path.home, os.getpid, os.getppid,
            os.getlogin, os.uname, os.getenv, os.environ.get, os.environ.copy, socket.gethostname,
            socket.getfqdn, sys.argv
            """
        ),
        (ENVIRONMENT, PROCESS),
    ),
}

# Every function of these modules describes the machine it runs on.
VOLATILE_MODULES: dict[str, tuple[str, str]] = {"platform": (ENVIRONMENT, PROCESS)}

# Attributes that are volatile values by themselves (read, not called).
VOLATILE_ATTRIBUTES: dict[str, tuple[str, str]] = {
    "os.environ": (ENVIRONMENT, PROCESS),
    "os.linesep": (LINE_ENDINGS, PROCESS),
    "sys.argv": (ENVIRONMENT, PROCESS),
    "sys.platform": (ENVIRONMENT, PROCESS),
}

# Attribute names that can start a volatile value when read (``os.environ``, the run
# dependencies ``ctx.deps`` of a dynamic system prompt).
SOURCE_ATTRIBUTES = frozenset({"environ", "argv", "linesep", "deps", "platform"})

# Clock functions that are pure when given the time: how many positional arguments make them so.
PURE_WITH_ARGUMENTS: dict[str, int] = {
    "time.strftime": 2,
    "time.ctime": 1,
    "time.localtime": 1,
    "time.gmtime": 1,
    "time.asctime": 1,
}

# Module-level random functions that pick or reorder items of a collection.
RANDOM_SELECTORS: frozenset[str] = frozenset(
    _names(
        """
        random.shuffle, random.sample, random.choice, random.choices, numpy.random.shuffle,
        numpy.random.permutation, numpy.random.choice
        """
    )
)
SELECTOR_METHODS = frozenset({"shuffle", "sample", "choice", "choices", "permutation"})
RANDOM_CONSTRUCTORS = frozenset(
    {"random.Random", "numpy.random.default_rng", "numpy.random.RandomState"}
)
SEEDING_CALLS = frozenset({"random.seed", "numpy.random.seed"})

# Calls that return items in an order that differs between runs, machines or file systems.
# The value says how ``sorted`` can order the result: "plain", "by name", or "" (unknown).
UNORDERED_CALLS: dict[str, str] = {
    "builtins.set": "",
    "builtins.frozenset": "",
    "os.listdir": "plain",
    "os.scandir": "by name",
    "os.walk": "",
    "glob.glob": "plain",
    "glob.iglob": "plain",
}
# Methods that list a directory or an MCP server's tools (``Path.iterdir``, ``session.list_tools``).
UNORDERED_METHODS: dict[str, str] = {
    "iterdir": "plain",
    "rglob": "plain",
    "list_tools": "by name",
}
SET_METHODS = frozenset({"union", "intersection", "difference", "symmetric_difference"})
SET_OPERATORS = ("BitOr", "BitAnd", "Sub", "BitXor")

# Calls that keep the order of what they are given (so an unordered input stays unordered).
ORDER_PRESERVING = frozenset(
    _names(
        """
        builtins.list, builtins.tuple, builtins.enumerate, builtins.reversed, builtins.map,
        builtins.filter, builtins.zip, builtins.iter, builtins.next, builtins.str, builtins.repr,
        builtins.dict, itertools.chain, itertools.islice
        """
    )
)
ORDER_PRESERVING_METHODS = frozenset(
    {
        "keys",
        "values",
        "items",
        "copy",
        "join",
        "format",
        "render",
        "substitute",
        "safe_substitute",
        "replace",
        "tools",
        "fetchall",
        "fetchmany",
        "all",
        "scalars",
    }
)
# Methods that fill a template's fields from their arguments.
FILLING_METHODS = frozenset({"format", "format_map", "render", "substitute", "safe_substitute"})
# Calls whose result does not depend on the order of their input.
ORDER_INSENSITIVE = frozenset(
    _names(
        """
        builtins.sorted, builtins.len, builtins.sum, builtins.min, builtins.max, builtins.any,
        builtins.all, builtins.bool, builtins.set, builtins.frozenset, collections.Counter
        """
    )
)

# Datetime methods and attributes that keep only the day (or a coarser unit).
DAY_METHODS = frozenset({"date", "today"})
DAY_ATTRIBUTES = frozenset({"year", "month", "day", "weekday", "isoweekday"})
TIME_DIRECTIVES = frozenset("HIMSfpzZXcTRrsLkl")

# Subprocess entry points; a call counts when the command it runs is ``git``.
SUBPROCESS_CALLS = frozenset(
    _names(
        """
        subprocess.run, subprocess.check_output, subprocess.Popen, subprocess.call,
        subprocess.check_call, subprocess.getoutput, subprocess.getstatusoutput, os.popen,
        os.system
        """
    )
)


def _parts(names: Iterable[str]) -> tuple[set[str], set[str]]:
    return {n.split(".")[0] for n in names}, {n.rsplit(".", 1)[-1] for n in names}


# Calls that declare a field of a dataclass or model: the field's value is its default.
FIELD_CALLS: frozenset[str] = frozenset(
    {"dataclasses.field", "pydantic.Field", "pydantic.fields.Field"}
)

# Calls and methods that give a dict in the order of declared fields: a dataclass's or a
# model's dump, a model's JSON schema (``Model.model_json_schema()``, ``TypeAdapter(...)``).
FIXED_ORDER_CALLS: frozenset[str] = frozenset({"dataclasses.asdict"})
FIXED_ORDER_METHODS: frozenset[str] = frozenset({"model_json_schema", "model_dump", "json_schema"})

_EVERY_NAME = (
    *VOLATILE_CALLS, *VOLATILE_ATTRIBUTES, *PURE_WITH_ARGUMENTS, *RANDOM_SELECTORS,
    *RANDOM_CONSTRUCTORS, *SEEDING_CALLS, *UNORDERED_CALLS, *ORDER_PRESERVING,
    *ORDER_INSENSITIVE, *SUBPROCESS_CALLS, "json.dumps", "json.loads", *FIELD_CALLS,
    *FIXED_ORDER_CALLS,
)  # fmt: skip
# A call or attribute can only match the tables when its first or last name is one of these
# (or is bound by an import under another name), so other names skip qualified-name lookup.
KNOWN_ROOTS = frozenset(_parts(_EVERY_NAME)[0] | set(VOLATILE_MODULES))
KNOWN_LEAVES = frozenset(_parts(_EVERY_NAME)[1])

_SOURCE_NAMES = (
    *VOLATILE_CALLS, *VOLATILE_ATTRIBUTES, *RANDOM_SELECTORS, *RANDOM_CONSTRUCTORS,
    *UNORDERED_CALLS, *SUBPROCESS_CALLS, "json.dumps", "json.loads",
)  # fmt: skip
# Spellings that can start a volatile or unordered value (the source tables above).
SOURCE_ROOTS = frozenset(_parts(_SOURCE_NAMES)[0] | set(VOLATILE_MODULES))
SOURCE_LEAVES = frozenset(
    _parts(_SOURCE_NAMES)[1]
    | set(UNORDERED_METHODS)
    | SELECTOR_METHODS
    | SET_METHODS
    | {"glob", "execute", "fetch", "fetchrow", "fetchall"}
)
