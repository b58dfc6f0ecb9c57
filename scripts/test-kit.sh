#!/usr/bin/env bash
# The downloadable conformance kit as another team meets it: packaged
# (scripts/package-conformance.sh), unpacked in an empty folder, its
# SHA256SUMS checked, and the independent Python reader run through it with
# no Rust toolchain on PATH (only python3). Fails on any case failure, and
# when it takes more than FLOXLOG_KIT_SECONDS (default 900: the static
# release build is most of it).
set -euo pipefail
cd "$(dirname "$0")/.."
budget=${FLOXLOG_KIT_SECONDS:-900}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
tarball=$(timeout "$budget" bash scripts/package-conformance.sh "$work/dist" | tail -n 1)
mkdir "$work/empty" "$work/path"
tar -xzf "$tarball" -C "$work/empty"
kit=$(echo "$work"/empty/floxlog-conformance-*)
(cd "$kit" && sha256sum --quiet -c SHA256SUMS)
# The interpreter itself, not a wrapper (a pyenv shim needs bash on PATH).
ln -s "$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')" "$work/path/python3"
left=$(( budget - ($(date +%s) - start) ))
[ "$left" -gt 0 ] || { echo "test-kit: over the ${budget} s budget before the run" >&2; exit 1; }
(cd "$kit" && env -i HOME="$work" PATH="$work/path" "$(command -v timeout)" "$left" /bin/sh -c '
    if command -v cargo || command -v rustc; then echo "a Rust toolchain is on PATH" >&2; exit 1; fi
    exec bin/floxlog-conformance --require-index \
        --reader "python3 conformance/adapters/python/floxlog_reader.py {segment}"' 2>&1 |
    grep -v '^ok '
) || { echo "test-kit: the kit failed" >&2; exit 1; }
echo "test-kit: $(basename "$kit") ran the Python reader with no Rust on PATH in $(( $(date +%s) - start )) s"
