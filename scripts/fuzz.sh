#!/usr/bin/env bash
# Runs every cargo-fuzz target for a bounded time (default 30 s each), seeded
# from the conformance corpus. CI runs it after the tests; run it longer by
# hand with `bash scripts/fuzz.sh 600`. A crash fails the run and leaves the
# input in fuzz/artifacts/<target>/: add it to fuzz/regressions/ under the
# naming scheme of fuzz/regressions/make.py so it stays a test.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
secs="${1:-30}"
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --version 0.13.2 --locked
fi
./seed.sh
# Stable toolchain: no sanitizer instrumentation (the core has no unsafe);
# coverage guidance and debug assertions (overflow checks) stay on.
cargo fuzz build -s none
status=0
for t in $(cargo fuzz list); do
  echo "== fuzz $t for ${secs}s"
  if ! cargo fuzz run -s none "$t" -- -max_total_time="$secs" -rss_limit_mb=2048 -print_final_stats=1 2>&1 \
      | grep -E "^#[0-9]+ +DONE|stat::number_of_executed_units|panicked|ERROR|SUMMARY|Test unit written"; then
    :
  fi
  if ls "artifacts/$t"/crash-* "artifacts/$t"/oom-* "artifacts/$t"/timeout-* >/dev/null 2>&1; then
    echo "fuzz target $t found a failing input:"; ls "artifacts/$t"; status=1
  fi
done
if [ "$status" = 0 ]; then echo "fuzz: 0 crashes"; fi
exit "$status"
