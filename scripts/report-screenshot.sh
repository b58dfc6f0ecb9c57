#!/usr/bin/env bash
# Regenerates docs/report-demo.png: `floxlog report` of `floxlog demo`'s
# tape, screenshot in headless Chromium (installed when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
command -v chromium >/dev/null || apt_install chromium
cargo build -q -p floxlog-cli
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
target/debug/floxlog demo "$tmp/demo" >/dev/null
target/debug/floxlog report "$tmp/demo" -o "$tmp/report.html"
timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$tmp/profile" --hide-scrollbars --window-size=1100,1500 \
  --screenshot="$PWD/docs/report-demo.png" "file://$tmp/report.html" >/dev/null 2>&1
python3 scripts/png-check.py docs/report-demo.png 12 0.03
