"""A frozen clock for the modules that build prompts.

:func:`freeze_clock` rebinds, in the given modules' globals only, the names that read the
time: a module imported as ``import time`` or ``import datetime`` gets a stand-in module whose
clock functions return the frozen time, and classes imported as ``from datetime import
datetime, date`` get subclasses whose ``now``/``utcnow``/``today`` do. Everything is restored
on exit.

Limits: only lookups through those modules' globals see the frozen time. A clock read in
another module (a helper, a library, the logging module), through a default argument bound
at import time (``def f(now=datetime.now())``), or by C code is not frozen: pass those
modules too, or give the builder the time as an argument.
"""

from __future__ import annotations

import contextlib
import datetime as _datetime
import time as _time
import types
from collections.abc import Iterator
from typing import Any, Self


def _as_datetime(when: _datetime.datetime | float) -> _datetime.datetime:
    """A timezone-aware datetime (naive values are taken as local time)."""
    if isinstance(when, (int, float)):
        return _datetime.datetime.fromtimestamp(when).astimezone()
    return when if when.tzinfo is not None else when.astimezone()


def _fake_datetime_class(frozen: _datetime.datetime) -> type[_datetime.datetime]:
    class FrozenDateTime(_datetime.datetime):
        @classmethod
        def now(cls, tz: _datetime.tzinfo | None = None) -> Self:
            moment = frozen.astimezone(tz) if tz is not None else frozen.astimezone()
            return cls._of(moment if tz is not None else moment.replace(tzinfo=None))

        @classmethod
        def utcnow(cls) -> Self:
            return cls._of(frozen.astimezone(_datetime.timezone.utc).replace(tzinfo=None))

        @classmethod
        def today(cls) -> Self:
            return cls.now()

        @classmethod
        def _of(cls, moment: _datetime.datetime) -> Self:
            """``moment`` as an instance of this class (``isinstance(now(), datetime)``)."""
            return cls.combine(moment.date(), moment.timetz()).replace(fold=moment.fold)

    FrozenDateTime.__name__ = FrozenDateTime.__qualname__ = "datetime"
    return FrozenDateTime


def _fake_date_class(frozen: _datetime.datetime) -> type[_datetime.date]:
    class FrozenDate(_datetime.date):
        @classmethod
        def today(cls) -> Self:
            day = frozen.astimezone().date()
            return cls(day.year, day.month, day.day)

    FrozenDate.__name__ = FrozenDate.__qualname__ = "date"
    return FrozenDate


def _fake_time_module(frozen: _datetime.datetime) -> types.ModuleType:
    stamp = frozen.timestamp()

    def localtime(secs: float | None = None) -> _time.struct_time:
        return _time.localtime(stamp if secs is None else secs)

    def gmtime(secs: float | None = None) -> _time.struct_time:
        return _time.gmtime(stamp if secs is None else secs)

    def ctime(secs: float | None = None) -> str:
        return _time.ctime(stamp if secs is None else secs)

    def strftime(fmt: str, t: _time.struct_time | None = None) -> str:
        return _time.strftime(fmt, _time.localtime(stamp) if t is None else t)

    module = types.ModuleType("time")
    module.__dict__.update({k: v for k, v in vars(_time).items() if not k.startswith("__")})
    module.__dict__.update(
        time=lambda: stamp,
        time_ns=lambda: int(stamp * 1_000_000_000),
        localtime=localtime,
        gmtime=gmtime,
        ctime=ctime,
        strftime=strftime,
    )
    return module


def _fake_datetime_module(
    datetime_class: type[_datetime.datetime], date_class: type[_datetime.date]
) -> types.ModuleType:
    module = types.ModuleType("datetime")
    module.__dict__.update({k: v for k, v in vars(_datetime).items() if not k.startswith("__")})
    module.__dict__.update(datetime=datetime_class, date=date_class)
    return module


_CLOCK_FUNCTIONS = ("time", "time_ns", "localtime", "gmtime", "ctime", "strftime")


def _replacements(frozen: _datetime.datetime) -> dict[int, object]:
    """Real clock object id -> its frozen stand-in (modules, classes, ``from time import``)."""
    datetime_class = _fake_datetime_class(frozen)
    date_class = _fake_date_class(frozen)
    time_module = _fake_time_module(frozen)
    replacements: dict[int, object] = {
        id(_time): time_module,
        id(_datetime): _fake_datetime_module(datetime_class, date_class),
        id(_datetime.datetime): datetime_class,
        id(_datetime.date): date_class,
    }
    for name in _CLOCK_FUNCTIONS:
        replacements[id(getattr(_time, name))] = getattr(time_module, name)
    return replacements


@contextlib.contextmanager
def freeze_clock(
    when: _datetime.datetime | float, *modules: types.ModuleType
) -> Iterator[_datetime.datetime]:
    """Freeze the time seen by ``modules`` at ``when`` (a datetime or a Unix timestamp)."""
    frozen = _as_datetime(when)
    replacements = _replacements(frozen)
    saved: list[tuple[dict[str, Any], str, object]] = []
    try:
        for module in modules:
            namespace = vars(module)
            for name, value in list(namespace.items()):
                replacement = replacements.get(id(value))
                if replacement is not None:
                    saved.append((namespace, name, value))
                    namespace[name] = replacement
        yield frozen
    finally:
        for namespace, name, value in reversed(saved):
            namespace[name] = value
