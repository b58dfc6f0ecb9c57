#!/usr/bin/env bash
# `floxlog report` looked at as a person would (issue 39): a demo tape
# with a damaged segment and a missing one is reported, the page opened
# in headless Chromium (Debian's `chromium`, installed when missing):
# its script must run without errors (it writes a mark into the page),
# the page must name the damage, the gaps and the symbols, and its
# screenshot must have content (colours and ink counted, not blank).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

command -v chromium >/dev/null || apt_install chromium
command -v python3 >/dev/null || apt_install python3
cargo build -q -p floxlog-cli
FLOXLOG="$PWD/target/debug/floxlog"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
step "report of a demo tape with damage and a hole"
"$FLOXLOG" demo "$tmp/demo" --compression none --max-segment-bytes 512K >/dev/null
segs=("$tmp"/demo/*.floxlog)
[ "${#segs[@]}" -ge 4 ] || { echo "want 4+ segments, got ${#segs[@]}"; exit 1; }
# A flipped byte in the second segment's first frame payload (byte 8 after
# the 64-byte header and the 12-byte frame header: a CRC mismatch whatever
# the demo's random bytes are); the third goes missing.
printf '\xff' | dd of="${segs[1]}" bs=1 seek=84 conv=notrunc status=none
rm "${segs[2]}"
"$FLOXLOG" report "$tmp/demo" -o "$tmp/report.html"
if grep -Eq '(src|href)="https?:' "$tmp/report.html"; then
  echo "the report fetches something from the network"; exit 1
fi

chrome() {
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$tmp/profile-$1" "${@:2}" "file://$tmp/report.html"
}

step "rendered in headless Chromium"
chrome dom --enable-logging=stderr --v=0 --virtual-time-budget=5000 --dump-dom \
  >"$tmp/dom.html" 2>"$tmp/console.log" || { cat "$tmp/console.log"; exit 1; }
if grep -E 'Uncaught|SyntaxError|TypeError|ReferenceError' "$tmp/console.log"; then
  echo "script errors in the page"; exit 1
fi
check() {
  grep -qi -- "$1" "$tmp/dom.html" || { echo "the rendered page lacks: $1"; exit 1; }
}
check 'data-rendered="yes"'
check 'report rendered: '
check '<td>damage</td>'
check 'CRC'
check 'Gaps and damage'
check 'BTCUSDT'
check 'ETHUSDT'
check 'SOLUSDT'
check '<svg'
echo "page: script ran, damage, gaps and symbols named"

step "screenshot has content"
chrome shot --window-size=1200,2600 --screenshot="$tmp/shot.png" >/dev/null 2>&1
python3 scripts/png-check.py "$tmp/shot.png" 12 0.03
echo "report test: ok"
