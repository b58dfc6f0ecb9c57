#!/usr/bin/env bash
# Append latency of the tape writer through the C ABI (c-tests/bench_latency.c,
# release build): N trades (default 10 M), paced at 1 M/s (coordinated
# omission corrected: latency from each append's intended start) and unpaced,
# rotating every 64 MiB, under the default durability (fsync at segment
# close) and `none`. Prints p50/p90/p99/p99.9/p99.99/max, the appends over
# 50 us, the appends that rotated, and (unpaced) appends/s beside write(2)
# and memcpy of the same bytes; paced runs also print the uncorrected
# percentiles (from each append's actual start). Then an unclocked
# throughput pass (no clock read per append; one call per trade, then
# floxlog_tape_writer_append_trades in calls of 256) beside write(2) and
# memcpy of the same bytes. Then append-to-tailer latency: the journal
# writer paced at 1 M/s stamps each trade with CLOCK_MONOTONIC (its intended
# append time), a tailer in another process (floxlog_tape_tail_next_trades,
# busy-spin with timeout 0, then blocking) subtracts on receipt; the same
# percentiles. A benchmark, not a test.
#
#   scripts/bench-latency.sh [--events N] [--journal|--default] [--tail-only] [WORKDIR]
#
# Each case runs the default writer and the journal writer one after the
# other (interleaved, in one run); --journal or --default runs only one.
# --tail-only runs the append-to-tailer cases only.
set -euo pipefail
EVENTS=10000000
WRITERS=(default journal)
WORK=""
APPEND=1
while [ $# -gt 0 ]; do
  case "$1" in
    --events) EVENTS=$2; shift 2 ;;
    --journal) WRITERS=(journal); shift ;;
    --default) WRITERS=(default); shift ;;
    --tail-only) APPEND=0; shift ;;
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
  [ "$APPEND" = 1 ] || break
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
for dur in close none; do
  [ "$APPEND" = 1 ] || break
  for writer in "${WRITERS[@]}"; do
    extra=()
    [ "$writer" = journal ] && extra=(--journal)
    rm -rf "$WORK/tape" "$WORK/tape-batch"
    "$WORK/bench_latency" "$WORK/tape" --events "$EVENTS" --throughput \
      --max-segment-bytes $((64 << 20)) --durability "$dur" "${extra[@]}"
  done
done
rm -rf "$WORK/tape-batch"
for tail in spin block; do
  rm -rf "$WORK/tape"
  "$WORK/bench_latency" "$WORK/tape" --events "$EVENTS" --rate 1000000 \
    --max-segment-bytes $((64 << 20)) --journal --tail "$tail"
done
rm -rf "$WORK/tape"
