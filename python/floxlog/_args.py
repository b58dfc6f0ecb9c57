"""Argument checking shared by reads and writes: every size and flag a
caller gives is checked here before it reaches native code, so a bad value
is a ``TypeError`` or a ``ValueError`` naming the argument (never an
allocation of an absurd size, nor a pyo3 conversion message)."""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any, Iterable, Mapping

import numpy as np

from ._errors import UsageError

#: Largest count the native side takes (a signed 64-bit size).
MAX_COUNT = 2**63 - 1


def usage(message: str) -> UsageError:
    """A ``FloxlogError(kind="usage")`` that is also a ``ValueError``."""
    return UsageError(message, kind="usage")


def is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def count(v: Any, what: str, lo: int = 1, hi: int = MAX_COUNT) -> int:
    """An integer argument in ``lo..=hi``."""
    if not is_int(v):
        raise TypeError(f"{what}: expected an int, not {type(v).__name__} {v!r}")
    n = int(v)
    if not lo <= n <= hi:
        raise usage(f"{what} must be between {lo} and {hi}, not {n}")
    return n


def opt_count(v: Any, what: str, lo: int = 1, hi: int = MAX_COUNT) -> int | None:
    return None if v is None else count(v, what, lo, hi)


# -- times -------------------------------------------------------------------

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_WITH_UNIT = re.compile(r"^\s*(-?\d+)\s*(ns|us|µs|ms|s)\s*$")
_UNIT_NS = {"ns": 1, "us": 10**3, "µs": 10**3, "ms": 10**6, "s": 10**9}
_NS_RANGE = "1677-09-21T00:12:43.145224192Z .. 2262-04-11T23:47:16.854775807Z"


def _in_range(ns: int, what: str, shown: Any) -> int:
    if not -(2**63) <= ns <= 2**63 - 1:
        raise usage(f"{what}: {shown} is outside the times a tape can hold ({_NS_RANGE})")
    return ns


