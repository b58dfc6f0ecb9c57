#!/usr/bin/env bash
# The no_std round trip on a microcontroller: nostd-check/cortex-m/ built for
# thumbv7em-none-eabihf (Cortex-M4F) and run under QEMU's mps2-an386 board,
# once with LZ4 (default features) and once without. It reports through
# semihosting; QEMU exits 0 only if every event came back. Also prints the
# stack the writer and reader used (painted and checked in QEMU) and their
# code size (nostd-check/cortex-m/size-report.py).
# Then the same for C firmware: floxlog-ffi's codec-only C library (no std,
# no allocator) built for the target, checked to need nothing but the C
# library's memory functions, linked by nostd-check/c-firmware/ with
# Debian's gcc-arm-none-eabi and newlib, and run under QEMU.
#   1. installs what is missing: the rustup target, qemu-system-arm,
#      gcc-arm-none-eabi and newlib (apt);
#   2. cargo fmt --check and clippy -D warnings for the crate;
#   3. for each feature set: release build, QEMU run, size report;
#   4. the codec-only C library on the host and the target, the header's
#      codec part alone (C99, C11), the C round trip on both.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
TARGET=thumbv7em-none-eabihf

. scripts/lib.sh

# --- 1. tools -----------------------------------------------------------
if ! rustup target list --installed | grep -qx "$TARGET"; then
  step "installing the rustup target $TARGET"
  rustup target add "$TARGET"
fi
missing=()
command -v qemu-system-arm >/dev/null || missing+=(qemu-system-arm)
# llvm-objdump / llvm-nm for the size report (Debian's llvm).
command -v llvm-objdump >/dev/null && command -v llvm-nm >/dev/null || missing+=(llvm)
command -v arm-none-eabi-gcc >/dev/null || missing+=(gcc-arm-none-eabi)
[ -e /usr/lib/arm-none-eabi/newlib/thumb/v7e-m+fp/hard/libc.a ] || missing+=(libnewlib-arm-none-eabi)
apt_install "${missing[@]}"

cd nostd-check/cortex-m
ELF=${CARGO_TARGET_DIR:-target}/$TARGET/release/nostd-check-cortex-m

# --- 2. lints -----------------------------------------------------------
step "cargo fmt / clippy (nostd-check, nostd-check/cortex-m)"
(cd .. && cargo fmt -- --check)
cargo fmt -- --check
cargo clippy --quiet --target "$TARGET" -- -D warnings
cargo clippy --quiet --target "$TARGET" --no-default-features -- -D warnings

# --- 3. build, run under QEMU, measure ----------------------------------
for features in default --no-default-features; do
  args=()
  label="with LZ4"
  if [ "$features" != default ]; then
    args=("$features")
    label="without LZ4"
  fi
  step "$TARGET $label: build, run under QEMU (mps2-an386)"
  cargo build --quiet --release "${args[@]}"
  # The runner (.cargo/config.toml) is qemu-system-arm with semihosting; the
  # timeout turns a hang (a fault loop) into a failure instead of a stuck CI.
  timeout 120 cargo run --quiet --release "${args[@]}" </dev/null
  python3 size-report.py "$ELF"
done
echo "nostd-check-cortex-m: round trips ok under QEMU with and without LZ4"
cd ../..
bash scripts/test-embedded-c.sh
