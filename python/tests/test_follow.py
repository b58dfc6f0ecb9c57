"""floxlog.follow: batches of a live tape as it grows, the end after the
writer closes it, a writer gone, start positions."""

from __future__ import annotations

import fcntl
import os
import struct
from pathlib import Path

import pyarrow as pa
import pytest

import floxlog
from conftest import MAKERS


def _segment(tmp: Path, n: int) -> tuple[bytes, list[bytes]]:
    """A finished uncompressed segment of `n` trades: its header and frames."""
    src = tmp / "src"
    floxlog.write(src, MAKERS["trade"](n), compression="none")
    seg = next(src.glob("*.floxlog")).read_bytes()
    index_offset = struct.unpack_from("<Q", seg, 40)[0]
    frames, at = [], 64
    while at < index_offset:
        size = struct.unpack_from("<I", seg, at)[0]
        frames.append(seg[at : at + 12 + size])
        at += 12 + size
    return seg, frames


def _placeholder(seg: bytes) -> bytes:
    """The header a writer starts with: no flags, counts or index."""
    h = bytearray(seg[:64])
    h[6] = 0
    h[16:48] = bytes(32)
    return bytes(h)


def _live(tmp: Path, seg: bytes, frames: list[bytes], k: int, name: str) -> Path:
    d = tmp / name
    d.mkdir()
    (d / "1.floxlog").write_bytes(_placeholder(seg) + b"".join(frames[:k]) + bytes(4096))
    return d


def _ids(batches: list[pa.RecordBatch]) -> list[int]:
    return [i for b in batches for i in b.column("trade_id").to_pylist()]


def test_follows_a_growing_segment_then_ends(tmp_path: Path) -> None:
    seg, frames = _segment(tmp_path, 300)
    want = floxlog.open(tmp_path / "src").trades(order="file").column("trade_id").to_pylist()
    d = _live(tmp_path, seg, frames, 120, "live")
    lock = open(d / ".floxlog.lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)  # a live writer holds the tape
    lock.write(str(os.getpid()))
    lock.flush()
    f = floxlog.follow(d, "trades", timeout=0)
    got = list(f)
    assert f.status == "timeout"
    assert _ids(got) == want[:120]
    assert all(b.schema == floxlog.schema("trade") for b in got)
    pos = f.position
    assert isinstance(pos, bytes) and pos[:4] == b"FLTP"

    # The writer appends the rest and closes the tape.
    (d / "1.floxlog").write_bytes(seg)
    lock.truncate(0)
    fcntl.flock(lock, fcntl.LOCK_UN)
    lock.close()
    more = list(f)
    assert f.status == "end"
    assert _ids(more) == want[120:]

    # Resumed from the saved position: the rest, once.
    r = floxlog.follow(d, "trade", position=pos, timeout=0)
    assert _ids(list(r)) == want[120:]
    # start= takes the bytes too.
    r = floxlog.follow(d, "trade", start=pos, timeout=0)
    assert _ids(list(r)) == want[120:]
    # From the end of a closed tape: nothing, the end.
    e = floxlog.follow(d, "trade", start="end", timeout=None)
    assert list(e) == [] and e.status == "end"


def test_a_dead_writer_raises_writer_gone(tmp_path: Path) -> None:
    seg, frames = _segment(tmp_path, 50)
    d = _live(tmp_path, seg, frames, 30, "dead")
    # What a killed writer leaves: its pid in a lock nobody holds.
    (d / ".floxlog.lock").write_text("4242")
    f = floxlog.follow(d, "trade", timeout=None)  # no limit: must not hang
    got = []
    with pytest.raises(floxlog.FloxlogError) as ei:
        for b in f:
            got.append(b)
    assert ei.value.kind == "writer_gone"
    assert str(d) in str(ei.value)
    assert f.status == "writer_gone"
    assert len(_ids(got)) == 30


def test_a_saved_position_resumes_a_tape_of_several_series(tmp_path: Path) -> None:
    """A spec-layout journal tape of trades and books, rotating: a
    follower stopped after a few batches, resumed from its saved bytes,
    gets the rest of the trades once, in order."""
    d = tmp_path / "spec"
    trades, books = MAKERS["trade"](900), MAKERS["book"](300)
    with floxlog.Writer(d, journal=True, layout="spec", max_segment_bytes=8192) as w:
        for k in range(0, 900, 300):
            w.append(trades.slice(k, 300))
            w.append(books.slice(k // 3, 100))
    assert len(list(d.glob("trades-*.bin"))) > 2 and len(list(d.glob("book-*.bin"))) > 2
    want = floxlog.open(d).trades(order="file").column("trade_id").to_pylist()
    for stop in (1, 3, 7, 24):
        f = floxlog.follow(d, "trade", timeout=0, rows=37)
        first = [next(f) for _ in range(stop)]
        pos = f.position
        assert pos.count(b"trades") == 1 and pos.count(b"book") == 1
        rest = list(floxlog.follow(d, "trade", position=pos, timeout=0))
        assert _ids(first) + _ids(rest) == want, stop
    # Damaged bytes are refused, naming what is wrong.
    bad = bytearray(pos)
    bad[10] ^= 1
    with pytest.raises(floxlog.FloxlogError, match="saved tail position"):
        floxlog.follow(d, "trade", position=bytes(bad))
    with pytest.raises(ValueError):
        floxlog.follow(d, "trade", position={"created_ns": 1})


def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    floxlog.write(tmp_path / "t", MAKERS["trade"](10), compression="none")
    with pytest.raises(floxlog.FloxlogError):
        floxlog.follow(tmp_path / "missing")
    with pytest.raises(ValueError):
        floxlog.follow(tmp_path / "t", start="middle")
    with pytest.raises(ValueError):
        floxlog.follow(tmp_path / "t", timeout=-1)
    with pytest.raises(floxlog.FloxlogError):
        floxlog.follow(tmp_path / "t", type="quotes")
