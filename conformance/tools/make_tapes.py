#!/usr/bin/env python3
"""Deterministic generator of the tape-level cases (tapes/<name>/).

    FLOXLOG=target/debug/floxlog python3 conformance/tools/make_tapes.py [CORPUS]

A tape case is a directory `tape/` (segments, maybe a manifest) and
`expected.jsonl`: every event of the tape in time order (stable: equal
timestamps in listing order, then file position; docs/format.md). Segments
come from the reference's (cases/rotation) or from floxlog's writer
(`floxlog encode`) for the spec layout. The expected events are computed here
from the segments' own expected events, never by a reader.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile


def jl(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def time_order(listed):
    """listed: [[event, ...] per segment in listing order] -> stable time order."""
    keyed = []
    for si, evs in enumerate(listed):
        for pos, e in enumerate(evs):
            keyed.append((e["exchange_ts_ns"], si, pos, e))
    keyed.sort(key=lambda k: k[:3])
    return [k[3] for k in keyed]


def dump_jsonl(path, events):
    with open(path, "w") as f:
        for e in events:
            f.write(json.dumps(e, separators=(",", ":")) + "\n")


def encode(floxlog, events, out, *args, created="1795345600000000000"):
    tmp = tempfile.mkdtemp()
    try:
        src = os.path.join(tmp, "in.jsonl")
        dump_jsonl(src, events)
        subprocess.check_call([floxlog, "encode", "--durability", "none", "--compression", "none",
                               "--created-ns", created, "-o", out, *args, "--", src],
                              stdout=subprocess.DEVNULL)
    finally:
        shutil.rmtree(tmp)


def main(argv):
    root = os.path.abspath(argv[1] if len(argv) > 1 else
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    floxlog = os.environ.get("FLOXLOG", "floxlog")
    made = []

    def case(name, desc):
        d = os.path.join(root, "tapes", name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(os.path.join(d, "tape"))
        made.append((name, desc, d))
        return d

    # flox layout: the reference's rotated segments under their flox names.
    rot = os.path.join(root, "cases", "rotation")
    meta = json.load(open(os.path.join(rot, "case.json")))
    d = case("flox-rotation", "flox layout: the reference's seven rotated segments as <created_ns>.floxlog, no manifest.")
    per = []
    events = jl(os.path.join(rot, "expected.jsonl"))
    k = 0
    for s in meta["segments"]:
        shutil.copy(os.path.join(rot, "segments", s["file"]),
                    os.path.join(d, "tape", "%d.floxlog" % s["created_ns"]))
    # Each segment's events: count its frames through its own expected share.
    counts = [int(subprocess.check_output(
        [floxlog, "cat", "--format", "jsonl", "--file-order", "--",
         os.path.join(rot, "segments", s["file"])]).decode().count("\n")) for s in meta["segments"]]
    for n in counts:
        per.append(events[k:k + n])
        k += n
    dump_jsonl(os.path.join(d, "expected.jsonl"), time_order(per))

    # Time-order merge across overlapping segments, equal timestamps across
    # segments included: two flox segments written from interleaved halves.
    books = jl(os.path.join(root, "cases", "books-mixed", "expected.jsonl"))[:120]
    a = [e for i, e in enumerate(books) if i % 2 == 0]
    b = [dict(e) for i, e in enumerate(books) if i % 2 == 1]
    for i, e in enumerate(b):
        if i % 5 == 0:  # the same timestamp as an event of the other segment
            e["exchange_ts_ns"] = a[i]["exchange_ts_ns"]
    d = case("merge-overlap",
             "Two flox-layout segments whose time ranges interleave, some timestamps equal across them: "
             "the merge is by time, ties in listing (file-name) order, then file position.")
    tmp = tempfile.mkdtemp()
    try:
        for n, evs in (("1795345600000000001", a), ("1795345600000000002", b)):
            encode(floxlog, evs, os.path.join(tmp, n), "--segment", created=n)
            shutil.copy(os.path.join(tmp, n), os.path.join(d, "tape", n + ".floxlog"))
    finally:
        shutil.rmtree(tmp)
    dump_jsonl(os.path.join(d, "expected.jsonl"), time_order([a, b]))

    # spec layout: per-type series and manifest.json.
    mixed = [e for e in books if e["type"] in ("trade", "book_snapshot", "book_delta")]
    d = case("spec-series", "spec layout: manifest.json, trades-000000.bin and book-000000.bin; "
             "read in manifest order, merged by time.")
    shutil.rmtree(os.path.join(d, "tape"))
    encode(floxlog, mixed, os.path.join(d, "tape"), "--layout", "spec")
    man = json.load(open(os.path.join(d, "tape", "manifest.json")))
    series = [[e for e in mixed if (e["type"] == "trade") == (s["type"] == "trades")]
              for s in man["segments"]]
    dump_jsonl(os.path.join(d, "expected.jsonl"), time_order(series))

    # The same tape with a listed segment missing: the rest is read, and
    # the read fails.
    src = d
    d = case("missing-listed-segment",
             "spec layout whose manifest lists book-000000.bin, which is missing: the other "
             "segments' events in time order, then a failure (exit status not 0).")
    shutil.rmtree(os.path.join(d, "tape"))
    shutil.copytree(os.path.join(src, "tape"), os.path.join(d, "tape"))
    os.remove(os.path.join(d, "tape", "book-000000.bin"))
    left = [sr for s, sr in zip(man["segments"], series) if s["name"] != "book-000000.bin"]
    dump_jsonl(os.path.join(d, "expected.jsonl"), time_order(left))
    missing = {"missing-listed-segment": {"error": "missing_segment"}}

    for name, desc, d in made:
        n = sum(1 for _ in open(os.path.join(d, "expected.jsonl")))
        with open(os.path.join(d, "case.json"), "w") as f:
            f.write(json.dumps({"name": name, "description": desc,
                                "generated_by": "tools/make_tapes.py", "event_count": n,
                                **({"expect": missing[name]} if name in missing else {})},
                               indent=2) + "\n")
        sys.stderr.write("%s: %d events\n" % (name, n))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
