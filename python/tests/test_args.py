"""Strict argument checking of the reading calls and open() (issue 24
items 10-11): types, empty lists, bools, time strings in documented forms
only, out-of-range times, files that are not segments."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pytest

import floxlog
from conftest import MAKERS

T0 = 1_700_000_000_000_000_000


@pytest.fixture(scope="module")
def tape(tmp_path_factory) -> floxlog.Tape:
    out = tmp_path_factory.mktemp("args") / "t"
    floxlog.write(out, MAKERS["trade"](100, t0=T0, symbols=(1, 2)), metadata={1: "BTC", 2: "ETH"})
    return floxlog.open(out)


def test_an_empty_symbol_list_selects_nothing(tape):
    assert tape.trades(symbols=[]).num_rows == 0
    assert tape.trades(symbols=[]).schema == floxlog.schema("trade")
    assert tape.batches("trade", symbols=[]).read_all().num_rows == 0
    assert tape.trades(symbols=None).num_rows == 100


@pytest.mark.parametrize("bad", [1.0, b"BTC", {"BTC": 1}, [1.5], [None], object()])
def test_symbols_of_the_wrong_type_are_a_type_error(tape, bad):
    with pytest.raises(TypeError) as ei:
        tape.trades(symbols=bad)
    assert "symbols" in str(ei.value)
    assert "not iterable" not in str(ei.value)


@pytest.mark.parametrize("bad", ["no", 1, 0, None, "yes"])
def test_strict_must_be_a_bool(tape, bad):
    with pytest.raises(TypeError) as ei:
        tape.trades(strict=bad)
    assert "strict" in str(ei.value)


@pytest.mark.parametrize("s", ["20240426", "1714123500", "-5", " 1714123500 "])
def test_digit_strings_without_a_unit_are_refused(tape, s):
    with pytest.raises(ValueError) as ei:
        tape.trades(start=s)
    assert "start" in str(ei.value) and "ambiguous" in str(ei.value)


def test_time_forms_that_are_documented(tape):
    all_ = tape.trades()
    ts = all_.column("exchange_ts_ns").to_pylist()
    mid = ts[50]
    want = sum(1 for t in ts if t >= mid)
    for form in [mid, f"{mid}ns", f"{mid // 1000}us" if mid % 1000 == 0 else mid, np.datetime64(mid, "ns")]:
        assert tape.trades(start=form).num_rows == want, form
    secs = T0 // 10**9
    n = sum(1 for t in ts if t >= secs * 10**9)
    assert tape.trades(start=f"{secs}s").num_rows == n
    assert tape.trades(start=np.datetime64(secs, "s")).num_rows == n
    assert tape.trades(start=dt.datetime.fromtimestamp(secs, dt.timezone.utc)).num_rows == n
    iso = dt.datetime.fromtimestamp(secs, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert tape.trades(start=iso).num_rows == n


@pytest.mark.parametrize(
    "v",
    [dt.datetime(2300, 1, 1), dt.date(1500, 1, 1), np.datetime64("2300-01-01", "s"), "99999999999s", 2**63, -(2**63) - 1],
)
def test_out_of_range_times_are_a_clear_value_error(tape, v):
    with pytest.raises(ValueError) as ei:
        tape.trades(end=v)
    msg = str(ei.value)
    assert msg.startswith("end:") and "2262" in msg
    assert "TimeArg" not in msg and "extract" not in msg


def test_order_is_checked(tape):
    with pytest.raises(TypeError):
        tape.trades(order=1)
    with pytest.raises(ValueError) as ei:
        tape.trades(order="random")
    assert "order" in str(ei.value)


def test_open_refuses_a_file_that_is_not_a_segment(tmp: Path):
    p = tmp / "readme.txt"
    p.write_text("hello, this is not a tape\n")
    with pytest.raises(floxlog.FloxlogError) as ei:
        floxlog.open(p)
    assert ei.value.kind == "bad_magic" and ei.value.path == str(p)
    (tmp / "empty").write_bytes(b"")
    with pytest.raises(floxlog.FloxlogError):
        floxlog.open(tmp / "empty")
    with pytest.raises(floxlog.FloxlogError):
        floxlog.open(tmp / "missing")
    # A file named as a segment is a (damaged) segment: it opens, and its
    # reads report the damage as `floxlog cat` does.
    (tmp / "x.floxlog").write_text("not a segment")
    with pytest.raises(floxlog.FloxlogError) as ei:
        floxlog.open(tmp / "x.floxlog").trades()
    assert ei.value.partial is not None


@pytest.mark.parametrize(
    "kw, exc",
    [
        ({"compression": 1}, TypeError),
        ({"compression": "zstd"}, ValueError),
        ({"layout": "other"}, ValueError),
        ({"index": "no"}, TypeError),
        ({"durability": 5}, TypeError),
        ({"type": 3}, TypeError),
    ],
)
def test_write_settings_are_checked(tmp: Path, kw, exc):
    with pytest.raises(exc) as ei:
        floxlog.write(tmp / "x", MAKERS["trade"](3), **kw)
    assert next(iter(kw)) in str(ei.value)
    assert "PyString" not in str(ei.value)
    assert not (tmp / "x").exists()
