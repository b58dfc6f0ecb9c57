#!/usr/bin/env bash
# Non-test lines of the read layers as issue 36 counts them: the .rs and
# .py files git lists under floxlog/src, floxlog-arrow/src, python/src,
# python/floxlog and floxlog-ffi/src/tape/reader, outside tests/, benches/,
# examples/ and *tests.rs, each .rs file up to its first #[cfg(test)].
# Usage: scripts/count-read-lines.sh [commit] (default: the work tree).
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-}
dirs=(floxlog/src floxlog-arrow/src python/src python/floxlog floxlog-ffi/src/tape/reader)
if [ -n "$rev" ]; then
  files=$(git ls-tree -r --name-only "$rev" -- "${dirs[@]}")
  show() { git show "$rev:$1"; }
else
  files=$(git ls-files -- "${dirs[@]}")
  show() { cat "$1"; }
fi
total=0
while read -r f; do
  case "$f" in
    *.rs | *.py) ;;
    *) continue ;;
  esac
  case "/$f" in
    */tests/* | */benches/* | */examples/* | *tests.rs) continue ;;
  esac
  [ -n "$rev" ] || [ -f "$f" ] || continue
  if [[ $f == *.rs ]]; then
    n=$(show "$f" | awk '/^[[:space:]]*#\[cfg\(test\)\]/{stop=1} !stop{n++} END{print n+0}')
  else
    n=$(show "$f" | wc -l)
  fi
  total=$((total + n))
done <<<"$files"
echo "$total"
