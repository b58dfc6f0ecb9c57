#!/usr/bin/env bash
# Seeds the fuzz corpora from a conformance corpus (segments of cases/,
# real/ and corrupt/). The read_segment target takes a mode byte first:
# 0 = the bytes are a whole file.
set -euo pipefail
cd "$(dirname "$0")"
corpus="${1:-${FLOXLOG_CONFORMANCE_DIR:-$(cd .. && pwd)/conformance}}"
mkdir -p corpus/read_segment corpus/index_seek corpus/write_read corpus/ffi_reader \
  corpus/tape_reader corpus/std_parsers corpus/lz4_compress
i=0
while IFS= read -r -d '' f; do
  i=$((i + 1))
  { printf '\x00'; cat "$f"; } > "corpus/read_segment/seed-$i"
  cp "corpus/read_segment/seed-$i" "corpus/ffi_reader/seed-$i"
  cp "$f" "corpus/tape_reader/seed-$i"
  # lz4_compress: a mode byte (0: full output room), then bytes to compress.
  { printf '\x00'; head -c 70000 "$f"; } > "corpus/lz4_compress/seed-$i"
done < <(find "$corpus" -name '*.floxlog' -size -300k -print0 | sort -z)
# std_parsers takes a parser byte first: 1 manifest.json, 2 metadata.json,
# 3 JSON-lines events, 4 a time argument.
j=0
while IFS= read -r -d '' f; do
  j=$((j + 1))
  case "$f" in
    *manifest.json) p='\x01' ;;
    *metadata.json) p='\x02' ;;
    *) p='\x03' ;;
  esac
  { printf "$p"; head -c 20000 "$f"; } > "corpus/std_parsers/seed-$j"
done < <(find "$corpus" \( -name 'expected.jsonl' -o -name 'manifest.json' -o -name 'metadata.json' \) -print0 | sort -z)
printf '\x042024-01-02T03:04:05.123456789Z' > corpus/std_parsers/seed-time
cp -n regressions/* corpus/read_segment/ 2>/dev/null || true
echo "seeded $i segments from $corpus"
