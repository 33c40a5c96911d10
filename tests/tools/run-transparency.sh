#!/usr/bin/env bash
# run-transparency.sh PROGRAM LIBOBSERVE - the program's output (every return
# value and errno of a fixed sequence of socket calls) must be identical with
# and without the layer, and the layer must have recorded its connections.
set -euo pipefail
prog=$1 lib=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$prog" > "$work/bare.txt"
env LD_PRELOAD="$lib" OBSERVE_DIR="$work/spool" "$prog" > "$work/observed.txt"
if ! diff -u "$work/bare.txt" "$work/observed.txt"; then
  echo "FAIL: the layer changed what the program sees"
  exit 1
fi
echo "ok: identical output ($(tail -n 1 "$work/bare.txt"))"
n=$(find "$work/spool" -name '*.spool' | wc -l)
[ "$n" -eq 1 ] || { echo "FAIL: $n spool files"; exit 1; }
echo "ok: one spool file written"
