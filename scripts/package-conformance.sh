#!/usr/bin/env bash
# The downloadable conformance kit:
#   scripts/package-conformance.sh OUTDIR
# writes OUTDIR/floxlog-conformance-<version>-<target>.tar.gz (<version> from
# conformance/VERSION, <target> the Rust host triple) holding one folder:
#   bin/floxlog-conformance   the runner (`floxlog conformance`'s options),
#                             statically linked (+crt-static on glibc)
#   conformance/              corpus, adapters, tools, README, VERSION, SHA256SUMS
#   SHA256SUMS                every other file of the kit
# The archive is reproducible (sorted names, fixed owner and times).
# Environment: CARGO_TARGET_DIR (default target/).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/package-conformance.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
version=$(tr -d ' \n' < conformance/VERSION)
target=$(rustc -vV | sed -n 's/^host: //p')
tdir=${CARGO_TARGET_DIR:-$PWD/target}
# --target keeps the static flags off build scripts and proc macros.
RUSTFLAGS="-C target-feature=+crt-static" \
    cargo build --release --locked -p floxlog-conformance --target "$target"
bin=$tdir/$target/release/floxlog-conformance
if [ "$(uname -s)" = Linux ] && ldd "$bin" 2>&1 | grep -q '=>'; then
    echo "package-conformance: $bin is dynamically linked" >&2
    exit 1
fi
name=floxlog-conformance-$version-$target
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
top=$stage/$name
mkdir -p "$top/bin" "$top/conformance"
cp "$bin" "$top/bin/"
for f in README.md VERSION SHA256SUMS cases corrupt real tapes adapters tools; do
    cp -R "conformance/$f" "$top/conformance/"
done
find "$top" \( -name __pycache__ -o -name '*.pyc' \) -prune -exec rm -rf {} +
(cd "$top" && find . -type f ! -path ./SHA256SUMS | LC_ALL=C sort | sed 's|^\./||' |
    while IFS= read -r f; do sha256sum -- "$f"; done > SHA256SUMS)
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$stage" -cf - "$name" |
    gzip -n -9 > "$out/$name.tar.gz"
echo "$out/$name.tar.gz"
