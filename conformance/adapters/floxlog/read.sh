#!/bin/sh
# floxlog's reader adapter for the conformance kit (docs/conformance.md).
#   read.sh SEGMENT          events as JSON lines; on damage, exit 1 with
#                            `error <kind> <offset>` as the last stderr line
#   read.sh --index SEGMENT  `index ok` or `index_error <kind>`, exit 0
#   read.sh --tape DIR       the tape's events in time order; exit 1 on a
#                            damaged segment or a missing listed one, with
#                            `error <kind> <offset or file name>` last
# The floxlog binary is $FLOXLOG, else `floxlog` on PATH.
FLOXLOG=${FLOXLOG:-floxlog}
if [ "$1" = "--index" ]; then
    [ $# -eq 2 ] || { echo "usage: read.sh [--index|--tape] SEGMENT" >&2; exit 2; }
    # verify exits 1 on a bad index; the verdict line is the answer.
    out=$("$FLOXLOG" verify --index-only --error-format kit -- "$2")
    case $out in
        "index ok" | "index_error "*) echo "$out"; exit 0 ;;
        *) echo "floxlog verify --index-only printed no verdict" >&2; exit 2 ;;
    esac
fi
if [ "$1" = "--tape" ]; then
    [ $# -eq 2 ] || { echo "usage: read.sh [--index|--tape] SEGMENT" >&2; exit 2; }
    exec "$FLOXLOG" cat --format jsonl --strict --error-format kit -- "$2"
fi
[ $# -eq 1 ] || { echo "usage: read.sh [--index|--tape] SEGMENT" >&2; exit 2; }
# --strict: a torn tail is damage here, not a segment still being written.
exec "$FLOXLOG" cat --format jsonl --file-order --strict --error-format kit -- "$1"
