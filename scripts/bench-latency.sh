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
# memcpy of the same bytes.
#
# Then the append-to-reader hand-off (c-tests/bench_handoff.c): a writer
# process sleeping to an absolute schedule at 10 kHz and 100 kHz, and
# busy-paced at 1 MHz, stamping CLOCK_MONOTONIC just before each journal
# append; a reader in another process: the shared-memory limit (release
# store / acquire spin on the same schedule, same run), then tailers
# BUSY_SPIN waiting inside next, a timeout-0 loop, SPIN_YIELD and BLOCKING
# (woken by the journal writer), the last against the limit of a sleeping
# reader (a futex wait and wake on the same shared mapping). One table: p50 .. max in ns, each p50 and
# p99 also as a ratio to the limit's at the same rate, and the reader's CPU
# (percent of a core). Each hand-off run lasts 0.5 s (HANDOFF_SECONDS) with
# a second's pause between runs (a writer that cannot keep the rate stops at
# the run's end: the "kept" column is the rate it kept): on a machine shared with other work, set
# BENCH_PRIO="chrt -f 10" to run both processes under SCHED_FIFO. A spinning
# reader then uses a whole core, past the kernel's real-time budget
# (sched_rt_runtime_us, 0.95 s a second per core), whose throttling stops it
# for ~50 ms and shows as the tail: BENCH_RT_UNTHROTTLED=1 (root) turns the
# throttling off for the hand-off runs (sched_rt_runtime_us=-1) and puts the
# old value back at exit. A benchmark, not a test.
#
#   scripts/bench-latency.sh [--events N] [--journal|--default] [--tail-only]
#                            [--appenders "1 2 4"] [WORKDIR]
#
# Each append case runs the default writer and the journal writer one after
# the other (interleaved, in one run); --journal or --default runs only one.
# --tail-only runs the hand-off only. --appenders: appender-thread counts
# for the tailer rows (default "1 2 4"; 1 is the writer's own handle, K > 1
# are K threads with a floxlog_tape_appender each, taking turns on the same
# schedule; on a 2-core machine 4 threads measure the cost of contention,
# not scaling).
set -euo pipefail
EVENTS=10000000
WRITERS=(default journal)
WORK=""
APPEND=1
APPENDERS="1 2 4"
while [ $# -gt 0 ]; do
  case "$1" in
    --events) EVENTS=$2; shift 2 ;;
    --journal) WRITERS=(journal); shift ;;
    --default) WRITERS=(default); shift ;;
    --tail-only) APPEND=0; shift ;;
    --appenders) APPENDERS=$2; shift 2 ;;
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
# shellcheck disable=SC2086
cc -O2 -std=c11 -Wall -Wextra -Iinclude ${BENCH_CFLAGS:-} -o "$WORK/bench_handoff" \
  c-tests/bench_handoff.c target/release/libfloxlog_ffi.a -lpthread -ldl -lm
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
# The hand-off: rate and pacing; HANDOFF_SECONDS of events each.
RT=/proc/sys/kernel/sched_rt_runtime_us
if [ "${BENCH_RT_UNTHROTTLED:-0}" = 1 ]; then
  old_rt=$(cat "$RT")
  trap 'echo "$old_rt" >"$RT"' EXIT
  echo -1 >"$RT"
fi
rows="$WORK/handoff.txt"
: >"$rows"
secs=${HANDOFF_SECONDS:-0.5}
for run in "10000 ''" "100000 ''" "1000000 --busy"; do
  eval "set -- $run"
  events=$(awk -v r="$1" -v s="$secs" 'BEGIN { printf "%d", r * s }')
  for mode in limit spin poll0 yield limit-futex block; do
    for k in $APPENDERS; do
      case "$mode" in limit*) [ "$k" != 1 ] && continue ;; esac
      rm -rf "$WORK/tape"
      sleep 1
      # shellcheck disable=SC2086
      ${BENCH_PRIO:-} "$WORK/bench_handoff" "$WORK/tape" --mode "$mode" --rate "$1" $2 \
        --events "$events" --appenders "$k" --seconds "$secs" | sed "s/^/$k /" >>"$rows"
    done
  done
done
rm -rf "$WORK/tape"
echo
echo "hand-off, ns (ratio to the limit at the same rate); reader CPU % of a core;"
echo "append: p50 of the writer's append call (stamp to return); kept: the rate"
echo "the writers kept (a sleeping writer cannot keep a tick shorter than its sleep)"
echo "| rate | reader | appenders | p50 | p90 | p99 | p99.9 | p99.99 | max | events | CPU | append | kept |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
# Spinning readers against the spinning limit; the blocking tailer against
# the sleeping (futex) limit.
awk '$2 ~ /^limit/ { l50[$2 $3] = $4; l99[$2 $3] = $6 }
  { base = ($2 == "block" || $2 == "limit-futex") ? "limit-futex" : "limit";
    r50 = l50[base $3] ? sprintf(" (%.1fx)", $4 / l50[base $3]) : "";
    r99 = l99[base $3] ? sprintf(" (%.1fx)", $6 / l99[base $3]) : "";
    printf "| %s | %s | %s | %s%s | %s | %s%s | %s | %s | %s | %s | %s%% | %s | %s |\n",
      $3, $2, $1, $4, r50, $5, $6, r99, $7, $8, $9, $10, $11, $12, $13 }' "$rows"
