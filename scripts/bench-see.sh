#!/usr/bin/env bash
# Issue 39, item 4: `floxlog gaps` and `floxlog report` on a 5 M-event tape,
# each beside `floxlog cat --format jsonl > /dev/null` of the same tape in the
# same run (the limit they are held to: at most 0.5x its time, since they
# decode and do not print), with peak RSS (target under 200 MB). Three rounds,
# interleaved; the medians are printed last. Needs /usr/bin/time.
# BENCH_PRIO="chrt -f 10" runs each timed command under SCHED_FIFO, so that
# other work on a small machine does not share its cores (gaps and report
# use two threads, cat one).
# Usage: scripts/bench-see.sh [WORKDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-$(mktemp -d)}
cargo build --release -q -p floxlog-cli
BIN=$PWD/target/release/floxlog
TAPE=$WORK/see-5m
# An hour of market time: 3 M trades and 2 M book deltas (plus a snapshot per
# symbol per second), LZ4, 64 MiB segments.
"$BIN" demo "$TAPE" --trades 3000000 --book-deltas 2000000 --seconds 3600 \
  --max-segment-bytes 64M >/dev/null
du -sh "$TAPE"
# One timed run: prints "SECONDS KIB".
run() { ${BENCH_PRIO:-} /usr/bin/time -f "%e %M" "$@" 2>&1 >/dev/null | tail -1; }
: >"$WORK/see.times"
for round in 1 2 3; do
  echo "cat $(run "$BIN" cat --format jsonl "$TAPE")" >>"$WORK/see.times"
  # gaps exits 1 when it finds a gap: that is an answer, not a failure.
  echo "gaps $(run sh -c '"$0" gaps "$1" --json; [ $? -le 1 ]' "$BIN" "$TAPE")" >>"$WORK/see.times"
  echo "report $(run "$BIN" report "$TAPE" -o "$WORK/report.html")" >>"$WORK/see.times"
done
cat "$WORK/see.times"
python3 - "$WORK/see.times" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, secs, kib = line.split()
    rows.setdefault(name, []).append((float(secs), int(kib)))
cat = statistics.median(s for s, _ in rows["cat"])
print("%-7s %9s %9s %12s" % ("", "median s", "x cat", "peak RSS MB"))
for name in ("cat", "gaps", "report"):
    s = statistics.median(t for t, _ in rows[name])
    mb = max(k for _, k in rows[name]) / 1024
    print("%-7s %9.2f %9.2f %12.0f" % (name, s, s / cat, mb))
PY
