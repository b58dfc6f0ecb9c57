"""Arrow -> tape -> Arrow for every record type, and what write() accepts
and refuses."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import floxlog
from conftest import CORPUS, MAKERS, by_table, events_of, raw_columns, read_jsonl, tape_path, time_sorted


@pytest.mark.parametrize("compression", ["none", "lz4"])
@pytest.mark.parametrize("rtype", list(MAKERS))
def test_round_trip_every_type(tmp: Path, rtype: str, compression: str):
    src = MAKERS[rtype](3000)
    out = tmp / "tape"
    res = floxlog.write(out, src, compression=compression, index_interval=100)
    assert res["events"] == 3000 and res["segments"] == 1 and res["bytes"] > 0
    tape = floxlog.open(out)
    back = tape.read(rtype, order="file")
    assert back.num_rows == 3000
    assert raw_columns(back, rtype).equals(raw_columns(src, rtype))
    # Time order equals file order: the input is in time order.
    assert tape.read(rtype).equals(back)
    # No other tables.
    for other in floxlog.RECORD_TYPES:
        if other != rtype:
            assert tape.read(other).num_rows == 0
    info = tape.info()
    assert info["total"]["events"] == 3000
    comp = {s["header"]["compression"] for s in info["segments"]}
    assert comp == {compression}
    assert tape.verify()["ok"] is True


@pytest.mark.parametrize("compression", ["none", "lz4"])
def test_a_read_table_writes_back_the_same_events(tmp: Path, compression: str):
    """Every corpus case: read, write (the whole tables, derived columns
    and all), read again: the same events (in the same file order when
    uncompressed; LZ4 blocks are sorted by time as the reference does, so
    there the time order is the same)."""
    for case in (CORPUS / "cases").iterdir():
        if not (case / "segments").is_dir():
            continue  # a writer-only case (empty input)
        tape = floxlog.open(tape_path(case))
        parts = [(rt, tape.read(rt, order="file")) for rt in floxlog.RECORD_TYPES]
        out = tmp / f"{case.name}-{compression}"
        floxlog.write(out, parts, compression=compression)
        again = floxlog.open(out)
        for rt, t in parts:
            want = events_of(t, rt)
            if compression == "none":
                assert events_of(again.read(rt, order="file"), rt) == want, (case.name, rt)
            assert events_of(again.read(rt), rt) == time_sorted(want), (case.name, rt)


def test_several_types_in_one_tape_merge_by_time(tmp: Path):
    trades = MAKERS["trade"](500, seed=5)
    books = MAKERS["book"](300, seed=6)
    out = tmp / "mixed"
    res = floxlog.write(out, {"trades": trades, "book": books}, compression="none")
    assert res["events"] == 800
    tape = floxlog.open(out)
    assert raw_columns(tape.trades(), "trade").equals(raw_columns(trades, "trade"))
    b = tape.books(prices="raw")
    assert b.column("seq").to_pylist() == books.column("seq").to_pylist()
    assert b.column("bids").to_pylist() == books.column("bids").to_pylist()
    assert b.column("kind").to_pylist() == books.column("kind").to_pylist()


def test_spec_layout_rotation_and_settings(tmp: Path):
    trades = MAKERS["trade"](20000, seed=7)
    out = tmp / "spec"
    res = floxlog.write(
        out, trades, compression="none", layout="spec", profile="spec",
        max_segment_bytes=64 * 1024, exchange_id=9, created_ns=1_700_000_000_000_000_000,
    )
    assert res["segments"] > 5
    names = sorted(os.listdir(out))
    assert "manifest.json" in names
    assert any(n.startswith("trades-") for n in names)
    tape = floxlog.open(out)
    assert raw_columns(tape.trades(), "trade").equals(raw_columns(trades, "trade"))
    info = tape.info()
    assert {s["header"]["exchange_id"] for s in info["segments"]} == {9}
    created = sorted(s["header"]["created_ns"] for s in info["segments"])
    assert created[0] == 1_700_000_000_000_000_000 and created[1] == created[0] + 1
    # The same settings give the same bytes.
    out2 = tmp / "spec2"
    floxlog.write(
        out2, trades, compression="none", layout="spec", profile="spec",
        max_segment_bytes=64 * 1024, exchange_id=9, created_ns=1_700_000_000_000_000_000,
    )
    for n in names:
        if n.endswith(".bin") or n.endswith(".floxlog"):
            assert (out / n).read_bytes() == (out2 / n).read_bytes()


def test_reference_bytes_of_a_corpus_case(tmp: Path):
    """Written from its events with the case's settings, an uncompressed
    byte-exact case gives the reference writer's bytes."""
    case = CORPUS / "cases" / "trades-10k"
    meta = json.loads((case / "case.json").read_text())
    w = meta["writer"]
    tape = floxlog.open(tape_path(case))
    out = tmp / "ref"
    floxlog.write(
        out, tape.trades(order="file"), compression=w["compression"],
        index_interval=w["index_interval"], exchange_id=w["exchange_id"],
        max_segment_bytes=w["max_segment_bytes"],
        created_ns=meta["segments"][0]["created_ns"],
    )
    segs = sorted(p for p in out.iterdir() if p.suffix == ".floxlog")
    assert len(segs) == len(meta["segments"])
    for mine, ref in zip(segs, meta["segments"]):
        assert mine.read_bytes() == (case / "segments" / ref["file"]).read_bytes()