def time_arg(v: Any, what: str) -> int | str | None:
    """A time bound as nanoseconds since the epoch, or ISO-8601 text for
    the native parser (UTC unless it has an offset). Forms: int
    (nanoseconds), ``"<integer><unit>"`` (``"1714123500s"``; units s, ms,
    us, ns), ISO 8601, ``datetime`` (naive: UTC), ``date`` (midnight UTC),
    ``numpy.datetime64`` (any unit), ``pandas.Timestamp``. Digits without
    a unit (``"20240426"``, ``"1714123500"``) are refused as ambiguous."""
    if v is None:
        return None
    if isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{what}: a bool is not a time")
    if is_int(v):
        return _in_range(int(v), what, int(v))
    if isinstance(v, str):
        m = _WITH_UNIT.match(v)
        if m:
            return _in_range(int(m.group(1)) * _UNIT_NS[m.group(2)], what, repr(v))
        if v.strip().lstrip("-").isdigit():
            raise usage(
                f"{what}: {v!r} is ambiguous: give ISO 8601 (\"2024-04-26T09:30:00Z\"), "
                "an int (nanoseconds), or digits with a unit (\"1714123500s\", \"...ms\", \"...us\", \"...ns\")"
            )
        return v
    if isinstance(v, np.datetime64):
        if np.isnat(v):
            raise usage(f"{what}: NaT is not a time")
        unit, step = np.datetime_data(v.dtype)
        per = {"D": 86_400 * 10**9, "h": 3_600 * 10**9, "m": 60 * 10**9, "s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
        if unit not in per:
            raise usage(f"{what}: numpy.datetime64 of unit {unit!r} is not supported (use s, ms, us or ns)")
        return _in_range(int(v.astype(np.int64)) * step * per[unit], what, v)
    if isinstance(v, _dt.datetime):
        if v != v:  # pandas.NaT
            raise usage(f"{what}: NaT is not a time")
        # pandas.Timestamp: exact nanoseconds (`value` is UTC, or the wall
        # time read as UTC when naive).
        if hasattr(v, "nanosecond") and hasattr(v, "value"):
            return int(v.value)
        if v.tzinfo is None or v.tzinfo.utcoffset(v) is None:
            v = v.replace(tzinfo=_dt.timezone.utc)  # naive: UTC
        d = v - _EPOCH
        ns = (d.days * 86400 + d.seconds) * 1_000_000_000 + d.microseconds * 1000
        return _in_range(ns, what, v.isoformat())
    if isinstance(v, _dt.date):
        d = _dt.datetime(v.year, v.month, v.day, tzinfo=_dt.timezone.utc) - _EPOCH
        return _in_range(d.days * 86400 * 1_000_000_000, what, v.isoformat())
    raise TypeError(
        f"{what}: expected nanoseconds (int), an ISO-8601 string, digits with a unit, "
        f"a datetime, a date or numpy.datetime64, not {type(v).__name__}"
    )


# -- other arguments ---------------------------------------------------------


def symbols_arg(symbols: Any) -> list[str] | None:
    """``None``: every symbol. Otherwise ids (int) and names (str), one or
    an iterable of them; an empty list selects no symbol (an empty table)."""
    if symbols is None:
        return None
    if isinstance(symbols, str) or is_int(symbols):
        symbols = [symbols]
    elif isinstance(symbols, (bytes, Mapping)) or not isinstance(symbols, Iterable):
        raise TypeError(
            f"symbols: expected an id (int), a name (str) or a list of them, not {type(symbols).__name__}"
        )
    out = []
    for s in symbols:
        if is_int(s):
            if not 0 <= int(s) <= 2**32 - 1:
                raise usage(f"symbols: {int(s)} is not a symbol id (0..{2**32 - 1})")
            out.append(str(int(s)))
        elif isinstance(s, str):
            out.append(s)
        else:
            raise TypeError(f"symbols: expected ids (int) or names (str), not {type(s).__name__} {s!r}")
    return out


def flag(v: Any, what: str) -> bool:
    """A bool (numpy's too); anything else is a ``TypeError``."""
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    raise TypeError(f"{what}: expected True or False, not {type(v).__name__} {v!r}")


def choice(v: Any, what: str, options: tuple[str, ...]) -> str:
    if not isinstance(v, str):
        raise TypeError(f"{what}: expected one of {', '.join(map(repr, options))}, not {type(v).__name__}")
    k = v.strip().lower()
    if k not in options:
        raise usage(f"{what} must be one of {', '.join(map(repr, options))}, not {v!r}")
    return k


def span(v: Any, what: str) -> int:
    """A positive time span in nanoseconds: an int (ns), digits with a unit
    (``"1s"``, ``"250ms"``, ``"5us"``, ``"100ns"``; also ``"1m"``, ``"1h"``),
    ``datetime.timedelta``, ``numpy.timedelta64`` or ``pandas.Timedelta``."""
    if isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{what}: a bool is not a time span")
    if is_int(v):
        ns = int(v)
    elif isinstance(v, str):
        m = re.match(r"^\s*(\d+)\s*(ns|us|µs|ms|s|m|h|d)\s*$", v)
        if not m:
            raise usage(f"{what}: {v!r} is not a span (digits with a unit: \"1s\", \"250ms\", \"1m\", ...)")
        ns = int(m.group(1)) * {**_UNIT_NS, "m": 60 * 10**9, "h": 3600 * 10**9, "d": 86400 * 10**9}[m.group(2)]
    elif isinstance(v, np.timedelta64):
        if np.isnat(v):
            raise usage(f"{what}: NaT is not a span")
        ns = int(v.astype("timedelta64[ns]").astype(np.int64))
    elif isinstance(v, _dt.timedelta):
        ns = int(v.value) if hasattr(v, "value") else (
            (v.days * 86400 + v.seconds) * 10**9 + v.microseconds * 1000
        )
    else:
        raise TypeError(f"{what}: expected a time span (int ns, \"1s\", timedelta), not {type(v).__name__}")
    if not 1 <= ns <= 2**63 - 1:
        raise usage(f"{what}: the span must be positive and fit int64 nanoseconds, not {ns} ns")
    return ns
