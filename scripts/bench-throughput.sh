#!/usr/bin/env bash
# Throughput of `floxlog cat --format jsonl` and `floxlog verify` on a tape of
# N trades (default 5,000,000), release build. Not part of the test suite.
#
#   scripts/bench-throughput.sh [TRADES] [WORKDIR]
set -euo pipefail
TRADES=${1:-5000000}
WORK=${2:-$(mktemp -d)}
cd "$(dirname "$0")/.."
cargo build --release -q -p floxlog-cli
BIN=target/release/floxlog
for comp in none lz4; do
  TAPE="$WORK/bench-$comp"
  rm -rf "$TAPE"
  "$BIN" demo "$TAPE" --trades "$TRADES" --book-deltas 0 --seconds 3600 \
    --compression "$comp" --max-segment-bytes 256M > /dev/null
  BYTES=$(du -sb "$TAPE" | cut -f1)
  EVENTS=$("$BIN" inspect --json --quick "$TAPE" | python3 -c 'import json,sys; print(sum(s["header"]["event_count"] for s in json.load(sys.stdin)["segments"]))')
  OUT=$("$BIN" cat --format jsonl "$TAPE" | wc -c)
  for cmd in "cat --format jsonl" "cat --format jsonl --file-order" "verify"; do
    best=""
    for _ in 1 2 3; do
      start=$(date +%s.%N)
      # shellcheck disable=SC2086
      "$BIN" $cmd "$TAPE" > /dev/null
      end=$(date +%s.%N)
      t=$(python3 -c "print($end - $start)")
      best=$(python3 -c "print(min(float(x) for x in '$best $t'.split()))")
    done
    python3 - "$comp" "$cmd" "$best" "$EVENTS" "$BYTES" "$OUT" <<'PY'
import sys
comp, cmd, t, ev, b, out = sys.argv[1:]
t = float(t)
line = f"{comp:5} {cmd:32} {int(ev):>9} events {int(b)/1e6:8.1f} MB tape, best of 3 {t:6.2f}s: {int(ev)/t/1e6:6.2f} M events/s, {int(b)/t/1e6:7.1f} MB/s of tape"
if cmd.startswith("cat"):
    line += f", {int(out)/t/1e6:7.1f} MB/s of JSON"
print(line)
PY
  done
done
