#!/usr/bin/env bash
# floxlog beside its limits, measured in the same run, on TRADES trades
# (default 5,000,000), as one summary table: each line is a piece of work,
# floxlog's speed (M events/s), the limit it is compared with and that
# limit's speed, their ratio and the target ratio. Not part of the test
# suite; the machine should be otherwise idle (nothing here is a pass/fail
# on speed: "met" only compares the ratio with the target).
#
#   scripts/bench-limits.sh [TRADES] [WORKDIR]
#
# Steps (any failure, or a number missing from an output, stops the run
# with a non-zero exit: no line is ever printed without its measurement):
#   1. cargo build --release -p floxlog-ffi -p floxlog-cli;
#   2. floxlog_bench (c-tests/bench.c, CMake Release build under the cargo
#      target dir): tape writer vs write(2) of the finished bytes, tape
#      reader (CRC on and off; next, next_batch, next_trades) vs mmap + read
#      every 8-byte word of the same file, C ABI batch vs per-call reads.
#      The tape read (one segment, not flagged Sorted: the reference
#      profile) is written by floxlog_tape_writer, then written over with
#      its own bytes in 4 KiB write(2) calls (bench.c rewrite_small), as a
#      C++ recorder writing through stdio leaves it: the page cache holds it
#      in 4 KiB folios, as the issue's tape; steps 4 and 5 read that file;
#   3. cargo bench --bench codec (floxlog-core, --features std): LZ4 encode
#      vs its compressor (lz4_compress, liblz4's bytes) alone on the same
#      blocks, LZ4 decode vs lz4_flex
#      decompress + the fastest CRC32, the reader's CRC32 path vs the
#      fastest CRC32 on the 48-byte trade payloads;
#   4. the floxlog CLI: `verify` on the tapes floxlog_bench recorded (the
#      same files as its mmap limit), and on multi-segment tapes made with
#      `floxlog demo` (uncompressed and LZ4), `verify -j 1` vs `-j N` and
#      `export -j 1` vs `-j N` (zstd Parquet, the default), N = nproc;
#      page cache warm, outputs removed between runs;
#   5. Python: `tape.trades(order="file")` (every column) and
#      `tape.trades()` (time order) on floxlog_bench's uncompressed tape,
#      wall time of the call, page cache warm, the two interleaved;
#   6. after the summary, issue 21 item 4's memory check: a 100-segment
#      reference-profile tape of about 750 MB, timestamps jittered across
#      segment boundaries (floxlog/examples/jittered_tape.rs), read in time
#      order by `floxlog cat`, the C tape reader (floxlog_bench with
#      FLOXLOG_BENCH_READ_TIME) and Python (`batches("trade")`), each
#      checked to be in exact time order and to peak under 256 MB of RSS
#      (/usr/bin/time -f %M); a failure is the script's exit status.
#
# Every measurement is the median of ROUNDS rounds (FLOXLOG_BENCH_ROUNDS,
# default 7) in which the variants compared run in turn (interleaved: a
# slow spell of the machine falls on all of them alike); the codec bench
# (step 3) takes the median of 7 runs of each line.
#
# WORKDIR (default: a temporary directory under the cargo target dir,
# removed at the end) holds the logs of each step; the tapes written there
# are removed at the end either way. Environment: CARGO_TARGET_DIR,
# FLOXLOG_BENCH_SEGMENT_BYTES (demo tapes' segment bound, default 64M),
# FLOXLOG_BENCH_ROUNDS, FLOXLOG_BENCH_PYTHON (a Python with the test
# dependencies; default .venv/bin/python, made by scripts/test-python.sh;
# the package is installed into it from this tree first unless
# FLOXLOG_BENCH_PYTHON_INSTALL=0), FLOXLOG_BENCH_JITTERED_TRADES (trades per
# segment of step 6's tape, default 125000), FLOXLOG_BENCH_RSS_ONLY=1 (steps
# 1 and 6 only: the memory check alone, a few minutes).
set -euo pipefail

