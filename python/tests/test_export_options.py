"""`floxlog export --timestamps ns|us|ms --prices decimal|float|raw`: the
column types asked for, timestamps floored, floats rounded once, raw
integer columns exact; the same as a Python read with the same options."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as pads
import pytest

import floxlog
from conftest import MAKERS
from test_cli import run


@pytest.fixture(scope="module")
def tape(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("expopt") / "t"
    parts = [("trade", MAKERS["trade"](3000, seed=21, t0=-2_000_000_123)),
             ("option_quote", MAKERS["option_quote"](200, seed=22))]
    floxlog.write(p, parts, compression="lz4", metadata={1: "AAA"})
    return p


def _read(out: Path, ptype: str) -> pa.Table:
    return pads.dataset(out / f"type={ptype}", format="parquet", partitioning="hive").to_table()


@pytest.mark.parametrize("timestamps,prices", [("us", "decimal"), ("ms", "float"), ("ns", "raw"), ("us", "float")])
def test_types_and_values(tape: Path, tmp: Path, timestamps: str, prices: str):
    out = tmp / "ds"
    run("export", tape, "-o", out, "--timestamps", timestamps, "--prices", prices)
    ds = floxlog.dataset(tape, "trade", timestamps=timestamps, prices=prices)
    want = ds.to_table().sort_by([("exchange_ts_ns", "ascending"), ("trade_id", "ascending")])
    got = _read(out, "trade").sort_by([("exchange_ts_ns", "ascending"), ("trade_id", "ascending")])
    unit = {"ns": "ns", "us": "us", "ms": "ms"}[timestamps]
    assert got.schema.field("exchange_ts").type == pa.timestamp(unit, tz="UTC")
    assert ("price" in got.column_names) == (prices != "raw")
    for c in want.column_names:
        if c == "symbol":
            continue
        assert got[c].to_pylist() == want[c].to_pylist(), c
    if prices == "float":
        assert got.schema.field("price").type == pa.float64()
        oq = _read(out, "option_quote")
        assert oq.schema.field("mark_price").type == pa.float64()
        assert oq["mark_price"].to_pylist() == [r / 1e8 if abs(r) <= 2**53 else int(r) / 10**8
                                                for r in oq["mark_price_raw"].to_pylist()]


def test_csv_refuses_the_options(tape: Path, tmp: Path):
    r = run("export", tape, "-o", tmp / "ds", "--format", "csv", "--timestamps", "us", check=False)
    assert r.returncode == 2 and "CSV" in r.stderr
