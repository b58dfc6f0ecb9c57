"""The ``timestamps=`` option of the dataset readers: the ``exchange_ts`` /
``recv_ts`` columns as ``timestamp[ns, UTC]`` (the default), or floored to
microseconds or milliseconds for engines without nanoseconds (Spark). The
raw ``*_ts_ns`` integer columns always stay exact. The native read converts
them (``Conversion`` in floxlog-arrow); here only the argument is checked."""

from __future__ import annotations

from . import _args

UNITS = ("ns", "us", "ms")


def check(unit: object) -> str:
    return _args.choice(unit, "timestamps", UNITS)