TRADES=${1:-5000000}
cd "$(dirname "$0")/.."
ROOT=$PWD
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
TARGET=$CARGO_TARGET_DIR
JOBS=$(nproc)
SEGMENT_BYTES=${FLOXLOG_BENCH_SEGMENT_BYTES:-64M}
ROUNDS=${FLOXLOG_BENCH_ROUNDS:-7}
# Trades per segment of step 6's tape (smaller only to try the script).
JT_PER_SEGMENT=${FLOXLOG_BENCH_JITTERED_TRADES:-125000}
RSS_ONLY=0
[ "${FLOXLOG_BENCH_RSS_ONLY:-0}" = 1 ] && RSS_ONLY=1
BIN=$TARGET/release/floxlog
PY=${FLOXLOG_BENCH_PYTHON:-$ROOT/.venv/bin/python}

case $ROUNDS in
  '' | *[!0-9]* | 0)
    echo "FLOXLOG_BENCH_ROUNDS must be a positive integer" >&2
    exit 2
    ;;
esac
[ -x "$PY" ] || {
  echo "no Python at $PY: run scripts/test-python.sh once (it makes .venv) or set FLOXLOG_BENCH_PYTHON" >&2
  exit 2
}
[ -x /usr/bin/time ] || {
  echo "needs /usr/bin/time (GNU time) for the peak RSS check" >&2
  exit 2
}

case $TRADES in
  '' | *[!0-9]* | 0)
    echo "usage: $0 [TRADES] [WORKDIR]  (TRADES a positive integer)" >&2
    exit 2
    ;;
esac

