"""Shared fixtures and helpers: the conformance corpus, tables as corpus
events, synthetic tables of every record type."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pyarrow as pa
import pytest

import floxlog

REPO = Path(__file__).resolve().parents[2]


def corpus_dir() -> Path:
    """``$FLOXLOG_CONFORMANCE_DIR``, else the checkout's ``conformance/``. A missing corpus fails the run (never a skip)."""
    d = Path(os.environ.get("FLOXLOG_CONFORMANCE_DIR", REPO / "conformance"))
    if not (d / "cases").is_dir():
        raise RuntimeError(
            f"conformance corpus not found at {d}: set FLOXLOG_CONFORMANCE_DIR"
        )
    return d


CORPUS = corpus_dir()
# The cases with segments to read (a writer-only case, such as empty
# input, has none).
CASES = sorted(p for p in (CORPUS / "cases").iterdir() if (p / "segments").is_dir()) + sorted(
    p for p in (CORPUS / "real").iterdir() if p.is_dir()
)
CORRUPT = sorted(p for p in (CORPUS / "corrupt").iterdir() if p.is_dir())


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    # json parses integers exactly (no doubles), as the corpus requires.
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


#: Corpus event type -> record type (table).
TABLE_OF = {
    "trade": "trade",
    "book_snapshot": "book",
    "book_delta": "book",
    "option_quote": "option_quote",
    "pool_state": "pool_state",
}

FIELDS = {
    "trade": [
        "exchange_ts_ns", "recv_ts_ns", "price_raw", "qty_raw", "trade_id",
        "symbol_id", "side", "instrument", "exchange_id",
    ],
    "book": [
        "exchange_ts_ns", "recv_ts_ns", "seq", "symbol_id", "header_type",
        "instrument", "exchange_id",
    ],
    "option_quote": [
        "exchange_ts_ns", "recv_ts_ns", "mark_price_raw", "index_price_raw",
        "underlying_price_raw", "iv_raw", "bid_price_raw", "ask_price_raw",
        "bid_size_raw", "ask_size_raw", "bid_iv_raw", "ask_iv_raw",
        "open_interest_raw", "symbol_id", "instrument", "exchange_id",
    ],
    "pool_state": ["exchange_ts_ns", "recv_ts_ns", "symbol_id", "sub_type", "venue", "exchange_id"],
}


def events_of(table: pa.Table, rtype: str) -> list[dict[str, Any]]:
    """Rows of a table as corpus events (every field, ints exact)."""
    out = []
    for r in table.to_pylist():
        if rtype == "book":
            ev = {"type": "book_" + r["kind"]}
        else:
            ev = {"type": rtype}
        for f in FIELDS[rtype]:
            v = r[f]
            assert isinstance(v, int) and not isinstance(v, bool), (f, v)
            ev[f] = v
        if rtype == "book":
            ev["bids"] = [[lv["price_raw"], lv["qty_raw"]] for lv in r["bids"]]
            ev["asks"] = [[lv["price_raw"], lv["qty_raw"]] for lv in r["asks"]]
        if rtype == "pool_state":
            ev["payload_hex"] = r["payload"].hex()
        out.append(ev)
    return out


def normalise(ev: dict[str, Any]) -> dict[str, Any]:
    """A corpus event with only the fields of its type (levels as lists)."""
    rtype = TABLE_OF[ev["type"]]
    out = {"type": ev["type"]}
    for f in FIELDS[rtype]:
        out[f] = int(ev[f])
    if rtype == "book":
        out["bids"] = [[int(p), int(q)] for p, q in ev["bids"]]
        out["asks"] = [[int(p), int(q)] for p, q in ev["asks"]]
    if rtype == "pool_state":
        out["payload_hex"] = ev["payload_hex"].lower()
    return out


