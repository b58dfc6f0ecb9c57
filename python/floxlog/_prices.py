"""The ``prices=`` option of the reading calls: fixed-point columns as
exact decimals (``"decimal"``, the default), as float64 (``"float"``:
``raw / 1e8`` rounded once, what pandas and numpy want) or only as the raw
integers (``"raw"``)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from . import _args

PRICES = ("decimal", "float", "raw")
_SCALE = 100_000_000
#: Past 2^53 an int64 does not convert to a double exactly, so
#: ``raw / 1e8`` in doubles would round twice; those rows are divided
#: with Python's correctly rounded int division instead.
_EXACT = 2**53


def check(prices: object) -> str:
    return _args.choice(prices, "prices", PRICES)


def to_float(raw: np.ndarray) -> np.ndarray:
    """``raw / 1e8`` correctly rounded (one rounding) for every int64."""
    out = raw.astype(np.float64) / float(_SCALE)
    big = np.flatnonzero((raw > _EXACT) | (raw < -_EXACT))
    for i in big.tolist():
        out[i] = int(raw[i]) / _SCALE
    return out


def _float_array(raw: pa.Array) -> pa.Array:
    return pa.array(to_float(raw.to_numpy(zero_copy_only=False).astype(np.int64)), pa.float64())


def _level_type(kind: str) -> pa.DataType:
    extra = pa.float64() if kind == "float" else pa.decimal128(38, 8)
    return pa.list_(
        pa.field(
            "item",
            pa.struct([("price_raw", pa.int64()), ("qty_raw", pa.int64()), ("price", extra), ("qty", extra)]),
            nullable=False,
        )
    )


def _levels(col: pa.Array, kind: str) -> pa.Array:
    """``list<struct<price_raw, qty_raw>>`` with ``price``/``qty`` added."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    items = col.values
    p, q = items.field("price_raw"), items.field("qty_raw")
    if kind == "float":
        pd, qd = _float_array(p), _float_array(q)
    else:
        # Not a cast (that would scale by 1e8): the raw integer is the
        # decimal's unscaled value.
        pd = pa.Array.from_buffers(pa.decimal128(38, 8), len(p), [None, _widen(p)])
        qd = pa.Array.from_buffers(pa.decimal128(38, 8), len(q), [None, _widen(q)])
    st = pa.StructArray.from_arrays([p, q, pd, qd], names=["price_raw", "qty_raw", "price", "qty"])
    offsets = col.offsets
    return pa.ListArray.from_arrays(offsets, st, type=_level_type(kind))


def _widen(a: pa.Array) -> pa.Buffer:
    """The int64 values as int128 words: a decimal of scale 8 whose
    unscaled value is the raw integer."""
    v = a.to_numpy(zero_copy_only=False).astype(np.int64)
    w = np.empty(2 * len(v), np.int64)
    w[0::2] = v
    w[1::2] = v >> 63
    return pa.py_buffer(w.tobytes())


def apply(table: pa.Table, prices: str) -> pa.Table:
    """The table with its fixed-point columns as ``prices`` says."""
    if prices == "decimal" and "bids" not in table.column_names:
        return table
    names = table.column_names
    for i, f in reversed(list(enumerate(table.schema))):
        if pa.types.is_decimal(f.type) and f.name + "_raw" in names:
            if prices == "raw":
                table = table.remove_column(i)
            elif prices == "float":
                raw = table.column(f.name + "_raw")
                arr = pa.chunked_array([_float_array(c) for c in raw.chunks], pa.float64())
                table = table.set_column(i, pa.field(f.name, pa.float64(), nullable=False), arr)
        elif f.name in ("bids", "asks") and prices != "raw":
            col = table.column(i)
            arr = pa.chunked_array([_levels(c, prices) for c in col.chunks], _level_type(prices))
            table = table.set_column(i, pa.field(f.name, arr.type, nullable=False), arr)
    return table


def decimals(raw: np.ndarray) -> np.ndarray:
    """Exact ``decimal.Decimal`` objects of raw units (scale 1e-8), as a
    table's decimal column gives them."""
    a = pa.array(raw.astype(np.int64), pa.int64())
    d = pa.Array.from_buffers(pa.decimal128(38, 8), len(a), [None, _widen(a)])
    out = np.empty(len(raw), dtype=object)
    out[:] = d.to_pylist()
    return out
