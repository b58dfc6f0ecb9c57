"""Helpers of the engine tests (Dask, Spark, Ray): a tape with cut segments
and what `floxlog cat --file-order` prints for it, as multisets of rows; a
local Ray."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import floxlog
from conftest import FIELDS, MAKERS, normalise
from test_cli import run

#: Fragments of a few KiB: every segment of the tapes below is cut.
SMALL = 8192


def write_tape(path: Path, n: int = 6000, compression: str = "lz4") -> Path:
    parts = [("trade", MAKERS["trade"](n, seed=5)), ("book", MAKERS["book"](200, seed=6))]
    floxlog.write(path, parts, compression=compression, max_segment_bytes=150_000,
                  metadata={1: "AAA", 2: "BBB"})
    return path


def damaged_tape(path: Path, n: int = 6000) -> tuple[Path, Path]:
    """An uncompressed tape whose largest segment has a byte flipped half
    way (a CRC mismatch there): the tape and that segment."""
    tape = write_tape(path, n=n, compression="none")
    seg = max(tape.glob("*.floxlog"), key=lambda p: p.stat().st_size)
    data = bytearray(seg.read_bytes())
    data[len(data) // 2] ^= 0xFF
    seg.write_bytes(bytes(data))
    return tape, seg


def cat_rows(path: Path, rtype: str = "trade") -> Counter:
    """The raw fields of the events `floxlog cat --file-order` prints."""
    out = run("cat", "--file-order", "--type", rtype, path)
    return Counter(
        tuple(normalise(json.loads(line))[f] for f in FIELDS[rtype]) for line in out.stdout.splitlines()
    )


def frame_rows(df, rtype: str = "trade") -> Counter:
    """The same fields of a pandas DataFrame's rows."""
    cols = [df[f].tolist() for f in FIELDS[rtype]]
    return Counter(tuple(int(v) for v in row) for row in zip(*cols))


def ray_local():
    """A local Ray of two CPUs for a test module (a generator for a
    module-scoped fixture): no dashboard, a small object store, Ray Data
    without progress bars."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=200 << 20,
             log_to_driver=False, configure_logging=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    try:
        yield ray
    finally:
        ray.shutdown()
