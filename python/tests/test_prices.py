"""prices="decimal"|"float"|"raw" on every reading call, the float as
price_raw / 1e8 rounded once, and the symbol in trades_numpy()
(issue 24 item 12)."""

from __future__ import annotations

import decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import floxlog
from conftest import MAKERS


@pytest.fixture(scope="module")
def tape(tmp_path_factory) -> floxlog.Tape:
    out = tmp_path_factory.mktemp("prices") / "t"
    t = MAKERS["trade"](2000, symbols=(1, 2))
    # Values where a double rounding (decimal -> float casts, or int64 ->
    # double then / 1e8) goes wrong: large and odd.
    p = t.column("price_raw").to_numpy().copy()
    p[2:10] = [2**53 + 1, -(2**53) - 3, 2**62 + 12345, 123456789012345679, 1, -1, 7, 2**63 - 1]
    t = t.set_column(2, "price_raw", pa.array(p, pa.int64()))
    floxlog.write(out, [("trade", t), ("book", MAKERS["book"](50))], metadata={1: "BTC", 2: "ETH"})
    return floxlog.open(out)


def _exact(raw: int) -> float:
    return float(Fraction(raw, 10**8))  # correctly rounded


def test_float_prices_are_raw_over_1e8_rounded_once(tape):
    t = tape.trades(prices="float")
    assert t.schema.field("price").type == pa.float64()
    raw = tape.trades(prices="raw")
    assert "price" not in raw.column_names and "qty" not in raw.column_names
    want = [_exact(r) for r in raw.column("price_raw").to_pylist()]
    assert t.column("price").to_pylist() == want
    assert t.column("qty").to_pylist() == [_exact(r) for r in raw.column("qty_raw").to_pylist()]
    dec = tape.trades()
    assert pa.types.is_decimal(dec.schema.field("price").type)
    assert dec.column("price").to_pylist()[6] == decimal.Decimal(1) / 10**8


@pytest.mark.parametrize("call", ["read", "batches", "books", "trades_numpy"])
def test_every_reading_call_takes_prices(tape, call):
    for prices in ["decimal", "float", "raw"]:
        if call == "read":
            t = tape.read("trade", prices=prices)
        elif call == "batches":
            t = tape.batches("trade", rows=300, prices=prices).read_all()
        elif call == "books":
            b = tape.books(prices=prices)
            lv = b.schema.field("bids").type.value_type
            names = [lv.field(i).name for i in range(lv.num_fields)]
            if prices == "raw":
                assert names == ["price_raw", "qty_raw"]
            else:
                assert names == ["price_raw", "qty_raw", "price", "qty"]
                first = next(x for x in b.column("bids").to_pylist() if x)[0]
                want = first["price_raw"] / 10**8 if prices == "float" else decimal.Decimal(first["price_raw"]).scaleb(-8)
                assert first["price"] == want
            continue
        else:
            a = tape.trades_numpy(prices=prices)
            assert a.dtype == floxlog.trade_dtype(prices)
            assert a["symbol"].tolist() == tape.trades().column("symbol").to_pylist()
            if prices == "float":
                assert a["price"].tolist() == [_exact(int(r)) for r in a["price_raw"]]
            elif prices == "decimal":
                assert a["price"].tolist() == tape.trades().column("price").to_pylist()
            else:
                assert "price" not in a.dtype.names
            continue
        want = {"decimal": pa.decimal128(38, 8), "float": pa.float64()}.get(prices)
        if want is None:
            assert "price" not in t.column_names
        else:
            assert t.schema.field("price").type == want
    with pytest.raises(ValueError):
        tape.trades(prices="double")


def test_a_float_table_writes_back_the_same_raw_values(tape, tmp: Path):
    t = tape.trades(prices="float").drop_columns(["price_raw", "qty_raw"])
    # Floats round-trip where the double holds the value exactly enough.
    small = t.filter(pa.compute.less(pa.compute.abs(tape.trades().column("price_raw")), 2**48))
    floxlog.write(tmp / "back", small, metadata={1: "BTC", 2: "ETH"})
    back = floxlog.open(tmp / "back").trades()
    orig = tape.trades().filter(pa.compute.less(pa.compute.abs(tape.trades().column("price_raw")), 2**48))
    assert back.column("price_raw").equals(orig.column("price_raw"))
    # A table read with float prices writes back (its raw columns agree).
    floxlog.write(tmp / "whole", tape.trades(prices="float"))
    # Books read with decimal or float levels write back the same events.
    for prices in ["decimal", "float"]:
        floxlog.write(tmp / f"books-{prices}", tape.books(prices=prices))
        assert floxlog.open(tmp / f"books-{prices}").books(prices="raw").equals(tape.books(prices="raw"))


@pytest.mark.parametrize("prices", ["decimal", "float", "raw"])
def test_follow_converts_prices_as_a_read(tape, prices):
    """floxlog.follow's batches carry the prices a read in file order gives
    (one conversion, natively), books' levels too."""
    for rtype, read in [("trade", tape.trades), ("book", tape.books)]:
        got = list(floxlog.follow(tape.path, rtype, prices=prices, rows=700, timeout=5))
        want = read(order="file", prices=prices)
        assert got and all(b.schema == want.schema for b in got)
        assert pa.Table.from_batches(got).to_pylist() == want.to_pylist()


def test_book_samples_levels_take_prices(tape):
    """book_samples' levels with prices=: the raw values' exact decimals or
    floats rounded once, typed as a book read's levels."""
    books = tape.books(prices="raw")
    sid = books.column("symbol_id")[0].as_py()
    ts = books.column("exchange_ts_ns").to_pylist()
    span = (min(ts), max(ts) + 1, (max(ts) + 1 - min(ts)) // 40 + 1)

    def samples(prices):
        return tape.book_samples(sid, span[2], span[0], span[1], depth=3, prices=prices)

    raw = samples("raw")
    levels = [lv for side in ("bids", "asks") for row in raw.column(side).to_pylist() for lv in row]
    assert levels
    for prices in ["decimal", "float"]:
        t = samples(prices)
        assert t.schema.field("bids").type == floxlog.schema("book", prices).field("bids").type
        assert t.schema.metadata == raw.schema.metadata
        got = [lv for side in ("bids", "asks") for row in t.column(side).to_pylist() for lv in row]
        for g, r in zip(got, levels, strict=True):
            assert (g["price_raw"], g["qty_raw"]) == (r["price_raw"], r["qty_raw"])
            for k in ("price", "qty"):
                v = r[k + "_raw"]
                assert g[k] == (_exact(v) if prices == "float" else decimal.Decimal(v).scaleb(-8))
