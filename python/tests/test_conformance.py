"""The conformance corpus read through Python: every case equals its
expected.jsonl, every damaged segment stops where and how the corpus says."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pyarrow as pa
import pytest

import floxlog
from conftest import (
    CASES,
    CORPUS,
    CORRUPT,
    by_table,
    events_of,
    read_jsonl,
    tape_path,
    time_sorted,
)


def test_corpus_is_there():
    assert len(CASES) >= 13, CASES
    assert len(CORRUPT) >= 20, CORRUPT


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_case_file_order(case: Path):
    expected = by_table(read_jsonl(case / "expected.jsonl"))
    tape = floxlog.open(tape_path(case))
    total = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", floxlog.FloxlogWarning)
        for rtype in floxlog.RECORD_TYPES:
            t = tape.read(rtype, order="file")
            assert t.schema == floxlog.schema(rtype)
            got = events_of(t, rtype)
            assert got == expected[rtype], f"{case.name} {rtype}"
            total += len(got)
    meta = json.loads((case / "case.json").read_text())
    assert total == meta["event_count"]


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_case_time_order(case: Path):
    expected = by_table(read_jsonl(case / "expected.jsonl"))
    tape = floxlog.open(tape_path(case))
    for rtype in floxlog.RECORD_TYPES:
        got = events_of(tape.read(rtype), rtype)
        assert got == time_sorted(expected[rtype]), f"{case.name} {rtype}"


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_case_each_segment_file(case: Path):
    """A segment file opens as a tape too; the segments in file-name order
    make up expected.jsonl."""
    expected = by_table(read_jsonl(case / "expected.jsonl"))
    got: dict[str, list] = {t: [] for t in floxlog.RECORD_TYPES}
    for seg in sorted(tape_path(case).iterdir()):
        tape = floxlog.open(seg)
        for rtype in floxlog.RECORD_TYPES:
            got[rtype] += events_of(tape.read(rtype, order="file"), rtype)
    assert got == expected


def test_derived_columns_match_the_raw_ones():
    case = CORPUS / "cases" / "extremes"
    tape = floxlog.open(tape_path(case))
    t = tape.trades(order="file")
    assert t.num_rows > 0
    raw = t.column("exchange_ts_ns").to_pylist()
    assert t.column("exchange_ts").cast(pa.int64()).to_pylist() == raw
    assert t.column("recv_ts").cast(pa.int64()).to_pylist() == t.column("recv_ts_ns").to_pylist()
    from decimal import Decimal

    for dec, r in zip(t.column("price").to_pylist(), t.column("price_raw").to_pylist()):
        assert dec == Decimal(r).scaleb(-8)
    for dec, r in zip(t.column("qty").to_pylist(), t.column("qty_raw").to_pylist()):
        assert dec == Decimal(r).scaleb(-8)
    # No metadata.json: no names.
    assert t.column("symbol").null_count == t.num_rows
    q = tape.option_quotes(order="file")
    for name in ["mark_price", "iv", "open_interest"]:
        for dec, r in zip(q.column(name).to_pylist(), q.column(name + "_raw").to_pylist()):
            assert dec == Decimal(r).scaleb(-8)


def _source_case(segment: Path) -> Path:
    """The case a damaged segment was derived from: the one whose first
    segment shares the longest run of bytes after the header."""
    data = segment.read_bytes()[64:]

    def common(case: Path) -> int:
        other = sorted(tape_path(case).iterdir())[0].read_bytes()[64:]
        n = 0
        for a, b in zip(data, other):
            if a != b:
                break
            n += 1
        return n

    return max((c for c in CASES if c.parent.name == "cases"), key=common)


def _first_events(case: Path, n: int) -> dict[str, list]:
    return by_table(read_jsonl(case / "expected.jsonl")[:n])


def _read_all(tape: floxlog.Tape, strict: bool) -> dict[str, pa.Table]:
    return {rt: tape.read(rt, order="file", strict=strict) for rt in floxlog.RECORD_TYPES}


@pytest.mark.parametrize("case", CORRUPT, ids=lambda p: p.name)
def test_corrupt(case: Path):
    expect = json.loads((case / "case.json").read_text())["expect"]
    seg = case / "segment.floxlog"
    n = expect["events"]
    source = json.loads((case / "case.json").read_text()).get("source")
    origin = CORPUS / source if source else _source_case(seg)
    before = _first_events(origin, n) if n else {t: [] for t in floxlog.RECORD_TYPES}
    tape = floxlog.open(seg)
    if "error" in expect:
        # A strict reader: every record type's read stops with the error,
        # having yielded exactly the events before it.
        for rtype in floxlog.RECORD_TYPES:
            with pytest.raises(floxlog.FloxlogError) as ei:
                tape.read(rtype, order="file", strict=True)
            e = ei.value
            assert e.kind == expect["error"], str(e)
            assert e.offset == expect["error_offset"], str(e)
            assert e.path == str(seg)
            assert e.hint
            assert str(e).startswith(f"{seg} at byte {expect['error_offset']}: {expect['error']}: ")
            assert isinstance(e.partial, pa.Table)
            assert events_of(e.partial, rtype) == before[rtype], rtype
            assert e.errors[0] is e
        # Not strict: the same, except the torn tail of a segment whose
        # writer died, which warns and keeps the events: a placeholder header
        # (no counts, no index, uncompressed), or an empty file (its writer
        # was killed before its first write: a torn tail at byte 0).
        head = seg.read_bytes()[:48]
        placeholder = (
            len(head) == 48 and head[6] & 3 == 0 and not any(head[32:36]) and not any(head[40:48])
        )
        tolerated = expect["error"] == "truncated" and (placeholder or not head)
        for rtype in floxlog.RECORD_TYPES:
            if tolerated:
                torn = f"torn record at byte {expect['error_offset']}"
                with pytest.warns(floxlog.FloxlogWarning, match=torn):
                    t = tape.read(rtype, order="file")
                assert events_of(t, rtype) == before[rtype]
            else:
                with pytest.raises(floxlog.FloxlogError) as ei:
                    tape.read(rtype, order="file")
                assert (ei.value.kind, ei.value.offset) == (expect["error"], expect["error_offset"])
                assert events_of(ei.value.partial, rtype) == before[rtype]
        # verify() fails with the same kind at the same offset; except a
        # placeholder segment's frames ending in zeros (a journal's
        # preallocated tail), for which verify names the more precise
        # `zero_tail`: a warning, or the error when strict.
        zero_tail = placeholder and not any(seg.read_bytes()[expect["error_offset"] :])
        if zero_tail:
            report = tape.verify()
            found = [(f["kind"], f["severity"], f["offset"]) for f in report["findings"]]
            assert ("zero_tail", "warning", expect["error_offset"]) in found, found
        with pytest.raises(floxlog.FloxlogError) as ei:
            tape.verify(strict=zero_tail)
        assert ei.value.kind == ("zero_tail" if zero_tail else expect["error"])
        assert ei.value.offset == expect["error_offset"]
        assert ei.value.report["ok"] is False
    else:
        # The frames are intact: every event reads; the index fails verify.
        with warnings.catch_warnings():
            warnings.simplefilter("error", floxlog.FloxlogWarning)
            got = {rt: events_of(t, rt) for rt, t in _read_all(tape, True).items()}
        assert sum(len(v) for v in got.values()) == n
        assert got == before
        with pytest.raises(floxlog.FloxlogError) as ei:
            tape.verify()
        assert ei.value.kind == expect["index_error"]
        kinds = [f["kind"] for f in ei.value.report["findings"] if f["severity"] == "error"]
        assert expect["index_error"] in kinds


def test_corrupt_through_a_stream_ends_in_an_arrow_error():
    seg = CORPUS / "corrupt" / "crc-mismatch" / "segment.floxlog"
    s = floxlog.open(seg).batches("trade", rows=7)
    reader = pa.RecordBatchReader.from_stream(s)
    rows = 0
    with pytest.raises(Exception) as ei:
        for b in reader:
            assert b.num_rows <= 7
            rows += b.num_rows
    assert "crc_mismatch" in str(ei.value) and "at byte 12852" in str(ei.value)
    before = _first_events(_source_case(seg), 57)["trade"]
    assert rows == len(before)
    assert s.done
    assert [e.kind for e in s.errors] == ["crc_mismatch"]
    assert s.errors[0].offset == 12852
