"""A segment truncated by another program while Python reads it: a
FloxlogError naming the shrinking and the file after the good rows, never
a dead interpreter (SIGBUS) (issue 23 item 1)."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest

import floxlog
from conftest import MAKERS

N = 400_000


def _segment(tape: Path) -> Path:
    segs = sorted(p for p in tape.iterdir() if p.suffix == ".floxlog")
    assert len(segs) == 1
    return segs[0]


@pytest.mark.parametrize("compression", ["none", "lz4"])
@pytest.mark.parametrize("order", ["file", "time"])
def test_a_segment_cut_under_a_read_is_an_error_not_a_signal(tmp: Path, compression: str, order: str):
    tape = tmp / "t"
    floxlog.write(tape, MAKERS["trade"](N, seed=4), compression=compression)
    seg = _segment(tape)
    t = floxlog.open(tape)
    rows = 0
    stream = t.batches("trade", rows=10_000, order=order)
    # A stream's read error reaches an Arrow consumer as an Arrow error
    # (ArrowInvalid / OSError) with floxlog's text; stream.errors keeps it.
    with pytest.raises((pa.ArrowInvalid, OSError)) as e:
        for b in stream:
            if rows == 0:
                os.truncate(seg, seg.stat().st_size // 3)
            rows += b.num_rows
    msg = str(e.value)
    assert "shrank" in msg and seg.name in msg, msg
    assert 0 < rows < N
    assert [type(x) for x in stream.errors] == [floxlog.FloxlogError]
    assert "shrank" in str(stream.errors[0])


@pytest.mark.parametrize("size", [0, 64])
def test_a_finished_segment_cut_short_is_an_error_when_no_writer_holds_the_tape(tmp: Path, size: int):
    """Issue 23 item 2: a closed segment cut to 0 or 64 bytes was read with a
    warning (its trades dropped); with no writer holding the tape it is
    damage."""
    tape = tmp / "t"
    floxlog.write(tape, MAKERS["trade"](60_000, seed=5), max_segment_bytes=1 << 20)
    segs = sorted(p for p in tape.iterdir() if p.suffix == ".floxlog")
    assert len(segs) > 2
    os.truncate(segs[1], size)
    # The listing finding warns at once; the read is the error.
    with pytest.warns(floxlog.FloxlogWarning, match="manifest says"), pytest.raises(floxlog.FloxlogError) as e:
        floxlog.open(tape).trades()
    assert segs[1].name in str(e.value)
