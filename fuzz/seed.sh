#!/usr/bin/env bash
# Seeds the fuzz corpora from a conformance corpus (segments of cases/,
# real/ and corrupt/). The read_segment target takes a mode byte first:
# 0 = the bytes are a whole file.
set -euo pipefail
cd "$(dirname "$0")"
corpus="${1:-${FLOXLOG_CONFORMANCE_DIR:-$(cd ../.. && pwd)/shared/conformance}}"
mkdir -p corpus/read_segment corpus/index_seek corpus/write_read corpus/ffi_reader
i=0
while IFS= read -r -d '' f; do
  i=$((i + 1))
  { printf '\x00'; cat "$f"; } > "corpus/read_segment/seed-$i"
  cp "corpus/read_segment/seed-$i" "corpus/ffi_reader/seed-$i"
done < <(find "$corpus" -name '*.floxlog' -size -300k -print0 | sort -z)
cp -n regressions/* corpus/read_segment/ 2>/dev/null || true
echo "seeded $i segments from $corpus"