def test_inputs_pandas_polars_streams_and_batches(tmp: Path):
    import pandas as pd
    import polars as pl

    trades = MAKERS["trade"](1000, seed=8)
    want = raw_columns(trades, "trade")
    inputs = {
        "pandas": trades.to_pandas(),
        "polars": pl.from_arrow(trades),
        "batch": trades.combine_chunks().to_batches()[0],
        "reader": pa.RecordBatchReader.from_batches(trades.schema, trades.to_batches(max_chunksize=77)),
        "dict": {c: trades.column(c) for c in trades.column_names},
        "stream": floxlog.open(_tape(tmp, trades)).batches("trade", rows=100),
    }
    assert isinstance(inputs["pandas"], pd.DataFrame)
    for name, data in inputs.items():
        out = tmp / f"from-{name}"
        assert floxlog.write(out, data)["events"] == 1000, name
        assert raw_columns(floxlog.open(out).trades(), "trade").equals(want), name


def _tape(tmp: Path, table: pa.Table) -> Path:
    p = tmp / "source"
    if not p.exists():
        floxlog.write(p, table)
    return p


def test_columns_are_cast_and_timestamps_accepted(tmp: Path):
    n = 100
    ts = np.arange(n, dtype=np.int64) * 1_000 + 1_700_000_000_000_000_000
    t = pa.table(
        {
            # timestamps instead of *_ts_ns, in microseconds, one naive
            "exchange_ts": pa.array(ts // 1000, pa.timestamp("us", tz="UTC")),
            "recv_ts": pa.array(ts // 1000, pa.timestamp("us")),
            "price_raw": pa.array(np.arange(n), pa.int32()),
            "qty_raw": pa.array(np.arange(n), pa.uint8()),
            "trade_id": pa.array(np.arange(n), pa.int64()),
            "symbol_id": pa.array(np.ones(n), pa.int64()),
            "side": pa.array(np.zeros(n), pa.int64()),
            "instrument": pa.array(np.zeros(n), pa.int16()),
            "exchange_id": pa.array(np.full(n, 3), pa.int32()),
            "extra": pa.array(["ignored"] * n),
        }
    )
    out = tmp / "cast"
    floxlog.write(out, t, type="trade")
    back = floxlog.open(out).trades()
    assert back.column("exchange_ts_ns").to_pylist() == (ts // 1000 * 1000).tolist()
    assert back.column("recv_ts_ns").to_pylist() == (ts // 1000 * 1000).tolist()
    assert back.column("price_raw").to_pylist() == list(range(n))
    assert back.column("exchange_id").to_pylist() == [3] * n


def test_books_by_header_type_only_and_sliced(tmp: Path):
    books = MAKERS["book"](200, seed=9)
    sliced = books.drop_columns(["kind"]).slice(37, 100)
    out = tmp / "books"
    floxlog.write(out, sliced)
    back = floxlog.open(out).books(prices="raw")
    assert back.column("bids").to_pylist() == sliced.column("bids").to_pylist()
    assert back.column("asks").to_pylist() == sliced.column("asks").to_pylist()
    assert back.column("kind").to_pylist() == books.column("kind").slice(37, 100).to_pylist()


def test_write_refusals(tmp: Path):
    trades = MAKERS["trade"](10)
    with pytest.raises(floxlog.FloxlogError) as ei:
        floxlog.write(tmp / "x", trades.drop_columns(["trade_id", "side"]))
    assert ei.value.kind == "usage" and "record type" in str(ei.value)
    with pytest.raises(floxlog.FloxlogError) as ei:
        floxlog.write(tmp / "x", trades.drop_columns(["qty_raw"]))
    assert ei.value.kind == "usage" and "qty_raw" in str(ei.value)
    with pytest.raises(floxlog.FloxlogError) as ei:
        floxlog.write(tmp / "x", MAKERS["book"](3).drop_columns(["kind", "header_type"]))
    assert ei.value.kind == "usage" and "kind" in str(ei.value)
    with pytest.raises(floxlog.FloxlogError) as ei:
        floxlog.write(tmp / "x", trades, compression="zstd")
    assert ei.value.kind == "usage" and "compression" in str(ei.value)
    with pytest.raises(floxlog.FloxlogError) as ei:
        floxlog.write(tmp / "x", trades, type="candles")
    assert ei.value.kind == "usage"
    # A value the column cannot hold: an error, not a silent wrap.
    bad = trades.set_column(5, "symbol_id", pa.array([-1] * 10, pa.int64()))
    with pytest.raises(floxlog.FloxlogError) as ei:
        floxlog.write(tmp / "x", bad)
    assert ei.value.kind == "input"
    # A null in a raw column.
    nulls = trades.set_column(2, "price_raw", pa.array([1] * 9 + [None], pa.int64()))
    with pytest.raises(floxlog.FloxlogError) as ei:
        floxlog.write(tmp / "x", nulls)
    assert "null at row 9" in str(ei.value)
    # Nothing was left behind by the failures.
    assert not (tmp / "x").exists()
    assert [p for p in tmp.iterdir() if p.name.startswith(".")] == []
    # An existing output is refused.
    floxlog.write(tmp / "y", trades)
    with pytest.raises(floxlog.FloxlogError) as ei:
        floxlog.write(tmp / "y", trades)
    assert ei.value.kind == "usage" and "already exists" in str(ei.value)
    # An empty directory is fine.
    (tmp / "z").mkdir()
    assert floxlog.write(tmp / "z", trades)["events"] == 10


def test_metadata_names_symbols(tmp: Path):
    trades = MAKERS["trade"](300, symbols=(1, 2, 70000))
    out = tmp / "named"
    floxlog.write(out, trades, metadata={1: "BTCUSDT", 70000: "ETHUSDT"})
    md = json.loads((out / "metadata.json").read_text())
    assert md == {"symbols": [{"symbol_id": 1, "name": "BTCUSDT"}, {"symbol_id": 70000, "name": "ETHUSDT"}]}
    t = floxlog.open(out).trades()
    ids = t.column("symbol_id").to_pylist()
    names = t.column("symbol").to_pylist()
    assert names == [{1: "BTCUSDT", 70000: "ETHUSDT"}.get(i) for i in ids]
    assert pa.types.is_dictionary(t.schema.field("symbol").type)
    # flox-style metadata as given.
    out2 = tmp / "named2"
    floxlog.write(out2, trades, metadata={"exchange": "X", "symbols": [{"symbol_id": 2, "name": "SOL"}]})
    assert set(floxlog.open(out2).trades().column("symbol").drop_null().to_pylist()) == {"SOL"}


def test_corpus_events_survive_lz4_reference_and_spec_profiles(tmp: Path):
    case = CORPUS / "cases" / "books-mixed"
    expected = by_table(read_jsonl(case / "expected.jsonl"))
    tape = floxlog.open(tape_path(case))
    for profile in ["reference", "spec"]:
        out = tmp / profile
        floxlog.write(out, [(rt, tape.read(rt, order="file")) for rt in floxlog.RECORD_TYPES], profile=profile)
        again = floxlog.open(out)
        for rt in floxlog.RECORD_TYPES:
            got = events_of(again.read(rt, order="file"), rt)
            if profile == "spec" and rt == "book":
                # The spec profile stores header type 2/3 for books given as kinds;
                # a table carrying header_type keeps the byte it is given.
                for g in got:
                    g.pop("header_type")
                want = [{k: v for k, v in e.items() if k != "header_type"} for e in expected[rt]]
                assert got == want
            else:
                assert got == expected[rt], (profile, rt)


def test_a_multi_type_write_reads_back_in_exact_time_order(tmp: Path):
    """issue 24 item 5: trades and books of a demo tape written as two
    parts read back in time order with nothing late, and `floxlog diff
    --order time` finds no difference from the source."""
    import subprocess
    import warnings

    from test_cli import CLI, run

    run("demo", tmp / "src", "--trades", "20000", "--book-deltas", "8000", "--seconds", "2")
    src = floxlog.open(tmp / "src")
    # Equal times keep the order of the parts: the demo stamps a book
    # snapshot and a trade alike now and then, snapshot first.
    parts = [(rt, src.read(rt)) for rt in ("book", "trade")]
    assert all(t.num_rows for _, t in parts)
    floxlog.write(tmp / "out", parts, compression="none")
    out = floxlog.open(tmp / "out")
    with warnings.catch_warnings():
        warnings.simplefilter("error", floxlog.FloxlogWarning)  # no warnings
        for rt, t in parts:
            assert out.read(rt).equals(t)
    r = subprocess.run([str(CLI), "diff", "--order", "time", str(tmp / "src"), str(tmp / "out")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    # File order is time order: the write merged the parts.
    ts = [json.loads(line)["exchange_ts_ns"] for line in run("cat", "--file-order", tmp / "out").stdout.splitlines()]
    assert ts == sorted(ts) and len(ts) == sum(t.num_rows for _, t in parts)
