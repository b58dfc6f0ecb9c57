#!/usr/bin/env bash
# Issue 21, item 4: exact time order without holding events, checked on big
# tapes (too slow for the test suite). Needs /usr/bin/time.
#   1. A 100-segment reference-profile tape of about 750 MB, timestamps
#      jittered by up to 900 ns inside segments and across every boundary:
#      `floxlog cat` in time order must be in exact order with peak RSS
#      under 256 MB.
#   2. One unsorted 5 M-trade uncompressed segment: `cat` in time order vs
#      file order (wall time), the ordering pass's share.
# Usage: scripts/bench-time-order.sh [WORKDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-$(mktemp -d)}
cargo build --release -q -p floxlog-cli
cargo build --release -q -p floxlog --example jittered_tape
BIN=target/release/floxlog
GEN=target/release/examples/jittered_tape

rm -rf "$WORK/jittered" "$WORK/one"
"$GEN" "$WORK/jittered" 100 125000
du -sh "$WORK/jittered"
/usr/bin/time -f "cat time order, 100 segments: %e s, peak RSS %M KiB" \
  "$BIN" cat --format csv "$WORK/jittered" >"$WORK/out.csv"
# Column 2 is exchange_ts_ns: never goes back.
awk -F, 'NR > 2 && $2 < prev { bad++ } NR > 1 { prev = $2; n++ } END { printf "%d events, %d out of order\n", n, bad; exit bad > 0 }' "$WORK/out.csv"
rm -f "$WORK/out.csv"
kib=$( { /usr/bin/time -f %M "$BIN" cat --format csv "$WORK/jittered" >/dev/null; } 2>&1 | tail -1)
[ "$kib" -lt $((256 << 10)) ] || { echo "peak RSS $kib KiB >= 256 MB"; exit 1; }

"$GEN" "$WORK/one" 1 5000000
du -sh "$WORK/one"
for round in 1 2 3; do
  for order in file time; do
    /usr/bin/time -f "  peak RSS %M KiB" "$GEN" --read $order "$WORK/one"
  done
done
/usr/bin/time -f "  peak RSS %M KiB" "$GEN" --read time "$WORK/jittered"
