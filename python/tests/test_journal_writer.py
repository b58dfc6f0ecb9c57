"""floxlog.Writer: a tape appended batch by batch, in journal mode or not
(issue 22): the same bytes as floxlog.write, a context manager, LZ4
refused in journal mode."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest

import floxlog
from conftest import MAKERS, raw_columns


def files(d: Path) -> dict[str, bytes]:
    return {n: (d / n).read_bytes() for n in sorted(os.listdir(d)) if "lock" not in n}


@pytest.mark.parametrize("journal", [True, False])
def test_writer_appends_what_write_writes(tmp: Path, journal: bool):
    src = MAKERS["trade"](5000)
    settings = dict(compression="none", index_interval=100, max_segment_bytes=40_000, created_ns=7)
    floxlog.write(tmp / "whole", src, **settings)
    with floxlog.Writer(tmp / "parts", journal=journal, **settings) as w:
        n = 0
        for part in (src.slice(0, 1234), src.slice(1234, 3000), src.slice(4234)):
            n += w.append(part)
        assert n == 5000
    want, got = files(tmp / "whole"), files(tmp / "parts")
    assert len(want) > 3
    assert got == want
    back = floxlog.open(tmp / "parts").read("trade", order="file")
    assert raw_columns(back, "trade").equals(raw_columns(src, "trade"))


def test_journal_writer_is_live_and_keeps_its_events_when_interrupted(tmp: Path):
    src = MAKERS["trade"](2000)
    out = tmp / "live"
    with pytest.raises(RuntimeError, match="stop"):
        # Rotating: segments the background thread finishes (cuts the
        # zero tail of) while the read has them mapped are read whole.
        with floxlog.Writer(out, journal=True, max_segment_bytes=30_000) as w:
            w.append(src)
            # Written in place: readers see every appended event already,
            # the live segment's zero tail taken as a torn tail.
            with pytest.warns(floxlog.FloxlogWarning) as rec:
                assert floxlog.open(out).read("trade", order="file").num_rows == 2000
            assert any("torn record" in str(r.message) for r in rec)
            raise RuntimeError("stop")
    # Left for recover, every event kept.
    with pytest.warns(floxlog.FloxlogWarning) as rec:
        assert floxlog.open(out).read("trade", order="file").num_rows == 2000
    assert any("torn record" in str(r.message) for r in rec)


def test_journal_refuses_lz4_and_a_closed_writer_refuses_appends(tmp: Path):
    with pytest.raises(floxlog.FloxlogError, match="journal mode"):
        floxlog.Writer(tmp / "z", journal=True, compression="lz4")
    w = floxlog.Writer(tmp / "c", journal=True)
    w.append(MAKERS["trade"](10))
    assert w.close()["events"] == 10
    with pytest.raises(floxlog.FloxlogError, match="closed"):
        w.append(MAKERS["trade"](1))


@pytest.mark.parametrize("journal", [True, False])
def test_health_counts_what_was_appended(tmp: Path, journal: bool):
    src = MAKERS["trade"](3000)
    w = floxlog.Writer(tmp / "h", journal=journal, compression="none", max_segment_bytes=40_000)
    try:
        assert w.health()["appended"] == 0
        w.append(src)
        h = w.health()
        assert h["appended"] == 3000
        assert h["durable"] <= h["written"] <= h["appended"], h
        assert h["segments_open"] == 1 and h["bytes_used"] > 0, h
        assert h["low_space"] is False and h["reservation_failures"] == 0
        assert h["last_error"] is None and h["last_reservation_error"] is None
        if journal:
            # Each event is in the shared mapping when append returns: the
            # OS has it; the segments ahead are reserved on disk.
            assert h["written"] == 3000 and h["bytes_reserved"] > 0, h
        else:
            # Buffered: the OS has what the writer handed it; nothing reserved.
            assert h["bytes_reserved"] == 0, h
    finally:
        w.close()
    with pytest.raises(floxlog.FloxlogError, match="closed"):
        w.health()
