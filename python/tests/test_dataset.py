"""floxlog.dataset: fragments cut by the read engine's splitter, read one by
one, equal a file-order Tape read (events, errors, warnings); fragments,
datasets and tapes pickle."""

from __future__ import annotations

import os
import pickle
import warnings
from pathlib import Path

import pyarrow as pa
import pytest

import floxlog
from conftest import CASES, CORRUPT, MAKERS, events_of, tape_path

#: Small enough that the synthetic tapes' segments are cut into several
#: fragments.
SMALL = 4096


def _read_tape(path: Path, rtype: str, **kw):
    """(table, error, warning texts) of a file-order Tape read (of the
    absolute path, as a dataset names its files)."""
    path = Path(path).resolve()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            t, err = floxlog.open(path).read(rtype, order="file", **kw), None
        except floxlog.FloxlogError as e:
            t, err = e.partial, e
    return t, err, [str(x.message) for x in w if x.category is floxlog.FloxlogWarning]


def _read_dataset(path: Path, rtype: str, **kw):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            t, err = floxlog.dataset(path, rtype, **kw).to_table(), None
        except floxlog.FloxlogError as e:
            t, err = e.partial, e
    return t, err, [str(x.message) for x in w if x.category is floxlog.FloxlogWarning]


def _read_fragments(path: Path, rtype: str, **kw) -> tuple[pa.Table, list[floxlog.FloxlogError]]:
    """Each fragment read alone, its events (those before an error too)
    concatenated, and the errors raised."""
    ds = floxlog.dataset(path, rtype, **kw)
    tables, errors = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", floxlog.FloxlogWarning)
        for f in ds.fragments():
            try:
                tables.append(f.to_table())
            except floxlog.FloxlogError as e:
                errors.append(e)
                if e.partial is not None:
                    tables.append(e.partial)
    return (pa.concat_tables(tables) if tables else ds.schema.empty_table()), errors


def _same(a: pa.Table, b: pa.Table) -> None:
    assert a.schema == b.schema
    assert a.num_rows == b.num_rows
    assert a.to_pylist() == b.to_pylist()


def _same_error(a, b) -> None:
    assert (a is None) == (b is None), (a, b)
    if a is not None:
        assert (a.kind, a.path, a.offset, str(a)) == (b.kind, b.path, b.offset, str(b))
        assert [str(x) for x in a.errors] == [str(x) for x in b.errors]


@pytest.fixture(scope="module")
def big_tapes(tmp_path_factory) -> dict[str, Path]:
    """Multi-segment tapes of every type whose segments are cut into
    several fragments: LZ4 blocks, an indexed uncompressed segment, one
    without an index."""
    root = tmp_path_factory.mktemp("tapes")
    out = {}
    parts = [(t, MAKERS[t](n, seed=7)) for t, n in
             [("trade", 3000), ("book", 300), ("option_quote", 400), ("pool_state", 300)]]
    for name, kw in {
        "lz4": dict(compression="lz4"),
        "plain": dict(compression="none", index_interval=64),
        "noindex": dict(compression="none", index=False),
        # Sorted segments: a time filter seeks (from) and stops (to) on the
        # flag, which the reads check across the cuts.
        "sorted": dict(compression="none", index_interval=64, profile="spec", layout="spec"),
    }.items():
        p = root / name
        floxlog.write(p, parts, max_segment_bytes=200_000, metadata={1: "AAA", 2: "BBB"}, **kw)
        out[name] = p
    return out


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_corpus_fragments_equal_file_order(case: Path):
    path = tape_path(case)
    for rtype in floxlog.RECORD_TYPES:
        want, err, warns = _read_tape(path, rtype)
        assert err is None
        got, errors = _read_fragments(path, rtype, fragment_bytes=SMALL)
        assert errors == []
        _same(got, want)
        got, err2, warns2 = _read_dataset(path, rtype, fragment_bytes=SMALL)
        assert err2 is None and warns2 == warns
        _same(got, want)


