"""write(): which columns make the raw ones (issue 24 items 2-4, 8-9):
timestamp units, derived columns that must agree with their raw twins,
metadata and symbol names, human frames, and errors that name column, row
and value."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import floxlog
from conftest import MAKERS, raw_columns

T0 = 1_714_123_456_000_000_000


def _trades(n: int = 5) -> pa.Table:
    t = MAKERS["trade"](n, symbols=(1, 2))
    # Prices an edit can double (the maker puts int64's extremes first).
    return t.set_column(2, "price_raw", pa.array(np.arange(n) * 12_345_678 + 1, pa.int64()))


def _err(tmp: Path, data, exc=floxlog.FloxlogError, **kw) -> str:
    with pytest.raises(exc) as ei:
        floxlog.write(tmp / "x", data, **kw)
    msg = str(ei.value)
    assert "Traceback" not in msg
    assert not (tmp / "x").exists()
    return msg


# -- item 2: timestamp columns named *_ts_ns ---------------------------------


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
def test_ts_ns_columns_of_a_timestamp_type_are_converted_from_their_unit(tmp: Path, unit: str):
    t = _trades(4)
    secs = np.array([1_714_123_456, 1_714_123_457, 1_714_123_458, 1_714_123_459])
    per = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[unit]
    ts = pa.array(secs * per, pa.timestamp(unit, tz="UTC" if unit == "us" else None))
    t = t.set_column(0, "exchange_ts_ns", ts).set_column(1, "recv_ts_ns", ts)
    floxlog.write(tmp / unit, t)
    back = floxlog.open(tmp / unit).trades()
    assert back.column("exchange_ts_ns").to_pylist() == (secs * 10**9).tolist()
    assert back.column("recv_ts_ns").to_pylist() == (secs * 10**9).tolist()


def test_ts_ns_columns_that_overflow_or_are_not_times_are_refused(tmp: Path):
    t = _trades(3)
    far = pa.array([0, 0, 10**11], pa.timestamp("s"))
    msg = _err(tmp, t.set_column(0, "exchange_ts_ns", far))
    assert "exchange_ts_ns" in msg and "row 2" in msg
    msg = _err(tmp, t.set_column(0, "exchange_ts_ns", pa.array(["a", "b", "c"])))
    assert "exchange_ts_ns" in msg and "string" in msg


# -- item 3: derived columns must agree with their raw twins --------------------


def test_an_edited_price_with_a_stale_price_raw_is_an_error(tmp: Path):
    floxlog.write(tmp / "src", _trades(6), metadata={1: "A", 2: "B"})
    t = floxlog.open(tmp / "src").trades()
    doubled = pa.array([decimal.Decimal(v) * 2 for v in t.column("price").to_pylist()], t.schema.field("price").type)
    msg = _err(tmp, t.set_column(t.schema.get_field_index("price"), "price", doubled))
    assert "`price`" in msg and "price_raw" in msg and "row 0" in msg
    # Only one row edited: that row is named.
    q = t.column("qty").to_pylist()
    q[4] = q[4] + decimal.Decimal("0.00000001")
    msg = _err(tmp, t.set_column(t.schema.get_field_index("qty"), "qty", pa.array(q, t.schema.field("qty").type)))
    assert "`qty`" in msg and "row 4" in msg
    # Timestamps and names too.
    ts = t.column("exchange_ts").to_pylist()
    ts[3] = ts[3] + dt.timedelta(seconds=1)
    msg = _err(tmp, t.set_column(t.schema.get_field_index("exchange_ts"), "exchange_ts", pa.array(ts, t.schema.field("exchange_ts").type)))
    assert "`exchange_ts`" in msg and "row 3" in msg
    # The unedited table writes back, and the edit written without its
    # stale raw column is kept.
    floxlog.write(tmp / "same", t)
    edited = t.set_column(t.schema.get_field_index("price"), "price", doubled).drop_columns(["price_raw"])
    floxlog.write(tmp / "edited", edited)
    back = floxlog.open(tmp / "edited").trades()
    assert back.column("price_raw").to_pylist() == [2 * p for p in t.column("price_raw").to_pylist()]


def test_a_polars_edit_of_price_is_written_or_refused_never_dropped(tmp: Path):
    import polars as pl
    floxlog.write(tmp / "src", _trades(6))
    t = floxlog.open(tmp / "src").trades()
    edited = pl.from_arrow(t).with_columns(price=pl.col("price") * 2)
    msg = _err(tmp, edited)
    assert "`price`" in msg and "row 0" in msg
    floxlog.write(tmp / "ok", edited.drop("price_raw"))
    back = floxlog.open(tmp / "ok").trades()
    assert back.column("price_raw").to_pylist() == [2 * p for p in t.column("price_raw").to_pylist()]


# -- item 4: metadata ---------------------------------------------------------


@pytest.mark.parametrize("md", [{"1": "BTC", "2": "ETH"}, {"BTC": 1, "ETH": 2}, '{"1": "BTC", "2": "ETH"}', {1: "BTC", 2: "ETH"}])
def test_metadata_forms_name_the_symbols(tmp: Path, md):
    floxlog.write(tmp / "t", _trades(20), metadata=md)
    t = floxlog.open(tmp / "t")
    got = t.trades()
    assert got.column("symbol").to_pylist() == [{1: "BTC", 2: "ETH"}[i] for i in got.column("symbol_id").to_pylist()]
    assert t.trades(symbols="BTC").num_rows == got.column("symbol_id").to_pylist().count(1)


@pytest.mark.parametrize(
    "md, words",
    [
        ({1: "BTC", 2: "btc"}, ["btc"]),
        ({"BTC": 1, "ETH": 1}, ["symbol_id 1"]),
        ({-1: "BTC"}, ["-1"]),
        ({2**32: "BTC"}, [str(2**32)]),
        ({1: ""}, ["name"]),
        ({1: 5}, ["5"]),
        ({"symbols": [{"symbol_id": 1}]}, ["symbols[0]", "name"]),
        ({"symbols": [{"symbol_id": 1, "name": "A"}, {"symbol_id": 1, "name": "B"}]}, ["symbols[1]"]),
        ([1, 2], ["metadata"]),
    ],
)
def test_bad_metadata_is_refused_clearly(tmp: Path, md, words):
    msg = _err(tmp, _trades(3), exc=ValueError, metadata=md)
    for w in words:
        assert w in msg, msg


def test_a_symbol_column_must_agree_with_the_metadata(tmp: Path):
    floxlog.write(tmp / "src", _trades(8), metadata={1: "BTC", 2: "ETH"})
    t = floxlog.open(tmp / "src").trades()
    # Written back with the same names: fine, and the names are kept even
    # when the metadata is not given again.
    floxlog.write(tmp / "same", t, metadata={1: "BTC", 2: "ETH"})
    floxlog.write(tmp / "learnt", t)
    assert floxlog.open(tmp / "learnt").trades().column("symbol").to_pylist() == t.column("symbol").to_pylist()
    msg = _err(tmp, t, metadata={1: "ETH", 2: "BTC"})
    assert "`symbol`" in msg and "row 0" in msg and "symbol_id" in msg
    # An edited symbol beside its stale id.
    names = t.column("symbol").to_pylist()
    i = names.index("BTC")
    names[i] = "ETH"
    bad = t.set_column(t.schema.get_field_index("symbol"), "symbol", pa.array(names))
    msg = _err(tmp, bad)
    # Without metadata the pairs are learnt in row order: the first row
    # whose pair contradicts an earlier one is named.
    by_id, by_name, first = {}, {}, None
    for r, (sid, name) in enumerate(zip(t.column("symbol_id").to_pylist(), names)):
        if by_id.setdefault(sid, name) != name or by_name.setdefault(name, sid) != sid:
            first = r
            break
    assert first is not None and first >= i
    assert "`symbol`" in msg and f"row {first}" in msg
    msg = _err(tmp, bad, metadata={1: "BTC", 2: "ETH"})
    assert "`symbol`" in msg and f"row {i}" in msg


# -- items 8-9: human frames, and errors naming column, row and value ----------


def test_a_human_pandas_frame_is_written_exactly(tmp: Path):
    import pandas as pd
    df = pd.DataFrame(
        {
            "ts": pd.to_datetime(["2024-04-26 10:00:00.123456", "2024-04-26 10:00:01.000000", "2024-04-26 10:00:02.000000"])
            .tz_localize("America/New_York"),
            "symbol": ["BTC", "ETH", "BTC"],
            "price": [64000.12345678, 0.1, 3.3],
            "qty": [decimal.Decimal("0.00000001"), decimal.Decimal("12.5"), decimal.Decimal("-3")],
            "side": ["buy", "SELL", "Buy"],
        }
    )
    floxlog.write(tmp / "h", df, symbols={"BTC": 1, "ETH": 2})
    t = floxlog.open(tmp / "h").trades()
    assert t.column("exchange_ts_ns").to_pylist()[0] == 1_714_140_000_123_456_000  # 14:00 UTC
    assert t.column("recv_ts_ns").equals(t.column("exchange_ts_ns"))
    assert t.column("symbol_id").to_pylist() == [1, 2, 1]
    assert t.column("symbol").to_pylist() == ["BTC", "ETH", "BTC"]
    # Floats: times 1e8, rounded to nearest (0.1 * 1e8 is 10000000.000000002).
    assert t.column("price_raw").to_pylist() == [6400012345678, 10_000_000, 330_000_000]
    assert t.column("qty_raw").to_pylist() == [1, 1_250_000_000, -300_000_000]
    assert t.column("side").to_pylist() == [0, 1, 0]
    assert t.column("trade_id").to_pylist() == [0, 0, 0]


def test_every_missing_column_is_named_in_one_error(tmp: Path):
    msg = _err(tmp, pa.table({"side": [0], "symbol_id": [1]}), type="trade")
    for c in ["exchange_ts_ns", "price_raw", "qty_raw"]:
        assert c in msg, msg
    assert "recv_ts_ns" not in msg and "trade_id" not in msg


def _human(**cols) -> pa.Table:
    base = {
        "exchange_ts_ns": pa.array([T0, T0 + 1, T0 + 2], pa.int64()),
        "symbol_id": pa.array([1, 1, 1], pa.int64()),
        "price_raw": pa.array([1, 2, 3], pa.int64()),
        "qty_raw": pa.array([1, 2, 3], pa.int64()),
        "side": pa.array([0, 1, 0], pa.int64()),
    }
    base.update(cols)
    return pa.table(base)


@pytest.mark.parametrize(
    "cols, column, row, value",
    [
        ({"side": pa.array(["buy", "hold", "sell"])}, "side", 1, "'hold'"),
        ({"side": pa.array([0, 1, 300])}, "side", 2, "300"),
        ({"symbol_id": pa.array([1, -4, 1])}, "symbol_id", 1, "-4"),
        ({"price_raw": pa.array([1.0, 2.5, 3.0])}, "price_raw", 1, "2.5"),
        ({"price_raw": pa.array([1, None, 3], pa.int64())}, "price_raw", 1, "null"),
        ({"trade_id": pa.array([1, 2, -1])}, "trade_id", 2, "-1"),
    ],
)
def test_conversion_errors_name_column_row_and_value(tmp: Path, cols, column, row, value):
    with pytest.raises(ValueError) as ei:
        floxlog.write(tmp / "x", _human(**cols), type="trade")
    e = ei.value
    msg = str(e)
    assert f"`{column}`" in msg and f"row {row}" in msg and value in msg, msg
    assert "Traceback" not in msg and "scalar of type" not in msg
    assert isinstance(e, floxlog.FloxlogError) and e.column == column and e.row == row
    assert not (tmp / "x").exists()


def test_human_twin_conversion_errors(tmp: Path):
    base = _human().drop_columns(["price_raw"])
    msg = _err(tmp, base.append_column("price", pa.array([1.0, float("nan"), 2.0])), type="trade")
    assert "`price`" in msg and "row 1" in msg
    msg = _err(tmp, base.append_column("price", pa.array([1.0, 2.0, 1e12])), type="trade")
    assert "`price`" in msg and "row 2" in msg and "int64" in msg
    dec = pa.array([decimal.Decimal("1.5"), decimal.Decimal("0.000000001"), decimal.Decimal("2")])
    msg = _err(tmp, base.append_column("price", dec), type="trade")
    assert "`price`" in msg and "row 1" in msg and "8 decimal places" in msg
    named = _human().drop_columns(["symbol_id"]).append_column("symbol", pa.array(["A", "B", "C"]))
    msg = _err(tmp, named, type="trade", symbols={"A": 1, "B": 2})
    assert "`symbol`" in msg and "row 2" in msg and "'C'" in msg
    # A date column is midnight UTC, converted, not refused or reinterpreted.
    d = _human(exchange_ts_ns=pa.array([dt.date(2024, 4, 26)] * 3, pa.date32()))
    floxlog.write(tmp / "d", d, type="trade")
    assert floxlog.open(tmp / "d").trades().column("exchange_ts_ns").to_pylist() == [1_714_089_600 * 10**9] * 3