mkdir -p "$TARGET"
if [ $# -ge 2 ]; then
  WORK=$2
  mkdir -p "$WORK"
  KEEP_WORK=1
else
  WORK=$(mktemp -d "$TARGET/bench-limits.XXXXXX")
  KEEP_WORK=0
fi
WORK=$(cd "$WORK" && pwd)
DATA=$WORK/data
cleanup() {
  rm -rf "$DATA"
  if [ "$KEEP_WORK" = 0 ]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT
rm -rf "$DATA"
mkdir -p "$DATA"

step() { printf '\n== %s\n' "$*" >&2; }
die() {
  echo "bench-limits: $*" >&2
  exit 1
}

# Runs "$@" with its output in LOG; on failure shows the log and stops.
quiet() {
  local log=$1
  shift
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    die "failed: $*"
  fi
}

# Times the functions run_KEY for every KEY given, ROUNDS rounds, every
# round running each once in turn (PRE, a function name or :, untimed
# before each run; output discarded); prints "KEY SECONDS" lines, SECONDS
# the median of KEY's rounds.
interleaved() {
  local pre=$1
  shift
  local -A times=()
  local r k s e
  for ((r = 0; r < ROUNDS; r++)); do
    for k in "$@"; do
      "$pre"
      s=$(date +%s%N)
      quiet "$WORK/last-run.log" "run_$k"
      e=$(date +%s%N)
      times[$k]+="$((e - s)) "
    done
  done
  for k in "$@"; do
    # shellcheck disable=SC2086 # the list of times, split on purpose
    echo "$k $(python3 -c 'import statistics, sys; print(statistics.median(int(x) for x in sys.argv[1:]) / 1e9)' ${times[$k]})"
  done
}

# Events in a tape, from its segment headers.
tape_events() {
  "$BIN" inspect --json --quick "$1" | python3 -c '
import json, sys
print(sum(s["header"]["event_count"] for s in json.load(sys.stdin)["segments"]))'
}

tape_segments() {
  find "$1" -maxdepth 1 -name '*.floxlog' | wc -l
}

# Reads a tape's files once so the timed runs start from a warm cache.
warm() {
  cat "$1"/*.floxlog >/dev/null
}

# --- 1. build -------------------------------------------------------------
step "cargo build --release -p floxlog-ffi -p floxlog-cli"
cargo build --release -q -p floxlog-ffi -p floxlog-cli
if command -v cbindgen >/dev/null; then
  # The C bench compiles against include/floxlog.h: it must match the Rust.
  cbindgen --quiet --config floxlog-ffi/cbindgen.toml --crate floxlog-ffi --output "$WORK/floxlog.h"
  cmp -s "$WORK/floxlog.h" include/floxlog.h ||
    die "include/floxlog.h is out of date: cbindgen --quiet --config floxlog-ffi/cbindgen.toml --crate floxlog-ffi --output include/floxlog.h"
fi

step "floxlog_bench (CMake, Release)"
CMAKE_DIR=$TARGET/bench-limits-cmake
quiet "$WORK/cmake-configure.log" cmake -S . -B "$CMAKE_DIR" -DCMAKE_BUILD_TYPE=Release \
  -DFLOXLOG_CARGO_TARGET_DIR="$TARGET"
quiet "$WORK/cmake-build.log" cmake --build "$CMAKE_DIR" --target floxlog_bench -j "$JOBS"
C_BENCH=$CMAKE_DIR/c-tests/floxlog_bench
[ -x "$C_BENCH" ] || die "no $C_BENCH after the build"

# The Python package, for steps 5 and 6.
if [ "${FLOXLOG_BENCH_PYTHON_INSTALL:-1}" != 0 ]; then
  step "the Python package into $PY (release build of this tree)"
  VENV_DIR=$(cd "$(dirname "$PY")/.." && pwd)
  VIRTUAL_ENV=$VENV_DIR PATH="$VENV_DIR/bin:$PATH" quiet "$WORK/pip.log" "$PY" -m pip install \
    --quiet --disable-pip-version-check --no-build-isolation --no-deps --force-reinstall ./python
fi

if [ "$RSS_ONLY" = 0 ]; then
# --- 2. C ABI --------------------------------------------------------------
step "floxlog_bench, $TRADES trades (a few minutes)"
TMPDIR=$DATA FLOXLOG_BENCH_TAPE_EVENTS=$TRADES FLOXLOG_BENCH_RAM_EVENTS=$TRADES \
  FLOXLOG_BENCH_TAPE_ROUNDS=$ROUNDS FLOXLOG_BENCH_KEEP=1 "$C_BENCH" | tee "$WORK/c-bench.log"

# The same C bench with the SIGBUS guard off (plain mmap): what the guard
# against files truncated under a reader costs (issue 23, item 1).
step "floxlog_bench again, FLOXLOG_SIGBUS_GUARD=0 (plain mmap)"
TMPDIR=$DATA FLOXLOG_BENCH_TAPE_EVENTS=$TRADES FLOXLOG_BENCH_RAM_EVENTS=$TRADES \
  FLOXLOG_BENCH_TAPE_ROUNDS=$ROUNDS FLOXLOG_SIGBUS_GUARD=0 "$C_BENCH" | tee "$WORK/c-bench-plain.log"

# --- 3. codec ------------------------------------------------------------
step "cargo bench -p floxlog-core --bench codec --features std, $TRADES trades"
FLOXLOG_BENCH_TRADES=$TRADES cargo bench -q -p floxlog-core --bench codec --features std |
  tee "$WORK/codec-bench.log"

# --- 4. CLI --------------------------------------------------------------
# KEY SECONDS EVENTS lines (or KEY unavailable) for the summary.
CLI=$WORK/cli.txt
: >"$CLI"
step "floxlog verify on floxlog_bench's tapes"
declare -A KEPT
for comp in uncompressed LZ4; do
  dir=$(sed -n "s/^kept tape ($comp): //p" "$WORK/c-bench.log")
  if [ -z "$dir" ] || [ ! -d "$dir" ]; then die "floxlog_bench did not keep its $comp tape"; fi
  KEPT[$comp]=$dir
  warm "$dir"
done
run_verify_same_uncompressed() { "$BIN" verify "${KEPT[uncompressed]}"; }
run_verify_same_LZ4() { "$BIN" verify "${KEPT[LZ4]}"; }
interleaved : verify_same_uncompressed verify_same_LZ4 | while read -r key t; do
  echo "$key $t $(tape_events "${KEPT[${key#verify_same_}]}")" | tee -a "$CLI"
done

VERIFY_HELP=$("$BIN" verify --help)
EXPORT_HELP=$("$BIN" export --help)
grep -q -- --jobs <<<"$EXPORT_HELP" || die "floxlog export has no --jobs"
HAVE_VERIFY_JOBS=0
if grep -q -- --jobs <<<"$VERIFY_HELP"; then HAVE_VERIFY_JOBS=1; fi

OUT=$DATA/export-out
clear_out() { rm -rf "$OUT"; }
for comp in none lz4; do
  tape=$DATA/demo-$comp
  step "floxlog demo: $TRADES trades, $comp, segments of at most $SEGMENT_BYTES"
  quiet "$WORK/demo-$comp.log" "$BIN" demo "$tape" --trades "$TRADES" --book-deltas 0 \
    --seconds 3600 --max-segment-bytes "$SEGMENT_BYTES" --compression "$comp"
  events=$(tape_events "$tape")
  segs=$(tape_segments "$tape")
  [ "$segs" -ge 2 ] || die "the $comp demo tape has $segs segment(s); lower FLOXLOG_BENCH_SEGMENT_BYTES"
  echo "segments_$comp $segs" | tee -a "$CLI"
  warm "$tape"
  run_verify_j1() { "$BIN" verify -j 1 "$tape"; }
  run_verify_jN() { "$BIN" verify -j "$JOBS" "$tape"; }
  run_export_j1() { "$BIN" export -j 1 -o "$OUT" "$tape"; }
  run_export_jN() { "$BIN" export -j "$JOBS" -o "$OUT" "$tape"; }
  keys=(export_j1 export_jN)
  if [ "$HAVE_VERIFY_JOBS" = 1 ]; then
    keys=(verify_j1 verify_jN "${keys[@]}")
  else
    echo "verify_${comp}_jobs unavailable" | tee -a "$CLI"
  fi
  # The export's output is removed (untimed) before each run.
  interleaved clear_out "${keys[@]}" | while read -r key t; do
    what=${key%_j*}
    j=${key##*_j}
    [ "$j" = N ] && j=$JOBS
    echo "${what}_${comp}_j$j $t $events" | tee -a "$CLI"
  done
  clear_out
  rm -rf "$tape"
done

# --- 5. Python --------------------------------------------------------------
step "Python tape.trades(), file and time order, on floxlog_bench's uncompressed tape"
warm "${KEPT[uncompressed]}"
"$PY" - "${KEPT[uncompressed]}" "$ROUNDS" "$TRADES" <<'PY' | tee -a "$CLI"
import statistics
import sys
import time

import floxlog

tape, rounds, want = floxlog.open(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
times = {"file": [], "time": []}
for _ in range(rounds):
    for order in times:
        t0 = time.perf_counter()
        table = tape.trades(order=order)
        times[order].append(time.perf_counter() - t0)
        if table.num_rows != want or table.num_columns != 14:
            sys.exit(f"trades(order={order!r}): {table.num_rows} rows, {table.num_columns} columns")
        del table
for order, t in times.items():
    print(f"python_trades_{order} {statistics.median(t)} {want}")
PY
# The C bench's tapes are not needed any more (disk for step 6).
rm -rf "${KEPT[uncompressed]}" "${KEPT[LZ4]}"

# --- summary ---------------------------------------------------------------
step "summary"
python3 - "$WORK/c-bench.log" "$WORK/codec-bench.log" "$CLI" "$TRADES" "$JOBS" "$WORK/c-bench-plain.log" <<'PY'
import re
import sys

c_log, codec_log, cli_log, trades, jobs, plain_log = sys.argv[1:]
LINE = re.compile(r"^(?P<name>\S.*?)\s+(?P<mev>[0-9.]+) M ev/s")


def sections(path):
    """{section: {line name: M ev/s}}; sections from the `-- ...` headers."""
    out, cur = {}, None
    for raw in open(path):
        line = raw.rstrip("\n")
        if line.startswith("-- "):
            h = line[3:]
            if "tape API" in h:
                cur = "tape"
            elif "in cache" in h:
                cur = "cache"
            elif "from RAM" in h:
                cur = "ram"
            elif h.startswith("CRC32 over"):
                cur = "crc"
            else:
                cur = h
            out.setdefault(cur, {})
            continue
        m = LINE.match(line.strip())
        if m and cur is not None:
            out[cur][m["name"]] = float(m["mev"])
    return out


def get(secs, sec, name, prefix=False):
    """(full name, M ev/s); fails loudly if the line is missing."""
    lines = secs.get(sec, {})
    for k, v in lines.items():
        if k == name or (prefix and k.startswith(name)):
            return k, v
    sys.exit(f"bench-limits: no line {name!r} in section {sec!r} of the bench output")


C = sections(c_log)
R = sections(codec_log)
P = sections(plain_log)
cli = {}
for raw in open(cli_log):
    f = raw.split()
    cli[f[0]] = f[1:]


def cli_mev(key):
    if key not in cli:
        sys.exit(f"bench-limits: no CLI measurement {key!r}")
    t, ev = float(cli[key][0]), int(cli[key][1])
    if t <= 0:
        sys.exit(f"bench-limits: bad time for {key!r}")
    return ev / t / 1e6


rows = []  # (work, floxlog, limit name, limit, target) or a heading string


def row(work, mev, lim_name, lim, target):
    rows.append((work, mev, lim_name, lim, target))


def T(name):
    """A tape API line of floxlog_bench."""
    return get(C, "tape", name)[1]


rows.append("0. issue 21, item 5 targets (medians of interleaved rounds, this run)")
mlim0 = T("limit: mmap + sum u64 words")
row("next_trades 1024, file order, CRC checked", T("tape read next_trades 1024, file order"),
    "mmap + touch", mlim0, 0.70)
row("next_trades 1024, file order, no CRC", T("tape read next_trades 1024, file order, no CRC"),
    "mmap + touch", mlim0, 0.85)
row("next (per event), file order, CRC checked", T("tape read next, file order"),
    "mmap + touch", mlim0, 0.35)
row("next_trades 1024, time order (unsorted), CRC", T("tape read next_trades 1024, time order"),
    "same, file order", T("tape read next_trades 1024, file order"), 0.65)
dn, dl = get(R, "ram", "decompress + CRC", prefix=True)
row("LZ4 next_trades 1024, file order, CRC checked", T("LZ4 tape read next_trades 1024, file order"),
    "decompress + " + ("crc32_x4" if "x4" in dn else "crc32"), dl, 0.85)
row("Python tape.trades(order='file'), every column", cli_mev("python_trades_file"),
    "40 M trades/s (target)", 40.0, 1.0)
row("Python tape.trades() (time order)", cli_mev("python_trades_time"),
    "Python, file order", cli_mev("python_trades_file"), None)

rows.append("1. write, uncompressed (tape writer, C ABI, open..close) vs write(2) of the finished bytes")
wlim = T("limit: write(2)")
for mode in ("per call", "1024/call"):
    row(f"tape write {mode}", T(f"tape write {mode}, durability none"), "write(2)", wlim, 0.80)

rows.append("2. write LZ4 vs its compressor (lz4_compress) alone on the same blocks")
zlim = get(R, "ram", "lz4_compress alone")[1]
row("LZ4 tape write 1024/call (C ABI)", T("LZ4 tape write 1024/call, durability none"),
    "lz4_compress", zlim, 0.85)
row("LZ4 tape write per call (C ABI)", T("LZ4 tape write per call, durability none"),
    "lz4_compress", zlim, 0.85)
row("LZ4 codec encode, in memory (Rust)", get(R, "ram", "LZ4 encode trades (1000/block)")[1],
    "lz4_compress", zlim, 0.85)

mlim = T("limit: mmap + sum u64 words")
modes = ("next", "next_batch 1024", "next_trades 1024")
for crc, target in (("", 0.90), (", no CRC", 0.95)):
    if crc:
        rows.append("4. read without CRC (verify_crc = 0) vs mmap + read every 8-byte word")
    else:
        rows.append("3. read, every CRC checked, vs mmap + read every 8-byte word of the same file")
    for order in ("file", "time"):
        for mode in modes:
            row(f"tape read {mode}, {order} order{crc}", T(f"tape read {mode}, {order} order{crc}"),
                "mmap + touch", mlim, target)
    if not crc:
        row("floxlog verify (CLI), same file", cli_mev("verify_same_uncompressed"),
            "mmap + touch", mlim, target)

rows.append("5. read LZ4, CRC checked, vs lz4_flex decompress + fastest CRC32 of the payloads")
def short(crc):
    """A short name for a CRC32 candidate line of the codec bench."""
    if "x4" in crc:
        return "crc32_x4"
    return "crc32fast" if "crc32fast" in crc else "core crc32"


dname, dlim = get(R, "ram", "decompress + CRC", prefix=True)
dname = "decompress + " + short(dname)
for order in ("file", "time"):
    for mode in modes:
        row(f"LZ4 tape read {mode}, {order} order", T(f"LZ4 tape read {mode}, {order} order"),
            dname, dlim, 0.85)
row("LZ4 codec decode, in memory (Rust)", get(R, "ram", "LZ4 decode trades (CRC verified)")[1],
    dname, dlim, 0.85)
row("floxlog verify (CLI), same LZ4 file", cli_mev("verify_same_LZ4"), dname, dlim, 0.85)

rows.append("6. C ABI batch read vs per-call read (CRC checked; ratio = speedup)")
for order in ("file", "time"):
    per = T(f"tape read next, {order} order")
    for mode in modes[1:]:
        row(f"tape {mode} vs next, {order} order", T(f"tape read {mode}, {order} order"),
            "tape next", per, 1.30)
per = get(C, "ram", "decode trades (CRC verified)")[1]
row("codec reader next_batch 256 vs next", get(C, "ram", "decode trades (verified, batch)")[1],
    "reader next", per, 1.30)
row("codec reader next_trades 256 vs next", get(C, "ram", "decode trades (next_trades)")[1],
    "reader next", per, 1.30)

rows.append(f"7. 1 vs {jobs} threads on multi-segment demo tapes (ratio = speedup)")
for comp in ("none", "lz4"):
    segs = cli.get(f"segments_{comp}", ["?"])[0]
    tag = "uncompressed" if comp == "none" else "LZ4"
    if f"verify_{comp}_jobs" in cli:
        rows.append(f"   verify -j: not available in this build ({tag})")
    else:
        row(f"verify -j {jobs}, {tag}, {segs} segments", cli_mev(f"verify_{comp}_j{jobs}"),
            "verify -j 1", cli_mev(f"verify_{comp}_j1"), 1.80)
    row(f"export -j {jobs} (zstd parquet), {tag}, {segs} seg", cli_mev(f"export_{comp}_j{jobs}"),
        "export -j 1", cli_mev(f"export_{comp}_j1"), 1.80)

rows.append("8. SIGBUS guard (default) vs plain mmap (FLOXLOG_SIGBUS_GUARD=0), same reads (ratio = cost)")
for name in ("tape read next_trades 1024, file order", "tape read next, file order",
             "LZ4 tape read next_trades 1024, file order"):
    row(name, T(name), "plain mmap", get(P, "tape", name)[1], 0.97)

rows.append("CRC32 of every 48-byte trade payload vs the fastest CRC32 here")
cname, clim = get(R, "crc", "limit: fastest CRC", prefix=True)
cname = "fastest: " + short(cname)
row("reader's CRC path (x4 over frames, checked)",
    get(R, "crc", "crc32 48B: reader path (x8, checked)")[1], cname, clim, None)

W = 50


print(f"floxlog vs its limits, {int(trades):,} trades, M events/s (higher is better); "
      f"ratio = floxlog / limit, from the speeds as the benches print them")
print(f"{'work':<{W}} {'floxlog':>8}  {'limit':<28} {'limit':>8} {'ratio':>6}  {'target':>7}  met")
for r in rows:
    if isinstance(r, str):
        print(r)
        continue
    work, mev, lname, lim, target = r
    if lim <= 0 or mev <= 0:
        sys.exit(f"bench-limits: a zero speed on {work!r}")
    ratio = mev / lim
    tgt = f">={target:.2f}" if target is not None else "-"
    met = "-" if target is None else ("yes" if ratio >= target else "NO")
    print(f"  {work:<{W - 2}} {mev:8.1f}  {lname:<28} {lim:8.1f} {ratio:6.2f}  {tgt:>7}  {met}")
# Time order is the ordering pass (on a segment in order: the in-order scan)
# and then the same read as file order: the pass's share of its time.
tt, tf = T("tape read next_trades 1024, time order"), T("tape read next_trades 1024, file order")
print(f"time order, next_trades, CRC: the ordering pass takes {100 * (1 - tt / tf):.0f}% of the read "
      f"(1 - time-order speed / file-order speed)")
PY
fi # RSS_ONLY

# --- 6. issue 21, item 4: time order in bounded memory ------------------------
step "a 100-segment jittered reference-profile tape (~750 MB), read in time order: peak RSS < 256 MB"
cargo build --release -q -p floxlog --example jittered_tape
JT=$DATA/jittered
quiet "$WORK/jittered.log" "$TARGET/release/examples/jittered_tape" "$JT" 100 "$JT_PER_SEGMENT"
JT_MB=$(du -sm "$JT" | cut -f1)
JT_EVENTS=$(tape_events "$JT")
echo "jittered tape: $(tape_segments "$JT") segments, $JT_MB MB, $JT_EVENTS trades"
warm "$JT"
LIMIT_KIB=$((256 << 10))
RSS_FAILED=0
# rss NAME KIB: one line of the check; a peak at or over the bound fails the
# script (after every reader has been tried).
rss() {
  local verdict=ok
  if [ "$2" -ge "$LIMIT_KIB" ]; then
    verdict="FAILED (>= 256 MB)"
    RSS_FAILED=1
  fi
  printf '  %-52s peak RSS %7.1f MB  %s\n' "$1" "$(python3 -c "print($2 / 1024)")" "$verdict"
}
# floxlog cat (CSV): every exchange_ts_ns (column 2) at or after the last.
/usr/bin/time -f %M -o "$WORK/rss-cat" "$BIN" cat --format csv "$JT" |
  awk -F, -v want="$JT_EVENTS" 'NR > 2 && $2 < prev { bad++ } NR > 1 { prev = $2; n++ }
    END { if (bad > 0 || n != want) { printf "cat: %d events, %d out of order\n", n, bad; exit 1 } }' ||
  die "floxlog cat of the jittered tape is not in exact time order (or failed)"
CAT_KIB=$(tail -1 "$WORK/rss-cat")
/usr/bin/time -f %M -o "$WORK/rss-c" env FLOXLOG_BENCH_READ_TIME="$JT" "$C_BENCH" >"$WORK/c-time.log" ||
  { cat "$WORK/c-time.log" >&2; die "the C tape reader's time-order read of the jittered tape failed"; }
C_KIB=$(tail -1 "$WORK/rss-c")
/usr/bin/time -f %M -o "$WORK/rss-py" "$PY" - "$JT" "$JT_EVENTS" <<'PY' ||
import sys

import floxlog
import numpy as np

n, back, last = 0, 0, None
for b in floxlog.open(sys.argv[1]).batches("trade"):
    ts = b.column("exchange_ts_ns").to_numpy()
    back += int((np.diff(ts) < 0).sum()) + int(last is not None and len(ts) > 0 and ts[0] < last)
    if len(ts):
        last = ts[-1]
    n += len(ts)
if back or n != int(sys.argv[2]):
    sys.exit(f"Python: {n} trades, {back} going back")
PY
  die "Python's time-order read of the jittered tape failed"
PY_KIB=$(tail -1 "$WORK/rss-py")
echo
echo "issue 21, item 4: $JT_MB MB, 100 segments, $JT_EVENTS trades, read in exact time order"
rss "floxlog cat --format csv (time order)" "$CAT_KIB"
rss "C: floxlog_tape_reader_next_trades, time order" "$C_KIB"
rss "Python: tape.batches(\"trade\") (time order)" "$PY_KIB"
rm -rf "$JT"
[ "$RSS_FAILED" = 0 ] || die "a time-order read of the jittered tape peaked at or over 256 MB of RSS"
if [ "$KEEP_WORK" = 1 ]; then echo "logs: $WORK" >&2; fi
