#!/usr/bin/env bash
# The codec's C ABI for firmware (run by scripts/test-embedded.sh, which
# installs the tools): floxlog-ffi without its default features is a
# no_std, allocation-free static library holding the codec's C API only.
#   1. builds it for thumbv7em-none-eabihf (`--release`: the target aborts
#      on panic; and `--profile embedded`, sized for flash) and for the host
#      (`--profile embedded`: panic = "abort");
#   2. checks that neither needs anything from outside but the C library's
#      memory functions, and holds no tape API;
#   3. compiles the header's codec part alone (FLOXLOG_CODEC_ONLY) as C99
#      and C11 with arm-none-eabi-gcc and the host's cc, -Werror;
#   4. on the host: the C round trip (nostd-check/c-firmware/) and the C API
#      tests (c-tests/test_c_api.c, handles in caller storage) linked
#      against the codec-only library with no -lpthread -ldl; the round trip
#      prints the LZ4 segment's length and CRC-32 as expected.h;
#   5. on the target: the same round trip as firmware (gcc-arm-none-eabi,
#      newlib), run under QEMU's mps2-an386; it checks every event and the
#      LZ4 bytes against expected.h, prints the stack of its writer and
#      reader, and QEMU exits 0 only if all came back; then the code size
#      of both halves (nostd-check/cortex-m/size-report.py).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
. scripts/lib.sh

TARGET=thumbv7em-none-eabihf
TD=${CARGO_TARGET_DIR:-target}
FW=nostd-check/c-firmware
OUT=$TD/c-firmware
mkdir -p "$OUT"

# --- 1. the libraries ---------------------------------------------------
# `--release` is the plain build (the target's default panic strategy is
# abort); the firmware links the `embedded` profile's (opt-level "s", fat
# LTO: what a firmware build would use, as nostd-check/cortex-m does).
step "codec-only C library: $TARGET (release, embedded) and host (embedded)"
cargo clippy --quiet -p floxlog-ffi --no-default-features --target "$TARGET" -- -D warnings
cargo build --quiet --release -p floxlog-ffi --no-default-features --target "$TARGET"
cargo build --quiet --profile embedded -p floxlog-ffi --no-default-features --target "$TARGET"
cargo build --quiet --profile embedded -p floxlog-ffi --no-default-features
ARM_RELEASE_LIB=$TD/$TARGET/release/libfloxlog_ffi.a
ARM_LIB=$TD/$TARGET/embedded/libfloxlog_ffi.a
HOST_LIB=$TD/embedded/libfloxlog_ffi.a

# --- 2. what they need ----------------------------------------------------
# check_archive LIB ALLOWED...: every symbol the archive's objects use and
# none of them defines is in ALLOWED; it defines the codec's C API and no
# tape function. (readelf: the Rust objects' symbol tables.)
check_archive() {
  local lib=$1 abs dir
  shift
  abs=$(realpath "$lib")
  dir=$(mktemp -d)
  (cd "$dir" && ar x "$abs")
  readelf -sW "$dir"/*.o | awk '$7 == "UND" && $8 != "" {print $8}' | sort -u >"$dir/used"
  readelf -sW "$dir"/*.o | awk '$7 != "UND" && $7 != "Ndx" && ($5 == "GLOBAL" || $5 == "WEAK") {print $8}' |
    sort -u >"$dir/defined"
  local extra
  extra=$(comm -23 "$dir/used" "$dir/defined" | grep -vxF -f <(printf '%s\n' "$@") || true)
  if [ -n "$extra" ]; then
    echo "$lib needs symbols from outside beyond $*:" >&2
    echo "$extra" >&2
    exit 1
  fi
  for sym in floxlog_writer_init floxlog_reader_init floxlog_frame_encode floxlog_book_apply; do
    grep -qx "$sym" "$dir/defined" || { echo "$lib lacks $sym" >&2; exit 1; }
  done
  if grep -E '^floxlog_(tape|tail|inspection)_|^floxlog_(writer|reader)_(new|free)$' "$dir/defined"; then
    echo "$lib holds the functions above, which need std" >&2
    exit 1
  fi
  rm -rf "$dir"
  echo "$lib: needs only $* from outside; $(wc -c <"$lib") B"
}
step "what the codec-only libraries need"
check_archive "$ARM_RELEASE_LIB" memcpy memmove memset memcmp
check_archive "$ARM_LIB" memcpy memmove memset memcmp
# The host's LLVM also calls bcmp (glibc's) for memcmp == 0.
check_archive "$HOST_LIB" memcpy memmove memset memcmp bcmp

# --- 3. the header's codec part alone -----------------------------------
step "include/floxlog.h with FLOXLOG_CODEC_ONLY: C99 and C11, -Werror"
for std in c99 c11; do
  arm-none-eabi-gcc -std=$std -Wall -Wextra -Werror -pedantic -fsyntax-only -I include "$FW/header_check.c"
  cc -std=$std -Wall -Wextra -Werror -pedantic -fsyntax-only -I include "$FW/header_check.c"
done

# --- 4. the host --------------------------------------------------------
step "host: C round trip and C API tests on the codec-only library (no -lpthread -ldl)"
CFLAGS=(-std=c11 -O2 -Wall -Wextra -Werror -pedantic -I include)
cc "${CFLAGS[@]}" -o "$OUT/host" "$FW/host.c" "$FW/roundtrip.c" "$HOST_LIB"
"$OUT/host" >"$OUT/expected.h"
cc "${CFLAGS[@]}" -DFLOXLOG_CODEC_ONLY -DFLOXLOG_TEST_INIT -I c-tests -o "$OUT/test_c_api_init" \
  c-tests/test_c_api.c "$HOST_LIB"
"$OUT/test_c_api_init"

# --- 5. the target ------------------------------------------------------
step "$TARGET: C firmware round trip under QEMU (mps2-an386)"
arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 \
  -std=c11 -Os -g -Wall -Wextra -Werror -ffunction-sections -fdata-sections \
  -I include -I "$OUT" -nostartfiles -T "$FW/link.ld" -Wl,--gc-sections,--no-warn-execstack --specs=nano.specs \
  -o "$OUT/firmware.elf" "$FW/firmware.c" "$FW/roundtrip.c" "$ARM_LIB" -lc -lgcc
# The timeout turns a hang (a fault loop) into a failure.
timeout 120 qemu-system-arm -M mps2-an386 -nographic -monitor none -serial none \
  -semihosting-config enable=on,target=native -kernel "$OUT/firmware.elf" </dev/null
python3 nostd-check/cortex-m/size-report.py "$OUT/firmware.elf" rt_write_segment rt_read_segment
echo "c-firmware: the codec-only C library round trips on the host and under QEMU"
