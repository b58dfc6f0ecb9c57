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


@pytest.mark.parametrize("kind", ["book_snapshot", "book_delta"])
def test_a_book_kind_name_reads_only_that_kind(tmp_path, kind):
    """issue 24 item 1: `read("book_snapshot")` gave every book event."""
    from conftest import book_table

    src = book_table(50)
    floxlog.write(tmp_path / "t", src)
    t = floxlog.open(tmp_path / "t")
    want = sum(1 for k in src.column("kind").to_pylist() if "book_" + k == kind)
    assert 0 < want < 50
    got = t.read(kind)
    assert got.num_rows == want
    assert set(got.column("kind").to_pylist()) == {kind[len("book_"):]}
    streamed = t.batches(kind, rows=7).read_all()
    assert streamed.num_rows == want
    cli = subprocess.run([str(CLI), "cat", "--type", kind, str(tmp_path / "t")],
                         capture_output=True, text=True, check=True)
    assert len(cli.stdout.splitlines()) == want
    assert t.read("book").num_rows == 50


def test_book_samples_are_floxlog_book_every(tmp_path):
    """issue 24 item 13: book_samples in one replay, the rows of
    `floxlog book --every` (CSV), with prices= on the levels."""
    from conftest import book_table

    src = book_table(400, seed=5)
    floxlog.write(tmp_path / "t", src)
    t = floxlog.open(tmp_path / "t")
    ts = src.column("exchange_ts_ns").to_pylist()
    start, end, every = ts[0] - 50, ts[-1] + 500, 7_777
    for depth in [3, 10]:
        got = t.book_samples(2, every=every, start=start, end=end, depth=depth, prices="raw")
        cli = subprocess.run(
            [str(CLI), "book", str(tmp_path / "t"), "--symbol", "2", "--every", str(every),
             "--from", str(start), "--to", str(end), "--depth", str(depth)],
            capture_output=True, text=True, check=True,
        ).stdout.splitlines()
        rows = []
        for r in got.to_pylist():
            cells = [str(r["ts"]), "" if r["last_event_ts"] is None else str(r["last_event_ts"])]
            for side in ("bids", "asks"):
                lv = r[side]
                for i in range(depth):
                    cells += [str(lv[i]["price_raw"]), str(lv[i]["qty_raw"])] if i < len(lv) else ["", ""]
            rows.append(",".join(cells))
        assert rows == cli[1:]
        assert len(rows) > 10
    # The same samples as book_at at each time (all levels).
    got = t.book_samples("2", every="9us", start=start, end=start + 90_000, depth=None)
    for r in got.to_pylist()[::3]:
        b = t.book_at(2, r["ts"])
        assert [(x["price_raw"], x["qty_raw"]) for x in r["bids"]] == b["bids"]
        assert [(x["price_raw"], x["qty_raw"]) for x in r["asks"]] == b["asks"]
    assert got.schema.field("time").type == floxlog.schema("trade").field("exchange_ts").type
    with pytest.raises(ValueError):
        t.book_samples(2, every=1, start=0, end=2**62)  # absurdly many samples
    with pytest.raises(ValueError):
        t.book_samples(2, every="0s", start=start, end=end)