@pytest.mark.parametrize("kind", ["lz4", "plain", "noindex", "sorted"])
def test_cut_segments_equal_file_order(big_tapes, kind):
    path = big_tapes[kind]
    ds = floxlog.dataset(path, "trade", fragment_bytes=SMALL)
    frags = ds.fragments()
    segs = {f.segment for f in frags}
    assert len(segs) > 1, "several segments"
    assert len(frags) > len(segs) + 1, "segments cut into several fragments"
    assert all(f.first_ts is not None and f.first_ts <= f.last_ts for f in frags)
    whole = [f for f in frags if f.start_byte is None and f.end_byte is None]
    assert all(f.events is not None for f in whole)
    cut = [f for f in frags if f.start_byte is not None]
    assert cut and all(f.events is None and f.start_byte < (f.end_byte or 2**64) for f in cut)
    for rtype in floxlog.RECORD_TYPES:
        want, err, _ = _read_tape(path, rtype)
        assert err is None
        got, errors = _read_fragments(path, rtype, fragment_bytes=SMALL)
        assert errors == []
        _same(got, want)
        _same(_read_dataset(path, rtype, fragment_bytes=SMALL)[0], want)


@pytest.mark.parametrize("kind", ["plain", "sorted"])
def test_filters_equal_tape_filters(big_tapes, kind):
    path = big_tapes[kind]
    all_ts = floxlog.open(path).trades(order="file")["exchange_ts_ns"].to_pylist()
    lo, hi = sorted(all_ts)[len(all_ts) // 4], sorted(all_ts)[3 * len(all_ts) // 4]
    for kw in [dict(start=lo), dict(end=hi), dict(start=lo, end=hi, symbols=["AAA", 3]),
               dict(symbols=[]), dict(prices="float"), dict(prices="raw")]:
        for rtype in ["trade", "book"]:
            want, err, _ = _read_tape(path, rtype, **kw)
            assert err is None
            got, err, _ = _read_dataset(path, rtype, fragment_bytes=SMALL, **kw)
            assert err is None
            _same(got, want)
            got, errors = _read_fragments(path, rtype, fragment_bytes=SMALL, **kw)
            assert errors == []
            _same(got, want)


def test_unknown_symbol_raises_when_listed(big_tapes):
    ds = floxlog.dataset(big_tapes["lz4"], "trade", symbols=["NOPE"])
    with pytest.raises(floxlog.FloxlogError, match="NOPE"):
        ds.fragments()


@pytest.mark.parametrize("case", CORRUPT, ids=lambda p: p.name)
def test_damaged_corpus_equals_file_order(case: Path):
    """Most of these segments are cut into several fragments at SMALL: the
    damage (or torn tail) falls in a later range than the first."""
    seg = case / "segment.floxlog"
    for rtype, strict in [("trade", False), ("book", False), ("trade", True)]:
        want, err, warns = _read_tape(seg, rtype, strict=strict)
        got, err2, warns2 = _read_dataset(seg, rtype, fragment_bytes=SMALL, strict=strict)
        _same_error(err2, err)
        assert warns2 == warns
        _same(got, want)


def _damage(path: Path, at_fraction: float = 0.5) -> tuple[Path, int]:
    """Flips a byte in the middle of the largest segment's frames."""
    seg = max(path.glob("*.floxlog"), key=lambda p: p.stat().st_size)
    data = bytearray(seg.read_bytes())
    at = int(len(data) * at_fraction)
    data[at] ^= 0xFF
    seg.write_bytes(bytes(data))
    return seg, at


@pytest.mark.parametrize("compression", ["none", "lz4"])
def test_damaged_range_raises_and_later_ranges_are_dropped(tmp: Path, compression: str):
    path = tmp / "t"
    floxlog.write(path, MAKERS["trade"](4000, seed=3), compression=compression, index_interval=64)
    seg, at = _damage(path)
    want, err, warns = _read_tape(path, "trade")
    assert err is not None and err.path == str(seg)
    frags = floxlog.dataset(path, "trade", fragment_bytes=SMALL).fragments()
    bad = [f for f in frags if (f.start_byte or 0) <= at < (f.end_byte or 2**64)]
    assert len(bad) == 1 and len(frags) > 3
    i = frags.index(bad[0])
    before = pa.concat_tables([f.to_table() for f in frags[:i]])
    with pytest.raises(floxlog.FloxlogError) as e:
        bad[0].to_table()
    # The damaged range: its events before the damage, the error a
    # sequential read gives (kind, file, offset, events before it).
    _same_error(e.value, err)
    _same(pa.concat_tables([before, e.value.partial]), want)
    # Later ranges read alone; the dataset drops them as a sequential
    # read never reaches them.
    later = [f.to_table() for f in frags[i + 1:]]
    assert sum(t.num_rows for t in later) > 0
    got, err2, warns2 = _read_dataset(path, "trade", fragment_bytes=SMALL)
    _same_error(err2, err)
    assert warns2 == warns
    _same(got, want)


def test_batches_of_a_damaged_range_come_before_the_error(tmp: Path):
    path = tmp / "t"
    floxlog.write(path, MAKERS["trade"](4000, seed=3), compression="none")
    _, at = _damage(path)
    frags = floxlog.dataset(path, "trade", fragment_bytes=SMALL).fragments()
    bad = next(f for f in frags if (f.start_byte or 0) <= at < (f.end_byte or 2**64))
    got = []
    with pytest.raises(floxlog.FloxlogError) as e:
        for b in bad.to_batches(rows=10):
            assert b.num_rows <= 10
            got.append(b)
    with pytest.raises(floxlog.FloxlogError) as e2:
        bad.to_table()
    assert str(e.value) == str(e2.value)
    assert pa.Table.from_batches(got, bad.settings.schema()).to_pylist() == e2.value.partial.to_pylist()


def test_missing_file_raises_naming_it(big_tapes, tmp: Path):
    import shutil

    path = tmp / "t"
    shutil.copytree(big_tapes["lz4"], path)
    frags = floxlog.dataset(path, "trade", fragment_bytes=SMALL).fragments()
    gone = Path(frags[-1].segment)
    gone.unlink()
    with pytest.raises(floxlog.FloxlogError) as e:
        pickle.loads(pickle.dumps(frags[-1])).to_table()
    assert e.value.path == str(gone)
    assert str(gone) in str(e.value)
    # The others still read.
    assert frags[0].to_table().num_rows > 0


def test_listing_errors_are_fragments_that_raise(big_tapes, tmp: Path):
    """A segment the manifest lists that is missing: a Tape read raises
    after reading the rest; so does the dataset, and the fragment that
    carries the listing error raises when read (in an engine: fails the
    job)."""
    import shutil

    path = tmp / "t"
    shutil.copytree(big_tapes["plain"], path)
    if not (path / "manifest.json").exists() and not (path / ".manifest").exists():
        pytest.skip("the writer keeps no manifest")
    sorted(path.glob("*.floxlog"))[1].unlink()
    want, err, warns = _read_tape(path, "trade")
    assert err is not None
    got, err2, warns2 = _read_dataset(path, "trade", fragment_bytes=SMALL)
    _same_error(err2, err)
    assert warns2 == warns
    _same(got, want)
    frags = floxlog.dataset(path, "trade", fragment_bytes=SMALL).fragments()
    carriers = [f for f in frags if f.segment is None]
    assert carriers
    with pytest.raises(floxlog.FloxlogError) as e:
        pickle.loads(pickle.dumps(carriers[0])).to_table()
    assert (e.value.kind, str(e.value)) == (err.kind, str(err))


def test_pickles(big_tapes):
    path = big_tapes["lz4"]
    tape = pickle.loads(pickle.dumps(floxlog.open(path)))
    assert isinstance(tape, floxlog.Tape) and tape.path == str(path)
    ds = floxlog.dataset(path, "book", start=0, symbols=["AAA"], prices="float", fragment_bytes=SMALL)
    ds2 = pickle.loads(pickle.dumps(ds))
    assert ds2.tapes == ds.tapes and ds2.settings == ds.settings
    for f in ds.fragments():
        f2 = pickle.loads(pickle.dumps(f))
        assert f2 == f
        _same(f2.to_table(), f.to_table())
    _same(ds2.to_table(), tape.books(order="file", start=0, symbols=["AAA"], prices="float"))


def test_many_tapes_and_globs(big_tapes):
    root = big_tapes["lz4"].parent
    ds = floxlog.dataset(str(root / "*"), "trade", fragment_bytes=SMALL)
    assert ds.tapes == tuple(str(p) for p in sorted(root.iterdir()))
    got = ds.to_table()
    want = [floxlog.open(p).trades(order="file") for p in sorted(root.iterdir())]
    assert events_of(got, "trade") == sum((events_of(t, "trade") for t in want), [])
    assert got["symbol"].to_pylist() == sum((t["symbol"].to_pylist() for t in want), [])
    # Segment files are tapes too.
    seg_files = sorted(big_tapes["plain"].glob("*.floxlog"))
    assert floxlog.dataset(seg_files, "trade").to_table().num_rows == floxlog.open(big_tapes["plain"]).trades().num_rows


def test_timestamps_floored(tmp: Path):
    t = MAKERS["trade"](50, seed=9, t0=-1_000_000_001)
    path = tmp / "t"
    floxlog.write(path, t, compression="none")
    for unit, per in [("us", 1_000), ("ms", 1_000_000)]:
        ds = floxlog.dataset(path, "trade", timestamps=unit)
        got = ds.to_table()
        assert got.schema.field("exchange_ts").type == pa.timestamp(unit, tz="UTC")
        assert got.schema == ds.schema
        ns = got["exchange_ts_ns"].to_pylist()
        assert got["exchange_ts"].cast(pa.int64()).to_pylist() == [v // per for v in ns]
        assert ns == t["exchange_ts_ns"].to_pylist()


def test_bad_arguments():
    path = tape_path(CASES[0])
    with pytest.raises(floxlog.UsageError):
        floxlog.dataset(path, "nope")
    with pytest.raises(floxlog.UsageError):
        floxlog.dataset(path, "trade", timestamps="s")
    with pytest.raises(floxlog.UsageError):
        floxlog.dataset(path, "trade", fragment_bytes=0)
    with pytest.raises(floxlog.FloxlogError) as e:
        floxlog.dataset(str(path) + "-missing", "trade")
    assert e.value.path is not None
    with pytest.raises(floxlog.FloxlogError):
        floxlog.dataset(str(path) + "-none-*", "trade")


def test_sorted_flag_checked_across_a_cut(tmp: Path):
    """A Sorted segment whose timestamps go back exactly at a cut: a
    time-filtered read relies on the flag, so a sequential read stops
    there with an error; so does the fragment that starts at the cut
    (judged against the range before it), and the dataset."""
    path = tmp / "t"
    floxlog.write(path, MAKERS["trade"](2000, seed=4), compression="none",
                  profile="spec", layout="spec", index=False)
    seg = next(path.glob("*.bin"))
    header = floxlog.open(path).info()["segments"][0]["header"]
    assert "Sorted" in header["flags"]
    frame = (seg.stat().st_size - 64) // header["event_count"]  # fixed-size trade frames
    frags = floxlog.dataset(path, "trade", end=2**62, fragment_bytes=SMALL).fragments()
    j = 3
    cut = frags[j].start_byte
    data = bytearray(seg.read_bytes())
    data[cut - frame:cut], data[cut:cut + frame] = data[cut:cut + frame], data[cut - frame:cut]
    seg.write_bytes(bytes(data))
    want, err, _ = _read_tape(path, "trade", end=2**62)
    assert err is not None and (err.kind, err.offset) == ("malformed_record", cut)
    assert "flagged Sorted" in str(err)
    with pytest.raises(floxlog.FloxlogError) as e:
        frags[j].to_table()
    _same_error(e.value, err)
    assert e.value.partial.num_rows == 0
    assert frags[j + 1].to_table().num_rows > 0
    got, err2, _ = _read_dataset(path, "trade", end=2**62, fragment_bytes=SMALL)
    _same_error(err2, err)
    _same(got, want)
    # Without a time filter nothing relies on the flag: every event reads.
    assert floxlog.dataset(path, "trade", fragment_bytes=SMALL).to_table().num_rows == 2000
