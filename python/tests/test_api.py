"""trades_numpy, info, verify, open, errors and warnings."""

from __future__ import annotations

import json
import pickle
import shutil
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import floxlog
from conftest import CORPUS, MAKERS, by_table, read_jsonl, tape_path


def test_trades_numpy_matches_the_table(tmp: Path):
    src = MAKERS["trade"](150_000, seed=31)
    out = tmp / "t"
    floxlog.write(out, src)
    tape = floxlog.open(out)
    arr = tape.trades_numpy()
    t = tape.trades()
    assert arr.dtype == floxlog.TRADE_DTYPE
    assert arr.shape == (150_000,)
    for name in ["exchange_ts_ns", "recv_ts_ns", "price_raw", "qty_raw", "trade_id",
                 "symbol_id", "side", "instrument", "exchange_id"]:
        col = t.column(name).to_numpy()
        assert arr[name].dtype == col.dtype, name
        assert np.array_equal(arr[name], col), name
    assert np.array_equal(arr["exchange_ts"].view(np.int64), arr["exchange_ts_ns"])
    assert np.array_equal(arr["recv_ts"].view(np.int64), arr["recv_ts_ns"])
    assert arr["exchange_ts"].dtype == np.dtype("datetime64[ns]")
    assert arr["trade_id"].max() == np.uint64(2**64 - 1)  # full u64 range
    # Filters as for tables.
    sub = tape.trades_numpy(symbols=[2], end=int(arr["exchange_ts_ns"][1000]))
    assert set(sub["symbol_id"].tolist()) == {2}
    assert (sub["exchange_ts_ns"] < arr["exchange_ts_ns"][1000]).all()
    # Corpus: every field as the corpus has it.
    case = CORPUS / "cases" / "trades-10k"
    want = by_table(read_jsonl(case / "expected.jsonl"))["trade"]
    got = floxlog.open(tape_path(case)).trades_numpy(order="file")
    assert len(got) == len(want)
    for name in ["exchange_ts_ns", "price_raw", "trade_id", "symbol_id", "side", "exchange_id"]:
        assert got[name].tolist() == [e[name] for e in want], name
    # Empty.
    assert floxlog.open(out).trades_numpy(start=2**62).shape == (0,)


def test_trades_numpy_partial_is_numpy():
    seg = CORPUS / "corrupt" / "crc-mismatch" / "segment.floxlog"
    with pytest.raises(floxlog.FloxlogError) as ei:
        floxlog.open(seg).trades_numpy()
    assert isinstance(ei.value.partial, np.ndarray)
    assert ei.value.partial.dtype == floxlog.TRADE_DTYPE
    assert len(ei.value.partial) == 30
    assert ei.value.kind == "crc_mismatch"


def test_info_is_inspect_json():
    case = CORPUS / "cases" / "rotation"
    info = floxlog.open(tape_path(case)).info()
    # `health` and `prepared_segments` describe a live journal tape.
    assert set(info) == {"segments", "dirs", "findings", "total", "health", "prepared_segments"}
    assert info["prepared_segments"] == []
    meta = json.loads((case / "case.json").read_text())
    assert info["total"]["segments"] == len(meta["segments"])
    assert info["total"]["events"] == meta["event_count"]
    assert [Path(s["path"]).name for s in info["segments"]] == [s["file"] for s in meta["segments"]]
    assert [s["size_bytes"] for s in info["segments"]] == [s["size"] for s in meta["segments"]]
    assert [s["header"]["created_ns"] for s in info["segments"]] == [s["created_ns"] for s in meta["segments"]]
    quick = floxlog.open(tape_path(case)).info(quick=True)
    assert quick["total"]["events"] is None
    # test_cli.py compares it with `floxlog inspect --json`.


def test_info_of_lz4_and_names(tmp: Path):
    out = tmp / "n"
    floxlog.write(out, MAKERS["trade"](5000), compression="lz4", metadata={1: "X"})
    info = floxlog.open(out).info()
    assert info["total"]["by_type"] == {"trade": 5000}
    assert info["total"]["compression_ratio"] > 1
    assert info["dirs"][0]["metadata"] == {"symbols": [{"symbol_id": 1, "name": "X"}]}
    assert info["dirs"][0]["manifest"]["events"] == 5000


def test_verify_passes_and_reports(tmp: Path):
    out = tmp / "v"
    floxlog.write(out, MAKERS["book"](500), compression="lz4")
    rep = floxlog.open(out).verify()
    assert rep["ok"] is True and rep["errors"] == 0 and rep["events"] == 500
    assert rep["segments"][0]["ok"] is True
    assert set(rep) == {"ok", "strict", "errors", "warnings", "events", "bytes", "segments", "findings"}


