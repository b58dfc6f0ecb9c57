"""The columns a user has to the raw columns a tape stores.

For each raw column of a record type a :class:`Plan` picks its sources:
the raw column itself (``price_raw``), its human twin (``price``: decimal,
float or integer; ``exchange_ts`` or ``ts``: a timestamp of any unit and
zone; ``symbol``: names through the metadata; ``side``: 0/1 or
"buy"/"sell"), or a documented default. Where both are given they must
agree row for row (an edited ``price`` beside a stale ``price_raw`` is an
error, not a silent choice). Every missing column is named in one error.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

import numpy as np
import pyarrow as pa

from . import _floxlog, _symbols, _values
from ._args import usage
from ._errors import InputError
from ._values import Col

#: Raw columns with a default, and where it comes from: the fields whose
#: record definition says 0 is unknown default to 0.
DEFAULTS: dict[str, Any] = {
    "recv_ts_ns": "exchange_ts_ns",
    **{name: 0 for name in _floxlog.optional_fields("trade")},
    "instrument": 0,
    "exchange_id": "exchange_id=",
}

_U = {pa.uint8(): 255, pa.uint16(): 65535, pa.uint32(): 2**32 - 1, pa.uint64(): 2**64 - 1}
_NP = {pa.uint8(): np.uint8, pa.uint16(): np.uint16, pa.uint32(): np.uint32, pa.uint64(): np.uint64, pa.int64(): np.int64}


def _float_twin(v: np.ndarray) -> np.ndarray:
    """``raw / 1e8`` rounded once: the float twin a read makes (natively)."""
    return _floxlog.float_prices(pa.array(v, pa.int64())).to_numpy(zero_copy_only=False)


def _human(raw: str) -> list[str]:
    """The human twins of a raw column, most specific first."""
    if raw.endswith("_ts_ns"):
        base = raw[: -len("_ns")]
        return [base, "ts"] if base == "exchange_ts" else [base]
    if raw.endswith("_raw"):
        return [raw[: -len("_raw")]]
    if raw == "symbol_id":
        return ["symbol"]
    return []


def _raw_values(c: Col, f: pa.Field) -> np.ndarray:
    if f.name.endswith("_ts_ns"):
        return _values.nanoseconds(c, ints_ok=True)
    if f.name == "side":
        return _values.side(c)
    if f.type in _U:
        return _values.integers(c, 0, _U[f.type], _NP[f.type])
    return _values.integers(c, _values.I64_MIN, _values.I64_MAX)


def _human_values(c: Col, raw: str, names: _symbols.Names) -> np.ndarray:
    if raw.endswith("_ts_ns"):
        return _values.nanoseconds(c, ints_ok=False)
    if raw == "symbol_id":
        return _symbols.ids_of_names(c, names)
    return _values.fixed_point(c)


def _describe(raw: str, v: int) -> str:
    if raw.endswith("_raw"):
        q, r = divmod(abs(v), _values.SCALE)
        return f"{v} (= {'-' if v < 0 else ''}{q}.{r:08d})"
    if raw.endswith("_ts_ns"):
        return f"{v} (= {np.datetime64(v, 'ns')}Z)"
    return str(v)


class Plan:
    """How to make each raw column of ``rtype`` from a batch with columns
    ``names``; raises for every missing column at once."""

    def __init__(self, rtype: str, fields: list[pa.Field], columns: list[str], names: _symbols.Names, exchange_id: int) -> None:
        self.rtype, self.names, self.exchange_id = rtype, names, exchange_id
        self.fields = fields
        self.steps: list[tuple[pa.Field, str | None, str | None]] = []
        self.rows = 0
        have = set(columns)
        twice = sorted({c for c in columns if columns.count(c) > 1})
        if twice:
            raise usage(f"{rtype} data has more than one column named {', '.join(twice)}")
        missing = []
        for f in fields:
            raw = f.name if f.name in have else None
            human = next((h for h in _human(f.name) if h in have), None)
            if raw is None and human is None and f.name not in DEFAULTS:
                if rtype == "book" and f.name in ("kind", "header_type"):
                    continue
                alt = " / ".join(_human(f.name))
                missing.append(f"`{f.name}`" + (f" (or {alt})" if alt else ""))
                continue
            self.steps.append((f, raw, human))
        if rtype == "book" and not ({"kind", "header_type"} & have):
            missing.append("`kind` (snapshot/delta) or `header_type`")
        if missing:
            raise usage(
                f"{rtype} data lacks {', '.join(missing)} (it has {', '.join(columns) or 'no columns'}; "
                "see floxlog.write and floxlog.schema())"
            )
        self.schema = pa.schema([pa.field(f.name, f.type, nullable=True) for f, _, _ in self.steps])

    def convert(self, b: pa.RecordBatch) -> pa.RecordBatch:
        row0 = self.rows
        out: dict[str, Any] = {}
        col = lambda n: Col(self.rtype, n, b.column(b.schema.get_field_index(n)), row0)  # noqa: E731
        for f, raw, human in self.steps:
            if f.type in _NP or f.name.endswith("_ts_ns"):
                out[f.name] = self._numeric(f, raw, human, col, out, b.num_rows)
            else:
                out[f.name] = self._other(f, col(raw))
        self.rows += b.num_rows
        arrays = [pa.array(out[f.name], f.type) if isinstance(out[f.name], np.ndarray) else out[f.name] for f, _, _ in self.steps]
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def _numeric(self, f: pa.Field, raw: str | None, human: str | None, col: Callable[[str], Col], out: dict[str, Any], n: int) -> np.ndarray:
        if raw is None and human is None:
            d = DEFAULTS[f.name]
            if d == "exchange_id=":
                return np.full(n, self.exchange_id, _NP[f.type])
            if isinstance(d, str):
                return out[d]
            return np.full(n, d, _NP[f.type])
        if raw is None:
            return _human_values(col(human), f.name, self.names)
        v = _raw_values(col(raw), f)
        if human is not None:
            self._agree(f.name, v, col(human))
        return v

    def _agree(self, raw: str, v: np.ndarray, h: Col) -> None:
        """The human column says the same as the raw one, row for row."""
        if raw == "symbol_id":
            _symbols.check_names(h, v, self.names)
            return
        if raw.endswith("_raw") and pa.types.is_floating(h.arr.type):
            # A float twin (prices="float") is compared as a read makes it:
            # raw / 1e8 rounded once (a double cannot hold every raw value).
            h.no_nulls()
            hf = h.numpy().astype(np.float64)
            bad = hf != _float_twin(v)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise h.fail_at(i, f"disagrees with `{raw}` {_describe(raw, int(v[i]))}: give one of the two columns, or change both")
            return
        hv = _human_values(h, raw, self.names)
        bad = hv != v
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise h.fail_at(
                i,
                f"disagrees with `{raw}` {_describe(raw, int(v[i]))} (it makes {_describe(raw, int(hv[i]))}): "
                f"give one of the two columns, or change both",
            )

    def _other(self, f: pa.Field, c: Col) -> pa.Array:
        c.no_nulls()
        if f.name in ("bids", "asks") and _is_levels(c.arr.type):
            return _levels(c, f.type)
        try:
            return c.arr.cast(f.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
            raise InputError(
                f"{self.rtype} column `{c.name}` (rows {c.row0}..{c.row0 + len(c.arr) - 1}) is {c.arr.type}, "
                f"which does not convert to {f.type}: {str(e).splitlines()[0]}",
                column=c.name,
            ) from None


def batches(plan: Plan, reader: pa.RecordBatchReader, max_rows: int) -> Iterator[pa.RecordBatch]:
    """The raw batches of a reader, at most ``max_rows`` rows each (so a
    Ctrl-C is seen between batches of a large table)."""
    for b in reader:
        for off in range(0, b.num_rows, max_rows):
            yield plan.convert(b.slice(off, max_rows))


def _is_levels(t: pa.DataType) -> bool:
    return (pa.types.is_list(t) or pa.types.is_large_list(t)) and pa.types.is_struct(t.value_type)


class _LevelCol(Col):
    """A field of the levels of a ``bids``/``asks`` column: messages name
    the row and the level (best first), not the flattened index."""

    __slots__ = ("offsets", "side")

    def __init__(self, rtype: str, side: str, name: str, arr: pa.Array, row0: int, offsets: np.ndarray) -> None:
        super().__init__(rtype, f"{side}.{name}", arr, row0)
        self.offsets, self.side = offsets, side

    def fail_at(self, i: int, reason: str) -> InputError:
        r = int(np.searchsorted(self.offsets, i, side="right")) - 1
        v = self.value(i)
        row = self.row0 + r
        return InputError(
            f"{self.rtype} column `{self.side}` row {row} level {i - int(self.offsets[r])} "
            f"`{self.name.split('.')[-1]}`: {v!r} {reason}",
            column=self.side,
            row=row,
            value=v,
        )

    def no_nulls(self) -> None:
        if self.arr.null_count:
            mask = self.arr.is_null().to_numpy(zero_copy_only=False)
            raise self.fail_at(int(np.flatnonzero(mask)[0]), "is null")


def _levels(c: Col, target: pa.DataType) -> pa.Array:
    """``bids``/``asks`` with levels of ``price_raw``/``qty_raw`` and/or
    their human twins ``price``/``qty`` (as a read with ``prices=`` gives
    them), which must agree."""
    arr = c.arr
    offs = arr.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
    offs = offs - offs[0]
    items = arr.flatten()
    have = [items.type.field(i).name for i in range(items.type.num_fields)]
    out = []
    for raw in ("price_raw", "qty_raw"):
        human = raw[: -len("_raw")]
        col = lambda n: _LevelCol(c.rtype, c.name, n, items.field(n), c.row0, offs)  # noqa: E731
        if raw in have:
            v = _values.integers(col(raw), _values.I64_MIN, _values.I64_MAX)
            if human in have:
                h = col(human)
                if pa.types.is_floating(h.arr.type):
                    h.no_nulls()
                    bad = h.numpy().astype(np.float64) != _float_twin(v)
                else:
                    bad = _values.fixed_point(h) != v
                if bad.any():
                    i = int(np.flatnonzero(bad)[0])
                    raise h.fail_at(i, f"disagrees with `{raw}` {_describe(raw, int(v[i]))}: give one of the two, or change both")
        elif human in have:
            v = _values.fixed_point(col(human))
        else:
            raise InputError(f"{c.rtype} column `{c.name}`: its levels lack `{raw}` (or `{human}`)", column=c.name)
        out.append(pa.array(v, pa.int64()))
    st = pa.StructArray.from_arrays(out, fields=list(target.value_type))
    return pa.ListArray.from_arrays(pa.array(offs, pa.int32()), st, type=target)
