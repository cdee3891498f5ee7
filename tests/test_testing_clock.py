"""freeze_clock: clock names in a module's globals read the frozen time, then are restored."""

from __future__ import annotations

import datetime as datetime_module
import time as time_module
import types
from datetime import date, datetime, timezone

import pytest

from prefixlint.testing import freeze_clock

FROZEN = datetime(2026, 3, 1, 12, 34, 56, tzinfo=timezone.utc)


def _module() -> types.ModuleType:
    module = types.ModuleType("builder")
    module.time = time_module
    module.datetime_module = datetime_module
    module.datetime = datetime
    module.date = date
    module.time_function = time_module.time
    return module


@pytest.mark.parametrize(
    ("read", "expected"),
    (
        (lambda m: m.time.time(), FROZEN.timestamp()),
        (lambda m: m.time_function(), FROZEN.timestamp()),
        (lambda m: m.time.time_ns(), int(FROZEN.timestamp() * 1_000_000_000)),
        (lambda m: m.datetime.now(timezone.utc), FROZEN),
        (lambda m: m.datetime.utcnow(), FROZEN.replace(tzinfo=None)),
        (lambda m: m.datetime_module.datetime.now(timezone.utc), FROZEN),
        (lambda m: m.date.today(), FROZEN.astimezone().date()),
        (lambda m: m.datetime.now(), FROZEN.astimezone().replace(tzinfo=None)),
        (lambda m: m.time.strftime("%Y"), "2026"),
    ),
)
def test_frozen_reads(read, expected):
    module = _module()
    with freeze_clock(FROZEN, module):
        assert read(module) == expected


def test_restored_after_the_block_and_other_modules_untouched():
    module = _module()
    with freeze_clock(FROZEN, module):
        assert time_module.time() != FROZEN.timestamp()
    assert module.time is time_module
    assert module.datetime is datetime
    assert module.time_function is time_module.time


def test_timestamps_and_naive_datetimes_are_accepted():
    module = _module()
    with freeze_clock(1_700_000_000, module):
        assert module.time.time() == 1_700_000_000
    naive = datetime(2026, 1, 1, 8, 0)
    with freeze_clock(naive, module):
        assert module.datetime.now() == naive


def test_frozen_datetime_is_still_a_datetime():
    module = _module()
    with freeze_clock(FROZEN, module):
        now = module.datetime.now(timezone.utc)
        assert isinstance(now, datetime)
        assert isinstance(module.datetime(2020, 1, 1), datetime)


def test_frozen_reads_are_instances_of_the_names_the_module_sees():
    # A builder that checks ``isinstance(value, datetime)`` on ``datetime.now()`` sees the
    # same answer with the clock frozen.
    module = _module()
    with freeze_clock(FROZEN, module):
        for value in (module.datetime.now(), module.datetime.utcnow(), module.datetime.today()):
            assert isinstance(value, module.datetime)
        assert isinstance(module.datetime.now(timezone.utc), module.datetime)
        assert isinstance(module.date.today(), module.date)
