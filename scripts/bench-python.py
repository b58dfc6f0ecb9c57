#!/usr/bin/env python3
"""Benchmark of the Python package: reading trades into a pyarrow Table.

Writes a tape of N synthetic trades (default 5 M; a random-walk market of a
few symbols, as floxlog's synthetic market looks) with ``floxlog.write``,
uncompressed and LZ4, then times, best of 3 with the file in the page cache:

- ``tape.trades()`` into a ``pyarrow.Table`` (M trades/s; targets: 20 M/s
  uncompressed, 12 M/s LZ4),
- the same bytes copied in memory (a numpy copy of an array of the tape's
  size: the floor no reader can beat),
- ``tape.trades(order="file")``, ``tape.batches()`` drained through ``pyarrow.RecordBatchReader`` and
  ``tape.trades_numpy()``,
- and the write rate of ``floxlog.write``.

Run it in the environment scripts/test-python.sh makes:
    .venv/bin/python scripts/bench-python.py [--trades N] [--dir DIR] [--check]
``--check`` exits 1 when a read target is missed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

import floxlog

TARGETS = {"none": 20.0, "lz4": 12.0}  # M trades/s into a pyarrow Table


def synthetic_trades(n: int, seed: int = 7) -> pa.Table:
    """A busy market: 8 symbols, nanosecond timestamps a few µs apart,
    random-walk prices on a tick grid, small quantities."""
    rng = np.random.default_rng(seed)
    ts = 1_714_123_456_000_000_000 + np.cumsum(rng.integers(100, 5_000, n, dtype=np.int64))
    sym = rng.integers(1, 9, n).astype(np.uint32)
    base = np.array([0, 6_400_000, 310_000, 14_500, 62, 1_720, 98, 5, 1], dtype=np.int64) * 100_000_000
    walk = np.cumsum(rng.integers(-3, 4, n, dtype=np.int64)) * 1_000_000
    price = base[sym] + walk - walk.min() + 100_000_000
    qty = rng.integers(1, 50_000, n, dtype=np.int64) * 100_000
    return pa.table(
        {
            "exchange_ts_ns": ts,
            "recv_ts_ns": ts + rng.integers(20_000, 900_000, n),
            "price_raw": price,
            "qty_raw": qty,
            "trade_id": (np.arange(n, dtype=np.uint64) + 10_000_000),
            "symbol_id": sym,
            "side": rng.integers(0, 2, n).astype(np.uint8),
            "instrument": np.zeros(n, np.uint8),
            "exchange_id": np.full(n, 3, np.uint16),
        }
    )


def best_of(k: int, fn) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(k):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
        del out
        out = None
    return best, out


def tape_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.iterdir() if p.suffix in (".floxlog", ".bin"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trades", type=int, default=5_000_000)
    ap.add_argument("--dir", type=Path, default=None, help="where to write the tapes (default: a temporary directory)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--profile", choices=["reference", "spec"], default="reference",
                    help="writer profile (spec: uncompressed segments carry the Sorted flag too)")
    ap.add_argument("--max-segment-bytes", type=int, default=None,
                    help="rotation size (default 256 MiB: the uncompressed tape is two segments)")
    ap.add_argument("--check", action="store_true", help="exit 1 when a read target is missed")
    a = ap.parse_args()

    n = a.trades
    root = Path(tempfile.mkdtemp(prefix="floxlog-bench-", dir=a.dir))
    print(f"floxlog {floxlog.__version__}, pyarrow {pa.__version__}, numpy {np.__version__}, "
          f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    print(f"{n / 1e6:.1f} M synthetic trades, tapes under {root}\n")
    table = synthetic_trades(n)
    missed = []
    try:
        print(f"profile {a.profile}")
        print(f"{'':6} {'bytes':>10} {'write':>12} {'trades()':>12} {'memcpy':>12} "
              f"{'file order':>12} {'batches()':>12} {'numpy':>12}  target")
        for comp in ["none", "lz4"]:
            out = root / comp
            t0 = time.perf_counter()
            floxlog.write(out, table, compression=comp, profile=a.profile,
                          max_segment_bytes=a.max_segment_bytes)
            write_s = time.perf_counter() - t0
            size = tape_bytes(out)
            tape = floxlog.open(out)
            got = tape.trades()
            assert got.num_rows == n, got.num_rows
            assert got.column("trade_id").equals(table.column("trade_id").cast(pa.uint64())), "read back differs"
            del got
            read_s, _ = best_of(a.repeat, tape.trades)
            src = np.ones(size, dtype=np.uint8)
            dst = np.empty_like(src)
            copy_s, _ = best_of(a.repeat, lambda: np.copyto(dst, src))
            file_s, _ = best_of(a.repeat, lambda: tape.trades(order="file"))
            stream_s, _ = best_of(
                a.repeat,
                lambda: sum(b.num_rows for b in pa.RecordBatchReader.from_stream(tape.batches("trade"))),
            )
            numpy_s, _ = best_of(a.repeat, tape.trades_numpy)
            rate = n / read_s / 1e6
            ok = rate >= TARGETS[comp]
            if not ok:
                missed.append(comp)
            m = lambda s: f"{n / s / 1e6:8.1f} M/s"  # noqa: E731
            segs = len(tape.info(quick=True)["segments"])
            print(f"{comp:6} {size:>10} {m(write_s):>12} {m(read_s):>12} {m(copy_s):>12} "
                  f"{m(file_s):>12} {m(stream_s):>12} {m(numpy_s):>12}  >= {TARGETS[comp]:.0f} M/s "
                  f"{'ok' if ok else 'MISSED'}")
            print(f"{'':6} {'':10} {write_s:>11.3f}s {read_s:>11.3f}s {copy_s:>11.3f}s {file_s:>11.3f}s "
                  f"{stream_s:>11.3f}s {numpy_s:>11.3f}s  ({segs} segments; {size / read_s / 1e9:.2f} GB/s of tape read; "
                  f"memcpy {size / copy_s / 1e9:.1f} GB/s)")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print("\nwrite: floxlog.write from a pyarrow Table; trades(): tape.trades() into a pyarrow Table; "
          "memcpy: numpy copy of the tape's bytes; file order: tape.trades(order='file'); "
          "batches(): tape.batches() drained by pyarrow; "
          "numpy: tape.trades_numpy(). Rates in M trades/s, best of "
          f"{a.repeat} (write: once).")
    if missed and a.check:
        print(f"read target missed: {', '.join(missed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
