"""Tape.gaps: the rows `floxlog gaps --json` prints, as a pyarrow Table
(issue 39)."""

from __future__ import annotations

import json
import subprocess

import pyarrow as pa
import pytest

import floxlog
from test_cli import CLI

T0 = 1_714_123_456_000_000_000
MS = 1_000_000


def _trade(ts, id_):
    return {"type": "trade", "exchange_ts_ns": ts, "recv_ts_ns": ts + 7, "price_raw": 100,
            "qty_raw": 1, "trade_id": id_, "symbol_id": 1, "side": 0, "instrument": 0,
            "exchange_id": 0}


def _tape(tmp_path):
    # Trades every ms with consecutive ids: a 30 s silence after the
    # 500th, ids 1001..1003 missing.
    events, ts = [], T0
    for i in range(1, 2001):
        if i == 501:
            ts += 30_000 * MS
        events.append(_trade(ts, i + 3 if i > 1000 else i))
        ts += MS
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(e) + "\n" for e in events))
    out = tmp_path / "t"
    subprocess.run([str(CLI), "encode", str(src), "-o", str(out), "--created-ns", "1"], check=True)
    return out


def test_gaps_are_the_cli_findings_as_a_table(tmp_path):
    path = _tape(tmp_path)
    t = floxlog.open(path).gaps()
    assert isinstance(t, pa.Table) and t.schema == floxlog.GAPS_SCHEMA
    assert t.column("kind").to_pylist() == ["quiet", "trade_id"]
    cli = subprocess.run([str(CLI), "gaps", str(path), "--json"], capture_output=True, text=True)
    assert cli.returncode == 1
    rows = [json.loads(line) for line in cli.stdout.splitlines()]
    for got, want in zip(t.to_pylist(), rows):
        assert {k: v for k, v in got.items() if v is not None} == want
    q = t.to_pylist()[0]
    assert (q["from_ns"], q["to_ns"]) == (T0 + 499 * MS, T0 + 30_500 * MS)
    ids = t.to_pylist()[1]
    assert (ids["first_missing"], ids["last_missing"]) == (1001, 1003)
    # A longer min_gap leaves only the id jump.
    assert floxlog.open(path).gaps(min_gap="1m").column("kind").to_pylist() == ["trade_id"]
    with pytest.raises(floxlog.UsageError):
        floxlog.open(path).gaps(min_gap="soon")


def test_a_tape_shows_its_summary_and_timeline_in_a_notebook(tmp_path):
    html = floxlog.open(_tape(tmp_path))._repr_html_()
    assert html.startswith("<div>") and "<svg" in html
    assert "2000" in html and "1 quiet gaps, 1 trade-id gaps" in html
