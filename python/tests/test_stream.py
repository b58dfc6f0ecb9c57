"""batches(): the Arrow C stream, consumed by pyarrow, polars and DuckDB,
with bounded batches, once, stopping its thread when dropped."""

from __future__ import annotations

import gc
import os
import threading
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import floxlog
from conftest import CORPUS, MAKERS, raw_columns, tape_path

N = 200_000


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> floxlog.Tape:
    out = tmp_path_factory.mktemp("big") / "tape"
    floxlog.write(out, MAKERS["trade"](N, seed=21), compression="lz4", metadata={1: "A", 2: "B"})
    return floxlog.open(out)


def _reader_threads() -> int:
    """Threads of this process named by the stream's reader."""
    n = 0
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm") as f:
                n += f.read().strip() == "floxlog-read"
        except FileNotFoundError:
            pass
    return n


def _wait_no_reader(timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while _reader_threads() and time.monotonic() < end:
        time.sleep(0.01)
    assert _reader_threads() == 0


def test_pyarrow_reader_with_row_bound(big: floxlog.Tape):
    s = big.batches("trade", rows=10_000)
    assert s.schema == floxlog.schema("trade")
    assert not s.consumed
    reader = pa.RecordBatchReader.from_stream(s)
    assert s.consumed
    sizes = []
    for b in reader:
        assert b.schema == floxlog.schema("trade")
        sizes.append(b.num_rows)
    assert max(sizes) == 10_000 and sum(sizes) == N
    assert all(x <= 10_000 for x in sizes)
    _wait_no_reader()
    assert s.done and s.errors == [] and s.warnings == []
    # Same rows as the table read.
    assert pa.Table.from_batches([], floxlog.schema("trade")).num_rows == 0
    t = big.trades()
    s2 = big.batches("trade", rows=12_345)
    assert s2.read_all().equals(t)


def test_consumed_once(big: floxlog.Tape):
    s = big.batches("trade", rows=50_000)
    first = pa.RecordBatchReader.from_stream(s).read_all()
    assert first.num_rows == N
    with pytest.raises(floxlog.FloxlogError) as ei:
        pa.RecordBatchReader.from_stream(s)
    assert ei.value.kind == "usage" and "already consumed" in str(ei.value)
    with pytest.raises(floxlog.FloxlogError):
        s.__arrow_c_stream__()


def test_filters_apply_to_streams(big: floxlog.Tape):
    t = big.trades(symbols=["A", 3], start=1_700_000_000_000_000_000 + 10_000_000)
    s = big.batches("trade", rows=999, symbols=["A", 3], start=1_700_000_000_000_000_000 + 10_000_000)
    got = s.read_all()
    assert got.equals(t)
    assert 0 < t.num_rows < N
    assert max(b.num_rows for b in got.to_batches()) <= 999
    f = big.batches("trade", order="file").read_all()
    assert f.num_rows == N
    # Bad arguments raise when the stream is made, not when consumed.
    with pytest.raises(floxlog.FloxlogError):
        big.batches("trade", symbols=["nope"])
    with pytest.raises(floxlog.FloxlogError):
        big.batches("trade", rows=0)
    with pytest.raises(floxlog.FloxlogError):
        big.batches("trade", order="sideways")


def test_polars(big: floxlog.Tape):
    import polars as pl

    t = big.trades()
    df = pl.DataFrame(big.batches("trade", rows=7_000))
    assert df.height == N
    assert df["trade_id"].to_list() == t.column("trade_id").to_pylist()
    assert df["exchange_ts"].dtype == pl.Datetime("ns", "UTC")
    # polars.from_arrow reads the stream as a struct Series.
    s = pl.from_arrow(big.batches("trade", rows=7_000))
    df2 = s.struct.unnest() if isinstance(s, pl.Series) else s
    assert df2.height == N and df2["price_raw"].to_list() == t.column("price_raw").to_pylist()
    books = pl.DataFrame(floxlog.open(tape_path(CORPUS / "cases" / "books-mixed")).batches("book"))
    assert books.height == 195 and set(books["kind"].unique()) == {"snapshot", "delta"}


def test_duckdb(big: floxlog.Tape):
    import duckdb

    t = big.trades()
    s = big.batches("trade", rows=8_192)
    rows = duckdb.sql("select count(*), sum(qty_raw::hugeint), max(trade_id) from s").fetchall()
    assert rows == [(N, sum(t.column("qty_raw").to_pylist()), max(t.column("trade_id").to_pylist()))]
    s2 = big.batches("trade")
    by = dict(duckdb.sql("select symbol, count(*) from s2 group by all").fetchall())
    ids = t.column("symbol_id").to_pylist()
    assert by == {"A": ids.count(1), "B": ids.count(2), None: ids.count(3)}
    # Through pyarrow too.
    r = duckdb.from_arrow(pa.RecordBatchReader.from_stream(big.batches("trade"))).aggregate("count(*)")
    assert r.fetchall() == [(N,)]


def test_dropping_the_consumer_stops_the_thread(big: floxlog.Tape):
    _wait_no_reader()
    s = big.batches("trade", rows=1_000)  # 200 batches: far more than the channel holds
    reader = pa.RecordBatchReader.from_stream(s)
    b = reader.read_next_batch()
    assert b.num_rows == 1_000
    time.sleep(0.05)
    assert _reader_threads() == 1  # blocked on the full channel
    assert not s.done
    del reader, b
    gc.collect()
    _wait_no_reader()
    assert s.done
    assert s.errors == []  # the consumer left; not an error of the tape


def test_a_stream_made_but_never_consumed_starts_nothing(big: floxlog.Tape):
    _wait_no_reader()
    s = big.batches("trade")
    time.sleep(0.02)
    assert _reader_threads() == 0
    del s


def test_iterating_and_writing_a_stream(big: floxlog.Tape, tmp: Path):
    n = sum(b.num_rows for b in big.batches("trade", rows=30_000))
    assert n == N
    # A stream is a write() input: tape to tape in bounded memory.
    res = floxlog.write(tmp / "copy", big.batches("trade", rows=30_000), compression="none")
    assert res["events"] == N
    assert raw_columns(floxlog.open(tmp / "copy").trades(), "trade").equals(
        raw_columns(big.trades(), "trade")
    )


def test_gil_is_released_while_reading(tmp: Path):
    """Another Python thread runs while a read decodes: with the GIL held
    for the decode, the main thread would stall for the whole of it."""
    import sys

    out = tmp / "gil"
    floxlog.write(out, MAKERS["trade"](2_000_000, seed=22), compression="lz4")
    tape = floxlog.open(out)
    native = tape._t
    args = floxlog._read_options("trade", None, None, None, "time", False, 65536)
    t0 = time.perf_counter()
    native.read(args)
    decode = time.perf_counter() - t0  # the native call alone
    assert decode > 0.02, decode
    ticks = []
    done = threading.Event()

    def reader():
        for _ in range(3):
            native.read(args)
        done.set()

    old = sys.getswitchinterval()
    sys.setswitchinterval(0.001)
    try:
        th = threading.Thread(target=reader)
        th.start()
        while not done.is_set():
            ticks.append(time.perf_counter())
            sum(range(200))  # Python work: needs the GIL
        th.join()
    finally:
        sys.setswitchinterval(old)
    gaps = np.diff(np.array(ticks))
    # Released: the main thread never waits for more than a slice of a decode.
    assert len(ticks) > 1000
    assert gaps.max() < decode / 2, (gaps.max(), decode)


def test_rows_is_a_bound_not_an_allocation(big, tmp):
    """issue 24 item 6: `batches(rows=2**34)` aborted the interpreter
    (an allocation of 2^34 rows). Run in a child so an abort fails the test
    instead of killing pytest."""
    import subprocess
    import sys

    code = (
        "import floxlog, sys\n"
        f"t = floxlog.open({big.path!r})\n"
        "b = list(t.batches('trade', rows=2**34))\n"
        "print(len(b), sum(x.num_rows for x in b))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["1", str(N)]


@pytest.mark.parametrize(
    "call, what, exc",
    [
        (lambda t, d: t.batches("trade", rows=2**70), "rows", ValueError),
        (lambda t, d: t.batches("trade", rows=0), "rows", ValueError),
        (lambda t, d: t.batches("trade", rows=-5), "rows", ValueError),
        (lambda t, d: t.batches("trade", rows=2.5), "rows", TypeError),
        (lambda t, d: t.book_at(1, 0, depth=-1), "depth", ValueError),
        (lambda t, d: t.book_at(1, 0, depth=2**64), "depth", ValueError),
        (lambda t, d: floxlog.write(d / "a", MAKERS["trade"](3), index_interval=70000), "index_interval", ValueError),
        (lambda t, d: floxlog.write(d / "b", MAKERS["trade"](3), exchange_id=300), "exchange_id", ValueError),
        (lambda t, d: floxlog.write(d / "c", MAKERS["trade"](3), max_segment_bytes=2**64), "max_segment_bytes", ValueError),
        (lambda t, d: floxlog.write(d / "e", MAKERS["trade"](3), rotate_every=-1), "rotate_every", ValueError),
    ],
)
def test_every_size_is_checked(big, tmp, call, what, exc):
    with pytest.raises(exc) as ei:
        call(big, tmp)
    assert what in str(ei.value)
    assert "Traceback" not in str(ei.value)
