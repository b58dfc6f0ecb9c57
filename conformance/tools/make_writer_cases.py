#!/usr/bin/env python3
"""Deterministic generator of the writer cases the flox reference run did not cover.

    FLOXLOG=target/release/floxlog python3 conformance/tools/make_writer_cases.py [CORPUS]

Each case's input events are made here (no randomness); its segments are
written by floxlog's writer (`floxlog encode --settings`, reference profile
unless the case says `spec`), which gives the reference's bytes on every case
the reference wrote (cases/ without `generated_by`). The expected events are
the input in file order. Re-run it and tools/make_damaged.py (which rewrites
SHA256SUMS) after changing a case.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

CREATED = 1795345519375435165


def trade(i, ts, symbol=1):
    return {"type": "trade", "exchange_ts_ns": ts, "recv_ts_ns": ts + 1000,
            "price_raw": 100_000_000 * (100 + i % 7), "qty_raw": 1_000_000 * (1 + i % 5),
            "trade_id": 10_000 + i, "symbol_id": symbol, "side": i % 2,
            "instrument": 0, "exchange_id": 0}


def book(i, ts, kind, levels, header_type):
    side = [[100_000_000 * (100 - k), 1_000_000 * (k + 1)] for k in range(levels)]
    return {"type": kind, "exchange_ts_ns": ts, "recv_ts_ns": ts + 500, "seq": i,
            "symbol_id": 2, "header_type": header_type, "instrument": 1, "exchange_id": 0,
            "bids": side, "asks": [[p + 500_000_000, q] for p, q in side]}


T0 = 1_700_000_000_000_000_000


def cases():
    out = []
    # LZ4 blocks of 64 KiB and more: 300 trades (60 bytes a frame) and deep
    # books per block.
    ev = []
    for i in range(1200):
        ev.append(trade(i, T0 + i * 1000) if i % 4 else book(i, T0 + i * 1000, "book_snapshot", 60, 0))
    out.append(("lz4-big-blocks",
                "LZ4 blocks of 400 events holding 64 KiB or more of frames each (books of 60 levels a side).",
                ev, {"compression": "lz4", "create_index": True, "index_interval": 400}, []))
    ev = [trade(i, T0 + i * 1000) for i in range(250)]
    out.append(("lz4-noindex", "LZ4 blocks of 100 events, no index trailer.", ev,
                {"compression": "lz4", "create_index": False, "index_interval": 100}, []))
    ev = []
    for i in range(120):
        if i % 3 == 0:
            ev.append(book(i, T0 + i * 1000, "book_snapshot", 3, 2))
        elif i % 3 == 1:
            ev.append(book(i, T0 + i * 1000, "book_delta", 2, 3))
        else:
            ev.append(trade(i, T0 + i * 1000, symbol=i % 4))
    out.append(("spec-profile",
                "The spec's profile: book header type 2/3, symbol_count counted, index interval 0.",
                ev, {"compression": "none", "create_index": True, "index_interval": 25,
                     "profile": "spec"}, []))
    ev = [trade(i, T0 + i * 1000) for i in range(400)]
    out.append(("rotation-many", "Uncompressed, rotated at 2048 bytes: more than ten segments.",
                ev, {"compression": "none", "create_index": True, "index_interval": 8,
                     "max_segment_bytes": 2048}, []))
    ev = [trade(0, 0)] + [trade(i, T0 + i * 1000) for i in range(1, 20)]
    out.append(("timestamp-zero",
                "The first event has exchange_ts_ns 0: the reference's first_event_ns skips it "
                "(a reference quirk: recommended).",
                ev, {"compression": "none", "create_index": True, "index_interval": 5},
                ["write"]))
    ev = [trade(i, T0 + (i * 7919 % 50) * 1000) for i in range(50)]
    out.append(("last-not-latest",
                "Timestamps out of order, the last event not the latest: the reference's "
                "last_event_ns is the last event's, not the maximum (a reference quirk: recommended).",
                ev, {"compression": "none", "create_index": True, "index_interval": 10},
                ["write"]))
    # u16 limits: a book side of 65,535 levels (the most bid_count can say),
    # in an LZ4 block, and the largest index interval the header can carry.
    deep = book(0, T0, "book_snapshot", 1, 0)
    deep["bids"] = [[100_000_000 * 1000 - k * 10_000, 1_000_000] for k in range(65_535)]
    ev = [trade(0, T0 - 1000), deep, trade(1, T0 + 1000)]
    out.append(("book-levels-max",
                "A book snapshot whose bid side holds 65,535 levels (the u16 limit of bid_count), "
                "between two trades, in one LZ4 block.",
                ev, {"compression": "lz4", "create_index": True, "index_interval": 16}, []))
    ev = [trade(i, T0 + i * 1000) for i in range(10)]
    out.append(("index-interval-max",
                "Uncompressed, index_interval 65,535 (the u16 limit of the index header's "
                "interval): one index entry.",
                ev, {"compression": "none", "create_index": True, "index_interval": 65_535}, []))
    # Empty input: a writer given no event writes no segment.
    out.append(("empty-input", "No input events: a writer writes no segment file.",
                [], {"compression": "none", "create_index": True}, []))
    return out


def main(argv):
    root = os.path.abspath(argv[1] if len(argv) > 1 else
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    floxlog = os.environ.get("FLOXLOG", "floxlog")
    for name, desc, events, w, recommended in cases():
        writer = {"compression": "none", "create_index": True, "index_interval": 1000,
                  "exchange_id": 0, "max_segment_bytes": 268435456}
        writer.update(w)
        d = os.path.join(root, "cases", name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(os.path.join(d, "segments"))
        text = "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events)
        with open(os.path.join(d, "events.jsonl"), "w") as f:
            f.write(text)
        with open(os.path.join(d, "expected.jsonl"), "w") as f:
            f.write(text)
        tmp = tempfile.mkdtemp()
        try:
            settings = dict(writer, profile=writer.get("profile", "reference"),
                            created_ns=[CREATED + k for k in range(64)])
            sp = os.path.join(tmp, "settings.json")
            with open(sp, "w") as f:
                json.dump(settings, f)
            outdir = os.path.join(tmp, "out")
            os.makedirs(outdir)
            subprocess.check_call([floxlog, "encode", "--settings", sp, "--durability", "none",
                                   "-o", outdir, "--", os.path.join(d, "events.jsonl")])
            files = sorted(f for f in os.listdir(outdir) if f.endswith(".floxlog"))
            segs = []
            for k, f in enumerate(files):
                dest = "segment-%03d.floxlog" % k
                shutil.copy(os.path.join(outdir, f), os.path.join(d, "segments", dest))
                with open(os.path.join(d, "segments", dest), "rb") as g:
                    data = g.read()
                import hashlib
                segs.append({"file": dest, "size": len(data),
                             "sha256": hashlib.sha256(data).hexdigest(),
                             "created_ns": CREATED + k})
        finally:
            shutil.rmtree(tmp)
        case = {"name": name, "description": desc,
                "generated_by": "tools/make_writer_cases.py (segments by floxlog's writer)"}
        if recommended:
            case["recommended"] = recommended
        case.update({"writer": writer, "event_count": len(events), "segments": segs,
                     "byte_exact": True})
        with open(os.path.join(d, "case.json"), "w") as f:
            f.write(json.dumps(case, indent=2) + "\n")
        sys.stderr.write("%s: %d segments\n" % (name, len(segs)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