def test_verify_strict_fails_on_warnings(tmp: Path):
    # A segment missing from the manifest is a warning: strict fails on it.
    out = tmp / "w"
    floxlog.write(out, MAKERS["trade"](100), compression="none")
    extra = tmp / "x"
    floxlog.write(extra, MAKERS["trade"](100, seed=9), compression="none", created_ns=1)
    (seg,) = extra.glob("*.floxlog")
    shutil.copy(seg, out / seg.name)
    tape = floxlog.open(out)
    rep = tape.verify()
    assert rep["ok"] is True and rep["warnings"] >= 1
    with pytest.raises(floxlog.FloxlogError) as ei:
        tape.verify(strict=True)
    assert ei.value.report["ok"] is False
    assert ei.value.kind == next(f["kind"] for f in rep["findings"] if f["severity"] == "warning")


def test_missing_segment_is_an_error_with_the_rest_kept(tmp: Path):
    out = tmp / "m"
    floxlog.write(out, MAKERS["trade"](30_000), compression="none", max_segment_bytes=200_000)
    segs = sorted(out.glob("*.floxlog"))
    assert len(segs) >= 3
    gone = segs[1]
    n_gone = floxlog.open(gone).trades().num_rows
    gone.unlink()
    with pytest.raises(floxlog.FloxlogError) as ei:
        floxlog.open(out).trades()
    e = ei.value
    assert e.kind == "missing_segment"
    assert gone.name in str(e)
    assert e.partial.num_rows == 30_000 - n_gone


def test_open_errors():
    with pytest.raises(floxlog.FloxlogError) as ei:
        floxlog.open("/nonexistent/tape")
    assert ei.value.kind in ("io", "input")
    assert ei.value.path is not None and "nonexistent" in ei.value.path
    assert ei.value.offset is None


def test_error_pickles_and_reprs():
    e = floxlog.FloxlogError("p at byte 5: crc", kind="crc_mismatch", path="p", offset=5, hint="h")
    f = pickle.loads(pickle.dumps(e))
    assert (f.kind, f.path, f.offset, f.hint, str(f)) == ("crc_mismatch", "p", 5, "h", "p at byte 5: crc")
    assert "crc_mismatch" in repr(e)
    assert isinstance(e, Exception)


def test_torn_tail_warns_unless_strict(tmp: Path):
    seg = CORPUS / "corrupt" / "truncated-tail" / "segment.floxlog"
    tape = floxlog.open(seg)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        t = tape.trades()
    assert [x.category for x in w] == [floxlog.FloxlogWarning]
    assert "torn record at byte 12852" in str(w[0].message)
    assert w[0].filename == __file__  # points at the caller
    assert t.num_rows > 0
    with pytest.raises(floxlog.FloxlogError) as ei:
        tape.trades(strict=True)
    assert ei.value.kind == "truncated"
    assert ei.value.partial.equals(t)
    # Streams: a warning recorded, no error; strict: an error.
    s = tape.batches("trade")
    assert s.read_all().equals(t)
    assert s.errors == [] and len(s.warnings) == 1
    s = tape.batches("trade", strict=True)
    with pytest.raises(Exception, match="truncated"):
        s.read_all()
    assert [e.kind for e in s.errors] == ["truncated"]


def test_repr_and_path():
    p = tape_path(CORPUS / "cases" / "trades-7")
    tape = floxlog.open(p)
    assert tape.path == str(p)
    assert repr(tape) == f"floxlog.Tape({str(p)!r})"
    assert floxlog.__version__
    assert floxlog.schema("trades") == floxlog.schema("trade")
    assert "bids" in floxlog.schema("book").names
    s = tape.batches("trade")
    assert "ready" in repr(s)


def test_every_damaged_segment_is_reported_and_the_rest_read(tmp: Path):
    d = tmp / "two-damaged"
    d.mkdir()
    shutil.copy(CORPUS / "corrupt" / "crc-mismatch" / "segment.floxlog", d / "a.floxlog")
    shutil.copy(CORPUS / "corrupt" / "lz4-garbage" / "segment.floxlog", d / "b.floxlog")
    good = MAKERS["trade"](100, seed=51)
    floxlog.write(tmp / "g", good, compression="none")
    (seg,) = (tmp / "g").glob("*.floxlog")
    shutil.copy(seg, d / "c.floxlog")
    with pytest.raises(floxlog.FloxlogError) as ei:
        floxlog.open(d).trades(order="file")
    e = ei.value
    assert [(x.kind, x.offset) for x in e.errors] == [("crc_mismatch", 12852), ("decompression_failed", 9595)]
    assert e.errors[0] is e
    assert [Path(x.path).name for x in e.errors] == ["a.floxlog", "b.floxlog"]
    # 30 + 48 trades before the damage, and all 100 of the good segment.
    assert e.partial.num_rows == 30 + 48 + 100
    assert e.partial.column("trade_id").to_pylist()[-100:] == good.column("trade_id").to_pylist()
