"""Trades as a numpy structured array (:meth:`floxlog.Tape.trades_numpy`),
built field by field from the Arrow buffers."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from . import _args, _floxlog, _prices

# The raw trade columns and their numpy types, from the trade's definition
# (the extension's Arrow schema: its columns before ``symbol``).
_TRADE_SCHEMA = _floxlog.schema("trade")
_RAW_TRADE = tuple(
    (f.name, np.dtype(f.type.to_pandas_dtype()).type)
    for f in list(_TRADE_SCHEMA)[: _TRADE_SCHEMA.get_field_index("symbol")]
)

#: Least width of the ``symbol`` field of :meth:`Tape.trades_numpy`.
SYMBOL_WIDTH = 16


def trade_dtype(prices: str = "decimal", symbol_width: int = SYMBOL_WIDTH) -> np.dtype:
    """The dtype of :meth:`Tape.trades_numpy` for a ``prices=`` option: the
    raw integer columns, ``exchange_ts`` / ``recv_ts`` as
    ``datetime64[ns]`` (UTC), ``symbol`` (numpy unicode of
    ``symbol_width`` characters: the metadata's name, ``""`` where the tape
    names none), then, unless ``prices="raw"``, ``price`` and ``qty``:
    float64 for ``"float"`` (``price_raw / 1e8``, rounded once), object
    arrays of exact ``decimal.Decimal`` for ``"decimal"``."""
    fields = list(_RAW_TRADE) + [
        ("exchange_ts", "datetime64[ns]"),
        ("recv_ts", "datetime64[ns]"),
        ("symbol", f"U{_args.count(symbol_width, 'symbol_width')}"),
    ]
    p = _prices.check(prices)
    if p != "raw":
        t = np.float64 if p == "float" else object
        fields += [("price", t), ("qty", t)]
    return np.dtype(fields)


def _symbol_names(table: pa.Table) -> tuple[list[pa.Array], int]:
    """Each batch's symbol names as a plain string array ("" for none),
    and the width they need."""
    out, width = [], SYMBOL_WIDTH
    for b in table.to_batches():
        col = b.column("symbol")
        if pa.types.is_dictionary(col.type):
            texts = [v or "" for v in col.dictionary.to_pylist()]
            if col.null_count == 0:
                idx = col.indices.to_numpy().astype(np.int64)
            else:  # ids the metadata does not name (pyarrow.compute is slow to load)
                idx = np.array([-1 if i is None else i for i in col.indices.to_pylist()], np.int64)
            vals = np.array(texts + [""], dtype=str)[idx]  # a null's -1 picks the ""
        else:
            texts = [v or "" for v in col.to_pylist()]
            vals = np.array(texts, dtype=str)
        width = max([width, *map(len, texts)])
        out.append(vals)
    return out, width


def _trades_to_numpy(table: pa.Table, prices: str) -> np.ndarray:
    """A trade table read with ``prices`` as :meth:`Tape.trades_numpy`
    gives it."""
    names, width = _symbol_names(table)
    dtype = trade_dtype(prices, width)
    out = np.empty(table.num_rows, dtype=dtype)
    pos = 0
    for batch, syms in zip(table.to_batches(), names):
        n = batch.num_rows
        if n == 0:
            continue
        sl = slice(pos, pos + n)
        for name, _ in _RAW_TRADE:
            out[name][sl] = batch.column(name).to_numpy(zero_copy_only=True)
        out["exchange_ts"][sl] = out["exchange_ts_ns"][sl].view("datetime64[ns]")
        out["recv_ts"][sl] = out["recv_ts_ns"][sl].view("datetime64[ns]")
        out["symbol"][sl] = syms
        # The read converted the prices (float64, or exact decimals as
        # ``decimal.Decimal`` objects).
        for name in ("price", "qty") if prices != "raw" else ():
            col = batch.column(name)
            if prices == "float":
                out[name][sl] = col.to_numpy(zero_copy_only=False)
            else:
                objs = np.empty(n, dtype=object)
                objs[:] = col.to_pylist()
                out[name][sl] = objs
        pos += n
    return out
