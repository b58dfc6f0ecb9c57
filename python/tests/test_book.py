"""Tape.book_at: books computed by hand, the conformance corpus's books
against a plain replay of expected.jsonl, and errors."""

import json
import subprocess

import pytest

import floxlog
from conftest import CORPUS
from test_cli import CLI


def _book(kind, ts, bids, asks, sym=7):
    return {
        "type": kind, "exchange_ts_ns": ts, "recv_ts_ns": ts, "seq": 0, "symbol_id": sym,
        "header_type": 0 if kind == "book_snapshot" else 1, "instrument": 0,
        "exchange_id": 0, "bids": bids, "asks": asks,
    }


def _tape(tmp_path, events):
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(e) + "\n" for e in events))
    out = tmp_path / "t.floxlog"
    subprocess.run([str(CLI), "encode", str(src), "-o", str(out), "--segment",
                    "--compression", "none", "--created-ns", "1"], check=True)
    return floxlog.open(out)


EVENTS = [
    _book("book_snapshot", 100, [[98, 2], [100, 1]], [[101, 3], [103, 4]]),
    _book("book_delta", 200, [[99, 7], [100, 5]], [[101, 0]]),
    _book("book_delta", 300, [[97, -1]], []),
]


def test_hand_computed(tmp_path):
    t = _tape(tmp_path, EVENTS)
    b = t.book_at(7, 99)
    assert (b["bids"], b["asks"], b["last_event_ts"]) == ([], [], None)
    b = t.book_at("7", 250)
    assert b["bids"] == [(100, 5), (99, 7), (98, 2)]
    assert b["asks"] == [(103, 4)]
    assert (b["symbol_id"], b["at"], b["last_event_ts"]) == (7, 250, 200)
    assert t.book_at(7, 250, depth=1)["bids"] == [(100, 5)]
    with pytest.raises(floxlog.FloxlogError) as e:
        t.book_at(7, 300)
    assert e.value.offset is not None and "negative" in str(e.value)
    with pytest.raises(floxlog.FloxlogError):
        t.book_at([1, 2], 300)
    with pytest.raises(floxlog.FloxlogError):
        t.book_at(7, None)


def _model(events, sym):
    sides = [{}, {}]
    for e in sorted(events, key=lambda e: e["exchange_ts_ns"]):
        if e["symbol_id"] != sym:
            continue
        for side, key in zip(sides, ("bids", "asks")):
            if e["type"] == "book_snapshot":
                side.clear()
            for p, q in e[key]:
                if q == 0 and e["type"] == "book_delta":
                    side.pop(p, None)
                else:
                    side[p] = q
    return (sorted(sides[0].items(), reverse=True), sorted(sides[1].items()))


def test_corpus_books():
    n = 0
    for case in sorted((CORPUS / "cases").iterdir()):
        lines = (case / "expected.jsonl").read_text().splitlines()
        evs = [json.loads(l) for l in lines if l.strip()]
        evs = [e for e in evs if e["type"] in ("book_snapshot", "book_delta")]
        if not evs:
            continue
        bad = any(q < 0 for e in evs for s in ("bids", "asks") for _, q in e[s])
        sym = evs[0]["symbol_id"]
        t = floxlog.open(case / "segments")
        if bad:
            with pytest.raises(floxlog.FloxlogError):
                t.book_at(sym, 2**63 - 1)
            continue
        b = t.book_at(sym, 2**63 - 1)
        assert (b["bids"], b["asks"]) == _model(evs, sym), case.name
        n += 1
    assert n > 0
