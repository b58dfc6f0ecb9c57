"""write(resume=True): a second write continues the tape at the path (after
its last segment) instead of refusing it; a tape whose segment cannot be
recovered is refused naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest

import floxlog
from conftest import MAKERS, raw_columns


def test_resume_appends_runs_to_one_tape(tmp: Path):
    out = tmp / "tape"
    src = MAKERS["trade"](3000)
    parts = [src.slice(0, 1000), src.slice(1000, 1000), src.slice(2000, 1000)]
    for part in parts:
        res = floxlog.write(out, part, compression="none", max_segment_bytes=20_000, resume=True)
        assert res["events"] == 1000
    tape = floxlog.open(out)
    back = tape.read("trade", order="file")
    assert raw_columns(back, "trade").equals(raw_columns(src, "trade"))
    assert tape.verify()["ok"] is True
    # Without resume the tape is refused, and left as it is.
    with pytest.raises(Exception, match="already exists"):
        floxlog.write(out, parts[0], compression="none")
    assert floxlog.open(out).read("trade").num_rows == 3000


def test_resume_refuses_a_tape_it_cannot_recover(tmp: Path):
    out = tmp / "tape"
    floxlog.write(out, MAKERS["trade"](1000), compression="none", resume=True)
    seg = sorted(out.glob("*.floxlog"))[-1]
    data = bytearray(seg.read_bytes())
    data[:4] = b"JUNK"
    seg.write_bytes(bytes(data))
    # Listed in the manifest with its size: the header is checked anyway.
    with pytest.raises(Exception, match="cannot resume the tape") as e:
        floxlog.write(out, MAKERS["trade"](10), compression="none", resume=True)
    assert seg.name in str(e.value)
