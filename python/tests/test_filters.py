"""Time, symbol and order filters."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import floxlog
from conftest import CORPUS, MAKERS, by_table, events_of, read_jsonl, tape_path

T0 = 1_714_123_456_000_000_000  # 2024-04-26T09:24:16Z


@pytest.fixture(scope="module")
def named(tmp_path_factory) -> floxlog.Tape:
    """Trades of symbols 1, 2 and 3 at T0 + i microseconds; names for 1 and 2;
    written as two rotated segments of interleaved times."""
    n = 10_000
    ts = T0 + np.arange(n, dtype=np.int64) * 1000
    t = MAKERS["trade"](n, symbols=(1, 2, 3))
    t = t.set_column(0, "exchange_ts_ns", pa.array(ts))
    out = tmp_path_factory.mktemp("named") / "tape"
    floxlog.write(
        out, t, compression="lz4", index_interval=100, max_segment_bytes=200_000,
        metadata={1: "BTCUSDT", 2: "ETHUSDT"},
    )
    tape = floxlog.open(out)
    assert tape.info()["total"]["segments"] > 1
    return tape


def _ts(t: pa.Table) -> list[int]:
    return t.column("exchange_ts_ns").to_pylist()


def test_start_end_as_int_iso_datetime_date_numpy_pandas(named: floxlog.Tape):
    import pandas as pd

    lo, hi = T0 + 1_000_000, T0 + 2_500_000  # 1 ms, 2.5 ms
    want = [T0 + i * 1000 for i in range(1000, 2500)]
    forms = [
        (lo, hi),
        (f"{lo}ns", f"{hi}ns"),  # digits need a unit (a bare "1714..." is refused)
        ("2024-04-26T09:24:16.001Z", "2024-04-26T09:24:16.0025Z"),
        ("2024-04-26T09:24:16.001", "2024-04-26 09:24:16.002500000"),  # no offset: UTC
        ("2024-04-26T11:24:16.001+02:00", "2024-04-26T05:24:16.0025-04:00"),
        (
            dt.datetime(2024, 4, 26, 9, 24, 16, 1000, tzinfo=dt.timezone.utc),
            dt.datetime(2024, 4, 26, 9, 24, 16, 2500, tzinfo=dt.timezone.utc),
        ),
        # naive datetimes are UTC
        (dt.datetime(2024, 4, 26, 9, 24, 16, 1000), dt.datetime(2024, 4, 26, 9, 24, 16, 2500)),
        (
            dt.datetime(2024, 4, 26, 11, 24, 16, 1000, tzinfo=dt.timezone(dt.timedelta(hours=2))),
            dt.datetime(2024, 4, 26, 9, 24, 16, 2500, tzinfo=dt.timezone.utc),
        ),
        (np.datetime64(lo, "ns"), np.datetime64("2024-04-26T09:24:16.002500")),
        (pd.Timestamp(lo, unit="ns", tz="UTC"), pd.Timestamp("2024-04-26 09:24:16.0025")),
    ]
    for start, end in forms:
        assert _ts(named.trades(start=start, end=end)) == want, (start, end)
    # Only one bound.
    assert _ts(named.trades(start=T0 + 9_990_000)) == [T0 + i * 1000 for i in range(9990, 10000)]
    assert _ts(named.trades(end=T0 + 3000)) == [T0, T0 + 1000, T0 + 2000]
    # Dates: midnight UTC.
    assert named.trades(start=dt.date(2024, 4, 27)).num_rows == 0
    assert named.trades(end=dt.date(2024, 4, 27)).num_rows == 10_000
    # Empty range: an empty table of the schema.
    e = named.trades(start=hi, end=lo)
    assert e.num_rows == 0 and e.schema == floxlog.schema("trade")


def test_bad_times(named: floxlog.Tape):
    with pytest.raises(floxlog.FloxlogError) as ei:
        named.trades(start="yesterday")
    assert ei.value.kind == "usage" and "start" in str(ei.value)
    with pytest.raises(floxlog.FloxlogError):
        named.trades(end="2024-02-30")
    with pytest.raises(TypeError):
        named.trades(start=1.5)
    with pytest.raises(TypeError):
        named.trades(start=True)
    import pandas as pd

    for nat in (pd.NaT, np.datetime64("NaT")):
        with pytest.raises(floxlog.FloxlogError) as ei:
            named.trades(start=nat)
        assert ei.value.kind == "usage"


def test_symbols_by_id_and_name(named: floxlog.Tape):
    all_ = named.trades()
    ids = all_.column("symbol_id").to_pylist()
    names = all_.column("symbol").to_pylist()
    assert names == [{1: "BTCUSDT", 2: "ETHUSDT"}.get(i) for i in ids]
    for sel, want in [
        ([1], {1}),
        (1, {1}),
        (["BTCUSDT"], {1}),
        ("btcusdt", {1}),  # case-insensitive
        (["ETHUSDT", 3], {2, 3}),
        ((2, "1"), {1, 2}),
        (np.array([3], dtype=np.uint32), {3}),
    ]:
        t = named.trades(symbols=sel)
        assert set(t.column("symbol_id").to_pylist()) == want, sel
        assert t.num_rows == sum(1 for i in ids if i in want), sel
        assert _ts(t) == sorted(_ts(t))
    assert named.trades(symbols=[99]).num_rows == 0
    with pytest.raises(floxlog.FloxlogError) as ei:
        named.trades(symbols=["DOGE"])
    assert ei.value.kind == "usage" and "BTCUSDT" in str(ei.value)
    # Filters combine.
    t = named.trades(symbols=["BTCUSDT"], start=T0 + 5_000_000)
    assert set(t.column("symbol_id").to_pylist()) == {1}
    assert min(_ts(t)) >= T0 + 5_000_000


def test_order_file_versus_time():
    """Two segments of interleaved times: file order is segment by segment,
    time order is merged."""
    case = CORPUS / "cases" / "rotation"
    tape = floxlog.open(tape_path(case))
    expected = by_table(read_jsonl(case / "expected.jsonl"))
    for rt in floxlog.RECORD_TYPES:
        assert events_of(tape.read(rt, order="file"), rt) == expected[rt]


def test_order_merges_across_segments(tmp: Path):
    """A directory of two segment files with interleaved times: file order
    is one segment after the other, time order merges them (stable)."""
    import shutil

    a = MAKERS["trade"](1000, seed=11, t0=T0)
    b = MAKERS["trade"](1000, seed=12, t0=T0 + 50)
    d = tmp / "dir"
    d.mkdir()
    for name, t in [("1", a), ("2", b)]:
        floxlog.write(tmp / name, t, compression="none")
        (seg,) = (tmp / name).glob("*.floxlog")
        shutil.copy(seg, d / f"{name}.floxlog")
    tape = floxlog.open(d)
    f = tape.trades(order="file")
    assert _ts(f) == a.column("exchange_ts_ns").to_pylist() + b.column("exchange_ts_ns").to_pylist()
    t = tape.trades(order="time")
    rows = [(r["exchange_ts_ns"], r["trade_id"]) for r in f.to_pylist()]
    seg = [0] * 1000 + [1] * 1000
    want = [r for _, _, r in sorted(zip([x[0] for x in rows], seg, rows), key=lambda z: (z[0], z[1]))]
    assert [(r["exchange_ts_ns"], r["trade_id"]) for r in t.to_pylist()] == want
    assert _ts(t) != _ts(f)
    with pytest.raises(floxlog.FloxlogError) as ei:
        tape.trades(order="random")
    assert ei.value.kind == "usage"


def test_record_type_names(named: floxlog.Tape):
    assert named.read("trades").num_rows == 10_000
    assert named.read("TRADE").num_rows == 10_000
    assert named.read("book_delta").num_rows == 0
    with pytest.raises(floxlog.FloxlogError) as ei:
        named.read("candles")
    assert ei.value.kind == "usage"
