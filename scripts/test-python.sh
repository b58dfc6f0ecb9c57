#!/usr/bin/env bash
# Tests the Python package (python/):
#   1. installs what is missing to make a virtual environment (Debian's
#      python3-venv; python3 itself if there is none) and the Java 17
#      runtime PySpark needs (openjdk-17-jre-headless);
#   2. creates the virtual environment (default .venv at the repository
#      root; FLOXLOG_VENV overrides) and installs the pinned build and test
#      dependencies (python/requirements-test.txt);
#   3. builds the package's abi3 wheel once, in release mode (`pip wheel
#      ./python` through maturin, with cargo's shared target directory),
#      installs it, and builds the floxlog tool the tests compare against;
#   4. runs pytest over python/tests (the conformance corpus, round trips,
#      filters, Arrow streams into pyarrow, polars and DuckDB, numpy,
#      inspect/verify, errors; against the tool's output).
#
# Environment: FLOXLOG_CONFORMANCE_DIR (default conformance/ in the checkout),
# FLOXLOG_VENV (default .venv), CARGO_TARGET_DIR (default target/),
# PYTHON (default python3). Extra arguments go to pytest.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
VENV=${FLOXLOG_VENV:-$ROOT/.venv}
PYTHON=${PYTHON:-python3}
export FLOXLOG_CONFORMANCE_DIR="${FLOXLOG_CONFORMANCE_DIR:-$ROOT/conformance}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

. scripts/lib.sh

# --- 1. tools -----------------------------------------------------------
missing=()
if ! command -v "$PYTHON" >/dev/null; then
  missing+=(python3 python3-venv)
elif ! "$PYTHON" -c 'import venv, ensurepip' 2>/dev/null; then
  missing+=(python3-venv)
fi
# PySpark (tests/test_spark.py) runs on a Java 17 runtime.
command -v java >/dev/null || missing+=(openjdk-17-jre-headless)
if [ ${#missing[@]} -gt 0 ]; then
  apt_install "${missing[@]}"
  case " ${missing[*]} " in *" python3-venv "*) PYTHON=python3 ;; esac
fi
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' || {
  echo "the Python package needs Python >= 3.10; $PYTHON is $("$PYTHON" --version)" >&2
  exit 1
}

# --- 2. virtual environment ---------------------------------------------
if [ ! -x "$VENV/bin/python" ]; then
  step "creating the virtual environment $VENV"
  "$PYTHON" -m venv "$VENV"
fi
# Keep it out of git wherever it is.
[ -e "$VENV/.gitignore" ] || printf '*\n' > "$VENV/.gitignore"
PY="$VENV/bin/python"
# As if activated: the build backend runs the environment's `maturin`.
export VIRTUAL_ENV="$VENV" PATH="$VENV/bin:$PATH"
step "installing the pinned test dependencies"
"$PY" -m pip install --quiet --disable-pip-version-check -r python/requirements-test.txt

# --- 3. build -----------------------------------------------------------
step "building the package's wheel (release) and installing it into $VENV"
# As a user would: `pip wheel ./python` makes one abi3 wheel (any CPython
# >= 3.10), built once and installed. maturin is in the environment already:
# no isolated build environment to fetch it again; cargo builds into the
# shared target directory.
WHEELS="$CARGO_TARGET_DIR/python-wheel"
rm -rf "$WHEELS"
"$PY" -m pip wheel --quiet --disable-pip-version-check --no-build-isolation \
  --no-deps --wheel-dir "$WHEELS" ./python
wheel=("$WHEELS"/floxlog-*.whl)
if [ ${#wheel[@]} -ne 1 ] || [[ "${wheel[0]}" != *-abi3-* ]]; then
  echo "expected one abi3 wheel in $WHEELS, found: ${wheel[*]}" >&2
  exit 1
fi
"$PY" -m pip install --quiet --disable-pip-version-check --no-deps \
  --force-reinstall "${wheel[0]}"
step "building the floxlog tool (release), which the tests compare against"
cargo build --release --quiet -p floxlog-cli
export FLOXLOG_CLI="$CARGO_TARGET_DIR/release/floxlog" FLOXLOG_BIN="$CARGO_TARGET_DIR/release/floxlog"

# --- 4. tests -----------------------------------------------------------
step "pytest python/tests (corpus: $FLOXLOG_CONFORMANCE_DIR)"
# From outside the source tree, so `import floxlog` is the installed package.
cd python/tests
"$PY" -m pytest -q -p no:cacheprovider "$@" .
