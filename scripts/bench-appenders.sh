#!/usr/bin/env bash
# Several appender threads into one tape (issue 34): 1, 2 and 4 threads,
# each with its own Appender, journal mode and the default writer: the
# aggregate appends/s (and its ratio to one appender's, same run) and the
# per-append latency histogram (p50 ... p99.99, max). See
# floxlog/examples/appenders_bench.rs. On a 2-core machine the 4-thread
# case measures the cost per append under contention, not scaling.
# A benchmark, not a test.
#
#   scripts/bench-appenders.sh [EVENTS]     (default 4000000 per case)
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo run --release -q -p floxlog --example appenders_bench -- "${1:-4000000}"
