"""docs/python.md's notebook runs as written, against a demo tape, and
its results are checked (issue 24: docs)."""

from __future__ import annotations

import decimal
import pathlib
import re
import subprocess

import floxlog
from test_export_duckdb import floxlog_bin

PAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md"


def test_the_docs_notebook_runs_and_its_results_hold(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    subprocess.run([floxlog_bin(), "demo", "demo", "--trades", "20000", "--book-deltas", "6000"],
                   check=True, capture_output=True)
    blocks = re.findall(r"```python notebook\n(.*?)```", PAGE.read_text(), flags=re.S)
    assert len(blocks) == 1
    ns: dict = {}
    exec(compile(blocks[0], "docs/python.md", "exec"), ns)

    # pandas and polars agree on the VWAPs.
    pd_v = ns["vwap_pandas"].to_dict()
    pl_v = dict(ns["vwap_polars"].iter_rows())
    assert set(pd_v) == set(pl_v) and len(pd_v) > 0
    for k in pd_v:
        assert abs(pd_v[k] - pl_v[k]) <= 1e-9 * abs(pd_v[k])
    # The as-of join gave every trade of the symbol a book.
    j = ns["joined"]
    assert len(j) == ns["sym_trades"].num_rows and j["best_bid"].notna().mean() > 0.5
    # The edit was written (qty doubled, prices untouched).
    tape = floxlog.open("demo").trades(prices="raw")
    back = floxlog.open("edited").trades(prices="raw")
    assert back.column("qty_raw").to_pylist() == [2 * q for q in tape.column("qty_raw").to_pylist()]
    assert back.column("price_raw").equals(tape.column("price_raw"))
    # The human frame: times from their zone, names through symbols=.
    h = floxlog.open("human").trades()
    assert h.column("symbol").to_pylist() == ["BTC", "ETH"]
    assert h.column("price").to_pylist() == [decimal.Decimal("64000.5"), decimal.Decimal("3100.25")]
    assert h.column("side").to_pylist() == [0, 1]
    # 09:30 in London on 2024-04-26 is 08:30 UTC (summer time).
    assert h.column("exchange_ts_ns").to_pylist()[0] == 1_714_120_200_000_001_000
    assert h.column("recv_ts_ns").equals(h.column("exchange_ts_ns"))
