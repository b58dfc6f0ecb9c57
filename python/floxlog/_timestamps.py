"""The ``timestamps=`` option of the dataset readers: the ``exchange_ts`` /
``recv_ts`` columns as ``timestamp[ns, UTC]`` (the default), or floored to
microseconds or milliseconds for engines without nanoseconds (Spark). The
raw ``*_ts_ns`` integer columns always stay exact."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from . import _args

UNITS = ("ns", "us", "ms")
_PER = {"ns": 1, "us": 1_000, "ms": 1_000_000}


def check(unit: object) -> str:
    return _args.choice(unit, "timestamps", UNITS)


def _floored(raw: pa.Array, unit: str) -> pa.Array:
    # Floored (not truncated toward zero): a time before 1970 falls in the
    # unit it is in.
    v = raw.to_numpy(zero_copy_only=False).astype(np.int64) // _PER[unit]
    return pa.array(v, pa.int64()).view(pa.timestamp(unit, tz="UTC"))


def apply(table: pa.Table, unit: str) -> pa.Table:
    """The table with its timestamp columns in ``unit``."""
    if unit == "ns":
        return table
    names = table.column_names
    for i, f in enumerate(table.schema):
        if pa.types.is_timestamp(f.type) and f.name + "_ns" in names:
            raw = table.column(f.name + "_ns")
            t = pa.timestamp(unit, tz="UTC")
            arr = pa.chunked_array([_floored(c, unit) for c in raw.chunks], t)
            table = table.set_column(i, pa.field(f.name, t, nullable=f.nullable), arr)
    return table
