#!/usr/bin/env bash
# Append latency of the tape writer through the C ABI (c-tests/bench_latency.c,
# release build): N trades (default 10 M), paced at 1 M/s (coordinated
# omission corrected: latency from each append's intended start) and unpaced,
# rotating every 64 MiB, under the default durability (fsync at segment
# close) and `none`. Prints p50/p90/p99/p99.9/p99.99/max, the appends over
# 50 us, the appends that rotated, and (unpaced) appends/s beside write(2)
# and memcpy of the same bytes. A benchmark, not a test.
#
#   scripts/bench-latency.sh [--events N] [--journal|--default] [WORKDIR]
#
# Each case runs the default writer and the journal writer one after the
# other (interleaved, in one run); --journal or --default runs only one.
set -euo pipefail
EVENTS=10000000
WRITERS=(default journal)
WORK=""
while [ $# -gt 0 ]; do
  case "$1" in
    --events) EVENTS=$2; shift 2 ;;
    --journal) WRITERS=(journal); shift ;;
    --default) WRITERS=(default); shift ;;
    *) WORK=$1; shift ;;
  esac
done
WORK=${WORK:-$(mktemp -d)}
mkdir -p "$WORK"
cd "$(dirname "$0")/.."
cargo build --release -q -p floxlog-ffi
# shellcheck disable=SC2086
cc -O2 -std=c11 -Wall -Wextra -Iinclude ${BENCH_CFLAGS:-} -o "$WORK/bench_latency" \
  c-tests/bench_latency.c target/release/libfloxlog_ffi.a -lpthread -ldl -lm
for dur in close none; do
  for pace in "--rate 1000000" ""; do
    for writer in "${WRITERS[@]}"; do
      extra=()
      [ "$writer" = journal ] && extra=(--journal)
      rm -rf "$WORK/tape"
      # shellcheck disable=SC2086
      "$WORK/bench_latency" "$WORK/tape" --events "$EVENTS" $pace \
        --max-segment-bytes $((64 << 20)) --durability "$dur" "${extra[@]}"
    done
  done
done
rm -rf "$WORK/tape"
