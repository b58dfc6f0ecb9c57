#!/bin/sh
# floxlog's writer adapter for the conformance kit (docs/conformance.md).
#   write.sh EVENTS OUT_DIR SETTINGS
# Writes the events with the settings file's writer settings as segment
# files in OUT_DIR (plus a manifest.json, which the kit ignores).
# The floxlog binary is $FLOXLOG, else `floxlog` on PATH.
FLOXLOG=${FLOXLOG:-floxlog}
[ $# -eq 3 ] || { echo "usage: write.sh EVENTS OUT_DIR SETTINGS" >&2; exit 2; }
exec "$FLOXLOG" encode --settings "$3" --durability none -o "$2" -- "$1"
