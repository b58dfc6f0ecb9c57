"""A dataset's fragments read by range from object storage (header and
index trailer, then the fragment's frames part by part) give what the
local copy's whole read gives: the damaged corpus (every error's kind,
offset and message, the URL for the path), and multi-segment tapes of
every layout cut into many fragments, with time filters."""

from __future__ import annotations

from pathlib import Path

import pytest

import floxlog
from conftest import CORRUPT
from s3server import url
from test_dataset import SMALL, _read_dataset, _read_tape, _same, big_tapes  # noqa: F401


@pytest.fixture(scope="module")
def corrupt_remote(s3_server) -> dict[str, Path]:
    """Every damaged corpus segment alone under a prefix: local path by URL."""
    return {s3_server.upload(c / "segment.floxlog", f"frag/corrupt/{c.name}"): c / "segment.floxlog"
            for c in CORRUPT}


def _same_error_at(remote, local, u: str, seg: Path) -> None:
    assert (remote is None) == (local is None), (remote, local)
    if local is not None:
        here = str(seg.resolve())
        there = f"{u}/segment.floxlog"
        assert remote.path == there
        assert (remote.kind, remote.offset) == (local.kind, local.offset)
        assert str(remote) == str(local).replace(here, there)


#: Cases whose index points inside a frame: a whole read ignores such an
#: index, but fragments are cut at its entries, so the fragment before the
#: lying entry fails, saying so (docs/object-storage.md).
LYING_INDEX = {"index-entry-inside-frame", "lz4-index-entry-not-a-block"}


def test_damaged_corpus_over_s3_equals_the_local_read(s3_server, corrupt_remote):
    opts = s3_server.options
    lying = set()
    for u, seg in corrupt_remote.items():
        for rtype, strict in [("trade", False), ("book", False), ("trade", True)]:
            want, err, warns = _read_tape(seg, rtype, strict=strict)
            got, err2, warns2 = _read_dataset(u, rtype, fragment_bytes=SMALL, strict=strict,
                                              storage_options=opts)
            if err is None and err2 is not None and "index is damaged" in str(err2):
                lying.add(seg.parent.name)
                assert err2.path == f"{u}/segment.floxlog" and err2.offset > 0
                assert "is no frame boundary" in str(err2) or "is no LZ4 block boundary" in str(err2)
                continue
            _same_error_at(err2, err, u, seg)
            assert len(warns2) == len(warns), (u, warns2, warns)
            _same(got, want)
    assert lying == LYING_INDEX


@pytest.mark.parametrize("kind", ["lz4", "plain", "noindex", "sorted"])
def test_cut_segments_over_s3_equal_the_local_read(s3_server, big_tapes, kind):  # noqa: F811
    path = big_tapes[kind]
    u = s3_server.upload(path, f"frag/big/{kind}")
    opts = s3_server.options
    # Fragments of 8 KiB: several per segment, each a few requests.
    size = 2 * SMALL
    frags = floxlog.dataset(u, "trade", fragment_bytes=size, storage_options=opts).fragments()
    assert len(frags) > len({f.segment for f in frags}) + 1, "segments cut into several fragments"
    all_ts = floxlog.open(path).trades(order="file")["exchange_ts_ns"].to_pylist()
    lo, hi = sorted(all_ts)[len(all_ts) // 4], sorted(all_ts)[3 * len(all_ts) // 4]
    # Every type whole; trades under time filters (a Sorted segment's seek
    # and stop on its own).
    reads = [({}, rtype) for rtype in floxlog.RECORD_TYPES]
    filters = [dict(start=lo), dict(end=hi), dict(start=lo, end=hi)]
    reads += [(kw, "trade") for kw in (filters if kind == "sorted" else filters[2:])]
    for kw, rtype in reads:
        want, err, _ = _read_tape(path, rtype, **kw)
        assert err is None
        got, err2, _ = _read_dataset(u, rtype, fragment_bytes=size, storage_options=opts, **kw)
        assert err2 is None, err2
        _same(got, want)
