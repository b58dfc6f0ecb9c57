#!/usr/bin/env bash
# Every test of the project, as CI runs it (README's second command):
#   formatting and lints; Rust tests for the whole workspace, and for
#   floxlog-core with LZ4 compiled out; the no_std/no-alloc link proof (a
#   binary that runs a round trip) and the same round trip on a Cortex-M4F
#   under QEMU, then the C firmware's through the codec-only C library
#   (scripts/test-embedded.sh installs the target, QEMU and
#   gcc-arm-none-eabi if missing); the C/C++ suite under ctest, plainly and
#   under ASan/UBSan (scripts/test-c.sh installs cmake and friends if missing);
#   the Python package built into a virtual environment and its pytest suite
#   (scripts/test-python.sh; .venv, or FLOXLOG_VENV); the downloadable
#   conformance kit built, unpacked in an empty folder and run with the
#   independent Python reader and no Rust on PATH (scripts/test-kit.sh,
#   bounded by FLOXLOG_KIT_SECONDS, default 900).
# The conformance corpus defaults to conformance/ in the checkout;
# FLOXLOG_CONFORMANCE_DIR points every runner elsewhere.
set -euo pipefail
cd "$(dirname "$0")/.."

export FLOXLOG_CONFORMANCE_DIR="${FLOXLOG_CONFORMANCE_DIR:-$PWD/conformance}"
echo "== conformance corpus: $FLOXLOG_CONFORMANCE_DIR"

echo "== cargo fmt / clippy"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo clippy -p floxlog-core --no-default-features --all-targets -- -D warnings

echo "== cargo test (workspace)"
cargo test --workspace
echo "== cargo test (floxlog-core without LZ4)"
cargo test -p floxlog-core --no-default-features

echo "== no_std / no-alloc proof"
(cd nostd-check && cargo run --release --quiet) && echo "nostd-check: writer and reader linked without std or an allocator; round trip ok"

echo "== Cortex-M round trip under QEMU"
bash scripts/test-embedded.sh

echo "== conformance kit: packaged, unpacked, run with the Python reader and no Rust on PATH"
bash scripts/test-kit.sh

echo "== C / C++ suite (ctest)"
bash scripts/test-c.sh

echo "== Python package (pytest)"
bash scripts/test-python.sh

echo "== report in headless Chromium (at most 5 minutes)"
timeout 300 bash scripts/test-report.sh
