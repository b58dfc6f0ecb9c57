#!/usr/bin/env bash
# Tests the C ABI (floxlog-ffi) from C and C++:
#   1. installs what is missing (cmake, a C++ compiler, clang++ for the
#      floxlog.hpp check, pkg-config, liblz4 and nlohmann-json development
#      files; cbindgen, pinned);
#   2. regenerates include/floxlog.h and fails if it differs from the
#      committed one;
#   3. builds with CMake into build/ and runs ctest (C/C++ API tests,
#      layout checks, LZ4 cross-check against liblz4, the conformance
#      corpus through the C ABI and as tapes through the C++ wrapper
#      floxlog.hpp, install + consumer);
#   4. builds again into build-asan/ with AddressSanitizer and
#      UndefinedBehaviorSanitizer on the C/C++ side and runs ctest again.
#
# Environment: FLOXLOG_CONFORMANCE_DIR (default conformance/ in the checkout),
# SKIP_SANITIZERS=1 to skip step 4 (local iteration only).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
CBINDGEN_VERSION=0.29.4
CORPUS=${FLOXLOG_CONFORMANCE_DIR:-$ROOT/conformance}
JOBS=$(nproc 2>/dev/null || echo 2)
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

. scripts/lib.sh

# --- 1. tools -----------------------------------------------------------
missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v c++ >/dev/null || missing+=(g++)
command -v clang++ >/dev/null || missing+=(clang)
command -v pkg-config >/dev/null || missing+=(pkg-config)
[ -e /usr/include/lz4.h ] || missing+=(liblz4-dev)
[ -e /usr/include/nlohmann/json.hpp ] || missing+=(nlohmann-json3-dev)
apt_install "${missing[@]}"
if [ "$(cbindgen --version 2>/dev/null || true)" != "cbindgen $CBINDGEN_VERSION" ]; then
  step "installing cbindgen $CBINDGEN_VERSION"
  cargo install cbindgen --version "$CBINDGEN_VERSION" --locked --quiet
fi

# --- 2. header ----------------------------------------------------------
step "regenerating include/floxlog.h"
cbindgen --quiet --config floxlog-ffi/cbindgen.toml --crate floxlog-ffi --output include/floxlog.h
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  if ! git diff --exit-code -- include/floxlog.h; then
    echo "include/floxlog.h is out of date: commit the regenerated header" >&2
    exit 1
  fi
fi

# --- 3. build and test --------------------------------------------------
step "cmake build/ + ctest"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DFLOXLOG_CONFORMANCE_DIR="$CORPUS" >/dev/null
cmake --build build -j "$JOBS"
(cd build && ctest --output-on-failure)

# --- 4. sanitizers ------------------------------------------------------
if [ "${SKIP_SANITIZERS:-0}" != 1 ]; then
  step "cmake build-asan/ (-fsanitize=address,undefined) + ctest"
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DFLOXLOG_SANITIZE=ON \
    -DFLOXLOG_CONFORMANCE_DIR="$CORPUS" >/dev/null
  cmake --build build-asan -j "$JOBS"
  (cd build-asan &&
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --output-on-failure)
fi