def by_table(events: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {t: [] for t in floxlog.RECORD_TYPES}
    for ev in events:
        out[TABLE_OF[ev["type"]]].append(normalise(ev))
    return out


def time_sorted(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Stable sort by exchange timestamp (the time-order merge of one
    segment, or of segments in order: the merge is exact)."""
    return sorted(events, key=lambda e: e["exchange_ts_ns"])


def tape_path(case: Path) -> Path:
    return case / "segments"


# -- synthetic tables ---------------------------------------------------------

I64 = np.iinfo(np.int64)


def trade_table(n: int, seed: int = 1, t0: int = 1_700_000_000_000_000_000, symbols=(1, 2, 3)) -> pa.Table:
    rng = np.random.default_rng(seed)
    ts = t0 + np.cumsum(rng.integers(0, 1000, n, dtype=np.int64))
    price = rng.integers(-(10**12), 10**12, n, dtype=np.int64)
    trade_id = rng.integers(0, 2**63, n, dtype=np.uint64)
    if n >= 4:
        price[0], price[1] = I64.min, I64.max
        trade_id[2] = np.uint64(2**64 - 1)
    return pa.table(
        {
            "exchange_ts_ns": pa.array(ts, pa.int64()),
            "recv_ts_ns": pa.array(ts + rng.integers(0, 5000, n), pa.int64()),
            "price_raw": pa.array(price, pa.int64()),
            "qty_raw": pa.array(rng.integers(-(10**9), 10**12, n), pa.int64()),
            "trade_id": pa.array(trade_id, pa.uint64()),
            "symbol_id": pa.array(rng.choice(np.array(symbols, dtype=np.uint32), n), pa.uint32()),
            "side": pa.array(rng.integers(0, 2, n), pa.uint8()),
            "instrument": pa.array(rng.integers(0, 256, n), pa.uint8()),
            "exchange_id": pa.array(rng.integers(0, 65536, n), pa.uint16()),
        }
    )


def book_table(n: int, seed: int = 2, t0: int = 1_700_000_000_000_000_000) -> pa.Table:
    rng = np.random.default_rng(seed)
    ts = t0 + np.cumsum(rng.integers(0, 1000, n, dtype=np.int64))
    level = pa.struct([("price_raw", pa.int64()), ("qty_raw", pa.int64())])

    def side(k: int) -> list[dict[str, int]]:
        return [
            {"price_raw": int(rng.integers(-(2**62), 2**62)), "qty_raw": int(rng.integers(0, 2**40))}
            for _ in range(k)
        ]

    kinds = ["snapshot" if i % 5 == 0 else "delta" for i in range(n)]
    return pa.table(
        {
            "kind": pa.array(kinds, pa.string()),
            "exchange_ts_ns": pa.array(ts, pa.int64()),
            "recv_ts_ns": pa.array(ts + 7, pa.int64()),
            "seq": pa.array(np.arange(n) + 2**40, pa.int64()),
            "symbol_id": pa.array(rng.integers(1, 4, n), pa.uint32()),
            "header_type": pa.array([0 if k == "snapshot" else 1 for k in kinds], pa.uint8()),
            "instrument": pa.array(rng.integers(0, 4, n), pa.uint8()),
            "exchange_id": pa.array(rng.integers(0, 10, n), pa.uint16()),
            "bids": pa.array([side(int(rng.integers(0, 6))) for _ in range(n)], pa.list_(level)),
            "asks": pa.array([side(int(rng.integers(0, 6))) for _ in range(n)], pa.list_(level)),
        }
    )


def option_table(n: int, seed: int = 3, t0: int = 1_700_000_000_000_000_000) -> pa.Table:
    rng = np.random.default_rng(seed)
    ts = t0 + np.cumsum(rng.integers(0, 1000, n, dtype=np.int64))
    cols: dict[str, Any] = {
        "exchange_ts_ns": pa.array(ts, pa.int64()),
        "recv_ts_ns": pa.array(ts + 3, pa.int64()),
    }
    for name in [
        "mark_price", "index_price", "underlying_price", "iv", "bid_price",
        "ask_price", "bid_size", "ask_size", "bid_iv", "ask_iv", "open_interest",
    ]:
        cols[name + "_raw"] = pa.array(rng.integers(I64.min, I64.max, n, dtype=np.int64, endpoint=True))
    cols["symbol_id"] = pa.array(rng.integers(0, 2**32, n, dtype=np.uint32), pa.uint32())
    cols["instrument"] = pa.array(rng.integers(0, 256, n), pa.uint8())
    cols["exchange_id"] = pa.array(rng.integers(0, 65536, n), pa.uint16())
    return pa.table(cols)


def pool_table(n: int, seed: int = 4, t0: int = 1_700_000_000_000_000_000) -> pa.Table:
    rng = np.random.default_rng(seed)
    ts = t0 + np.cumsum(rng.integers(0, 1000, n, dtype=np.int64))
    payloads = [rng.bytes(int(rng.integers(0, 300))) for _ in range(n)]
    if n:
        payloads[0] = b""
    return pa.table(
        {
            "exchange_ts_ns": pa.array(ts, pa.int64()),
            "recv_ts_ns": pa.array(ts + 11, pa.int64()),
            "symbol_id": pa.array(rng.integers(0, 9, n), pa.uint32()),
            "sub_type": pa.array(rng.integers(0, 256, n), pa.uint8()),
            "venue": pa.array(rng.integers(0, 256, n), pa.uint8()),
            "exchange_id": pa.array(rng.integers(0, 65536, n), pa.uint16()),
            "payload": pa.array(payloads, pa.binary()),
        }
    )


MAKERS = {
    "trade": trade_table,
    "book": book_table,
    "option_quote": option_table,
    "pool_state": pool_table,
}


def raw_columns(table: pa.Table, rtype: str) -> pa.Table:
    """The raw columns (what a writer reads) of a table read from a tape."""
    fields = [pa.field(f.name, f.type) for f in floxlog._raw_fields(rtype) if f.name in table.column_names]
    return table.select([f.name for f in fields]).cast(pa.schema(fields)).combine_chunks()


@pytest.fixture
def tmp(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path


@pytest.fixture(scope="session")
def s3_server():
    """A real S3 API server (moto's, on 127.0.0.1) for the session's
    object-storage tests; see s3server.py. moto is pinned in
    requirements-test.txt: a missing install fails, never skips."""
    from s3server import Server

    server = Server()
    yield server
    server.stop()
