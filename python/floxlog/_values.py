"""One input column to the exact values of one raw column, vectorised with
numpy. Every failure is an :class:`InputError` naming the column, the row
(counted over the whole input) and the value; nothing is cast unchecked
(pyarrow's cast errors name neither column nor row)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from ._errors import InputError

I64_MIN, I64_MAX = -(2**63), 2**63 - 1
#: Raw units per whole unit of the fixed-point columns (the format's 1e-8).
SCALE = 100_000_000
UNIT_NS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
_TWO63 = float(2**63)


def is_text(t: pa.DataType) -> bool:
    """string, large_string or string_view (polars' strings)."""
    view = getattr(pa.types, "is_string_view", None)
    return pa.types.is_string(t) or pa.types.is_large_string(t) or bool(view and view(t))


class Col:
    """A column being converted: its record type, name, values and the
    input row of its first value (for messages)."""

    __slots__ = ("rtype", "name", "arr", "row0")

    def __init__(self, rtype: str, name: str, arr: pa.Array, row0: int) -> None:
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        if pa.types.is_dictionary(arr.type) and name != "symbol":
            arr = arr.dictionary_decode()
        self.rtype, self.name, self.arr, self.row0 = rtype, name, arr, row0

    def value(self, i: int) -> Any:
        try:
            return self.arr[i].as_py()
        except Exception:  # a value pyarrow cannot make a Python object of
            return str(self.arr[i])

    def fail_at(self, i: int, reason: str) -> InputError:
        v = self.value(i)
        row = self.row0 + i
        return InputError(
            f"{self.rtype} column `{self.name}` row {row}: {v!r} {reason}",
            column=self.name,
            row=row,
            value=v,
        )

    def fail_where(self, bad: np.ndarray, reason: str) -> None:
        """Raises for the first row where ``bad`` is true."""
        if bad.any():
            raise self.fail_at(int(np.flatnonzero(bad)[0]), reason)

    def fail_type(self, expected: str) -> InputError:
        return InputError(
            f"{self.rtype} column `{self.name}` is {self.arr.type}: expected {expected}",
            column=self.name,
        )

    def no_nulls(self) -> None:
        if self.arr.null_count:
            mask = self.arr.is_null().to_numpy(zero_copy_only=False)
            i = int(np.flatnonzero(mask)[0])
            raise InputError(
                f"{self.rtype} column `{self.name}` is null at row {self.row0 + i}",
                column=self.name,
                row=self.row0 + i,
            )

    def numpy(self) -> np.ndarray:
        return self.arr.to_numpy(zero_copy_only=False)


def integers(c: Col, lo: int, hi: int, dtype: Any = np.int64) -> np.ndarray:
    """Whole numbers in ``lo..=hi`` (integer columns, or float columns of
    whole values, as pandas makes of integers beside a NaN)."""
    c.no_nulls()
    t = c.arr.type
    if pa.types.is_unsigned_integer(t):
        v = c.numpy().astype(np.uint64)
        c.fail_where(v > np.uint64(hi), f"is out of range ({lo}..{hi})")
    elif pa.types.is_integer(t):
        v = c.numpy().astype(np.int64)
        bad = v < max(lo, I64_MIN)
        if hi < I64_MAX:
            bad |= v > hi
        c.fail_where(bad, f"is out of range ({lo}..{hi})")
    elif pa.types.is_floating(t):
        f = c.numpy().astype(np.float64)
        with np.errstate(invalid="ignore"):
            c.fail_where(~np.isfinite(f) | (f != np.trunc(f)), "is not a whole number")
            c.fail_where((f < float(lo)) | (f >= float(hi) + 1), f"is out of range ({lo}..{hi})")
        v = f.astype(np.uint64 if lo >= 0 and hi > I64_MAX else np.int64)
    else:
        raise c.fail_type("integers")
    return v.astype(dtype)


def nanoseconds(c: Col, ints_ok: bool) -> np.ndarray:
    """Nanoseconds since the epoch (UTC) of a timestamp column of any unit
    and zone (converted from its unit, never reinterpreted), a date column
    (midnight UTC), or, if ``ints_ok``, integer nanoseconds."""
    t = c.arr.type
    if pa.types.is_timestamp(t) or pa.types.is_date(t):
        c.no_nulls()
        if pa.types.is_timestamp(t):
            f = UNIT_NS[t.unit]
        else:
            f = 86_400 * 10**9 if pa.types.is_date32(t) else 10**6
        v = c.arr.cast(pa.int32() if pa.types.is_date32(t) else pa.int64()).to_numpy(
            zero_copy_only=False
        ).astype(np.int64)
        c.fail_where((v > I64_MAX // f) | (v < -(2**63 // f)), "is out of the range of int64 nanoseconds")
        return v * f
    if ints_ok and (pa.types.is_integer(t) or pa.types.is_floating(t)):
        return integers(c, I64_MIN, I64_MAX)
    want = "a timestamp or integer nanoseconds" if ints_ok else (
        f"a timestamp (for integer nanoseconds name the column `{c.name}_ns`)"
    )
    raise c.fail_type(want)


def fixed_point(c: Col) -> np.ndarray:
    """Raw fixed-point units (1e-8) of a decimal, float or integer column:
    decimals exactly (an error past the eighth decimal place), floats by the
    format's rule (times 1e8, rounded to nearest, halves away from zero),
    integers as whole units. A value outside int64 is an error (the spec
    clamps; a writer never stores a value it was not given)."""
    c.no_nulls()
    t = c.arr.type
    if pa.types.is_decimal(t):
        return _decimal_units(c)
    if pa.types.is_floating(t):
        s = c.numpy().astype(np.float64) * float(SCALE)
        with np.errstate(invalid="ignore"):
            c.fail_where(~np.isfinite(s), "is not a finite number")
            c.fail_where((s >= _TWO63) | (s < -_TWO63), "times 1e8 does not fit int64")
        tr = np.trunc(s)
        frac = s - tr
        return tr.astype(np.int64) + (frac >= 0.5) - (frac <= -0.5)
    if pa.types.is_integer(t) and not pa.types.is_boolean(t):
        v = integers(c, -(2**63 // SCALE), I64_MAX // SCALE)
        return v * SCALE
    raise c.fail_type("decimals, floats or integers")


def _decimal_units(c: Col) -> np.ndarray:
    try:
        d = c.arr.cast(pa.decimal128(38, 8))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        _decimal_culprit(c)
        raise
    n = len(d)
    words = np.frombuffer(d.buffers()[1], dtype=np.uint64, count=2 * n, offset=d.offset * 16)
    low = words[0::2].view(np.int64)
    high = words[1::2].view(np.int64)
    # int128 fits int64 when the high word is the low word's sign.
    c.fail_where(high != (low >> 63), "times 1e8 does not fit int64")
    return low.copy()


def _decimal_culprit(c: Col) -> None:
    """Raises for the first value with more than 8 decimal places."""
    import decimal

    for i in range(len(c.arr)):
        v = c.arr[i].as_py()
        if isinstance(v, decimal.Decimal) and v != v.quantize(decimal.Decimal("1e-8"), rounding=decimal.ROUND_DOWN):
            raise c.fail_at(i, "has more than 8 decimal places (the format's fixed point is 1e-8)")
        if isinstance(v, decimal.Decimal) and abs(v) >= decimal.Decimal(10) ** 30:
            raise c.fail_at(i, "times 1e8 does not fit int64")


def side(c: Col) -> np.ndarray:
    """Trade side: 0 (buy) / 1 (sell), or the strings "buy" / "sell"."""
    t = c.arr.type
    if is_text(t):
        import pyarrow.compute as pc

        c.no_nulls()
        low = pc.utf8_lower(pc.utf8_trim_whitespace(c.arr.cast(pa.string())))
        sell = pc.equal(low, "sell").to_numpy(zero_copy_only=False)
        ok = sell | pc.equal(low, "buy").to_numpy(zero_copy_only=False)
        c.fail_where(~ok, 'is not a side (0 or "buy", 1 or "sell")')
        return sell.astype(np.uint8)
    return integers(c, 0, 255, np.uint8)
