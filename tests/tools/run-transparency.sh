#!/usr/bin/env bash
# run-transparency.sh PROGRAM LIBOBSERVE [SLICER]
#
# PROGRAM (tests/tools/transparency) prints every return value and errno of a
# fixed sequence of socket calls. Its output must be identical bare and with
# the layer preloaded; the preloaded run must leave one spool file, and when
# SLICER is given, the slicer must read it without complaint and find one
# connection per TCP connect the program made, two of them refused.
set -euo pipefail
prog=$1 lib=$2 slicer=${3:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/transparency.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$prog" > "$work/bare.txt"
"$prog" > "$work/bare2.txt"
diff -u "$work/bare.txt" "$work/bare2.txt" ||
  fail "two bare runs differ: the program's output is not deterministic"
status=0
env LD_PRELOAD="$lib" OBSERVE_DIR="$work/spool" "$prog" > "$work/observed.txt" ||
  status=$?
if ! diff -u "$work/bare.txt" "$work/observed.txt"; then
  [ "$status" -eq 0 ] || fail "the program died with the layer (exit status $status) after step" \
    "$(grep -c '^[0-9]' "$work/observed.txt")"
  fail "the layer changed what the program sees"
fi
[ "$status" -eq 0 ] || fail "exit status $status with the layer, 0 without"
echo "ok: identical output ($(tail -n 1 "$work/bare.txt"))"

n=$(find "$work/spool" -name '*.spool' | wc -l)
[ "$n" -eq 1 ] || fail "$n spool files, expected 1"
echo "ok: one spool file written"

[ -n "$slicer" ] || exit 0
"$slicer" -o "$work/t.db" "$work/spool" 2> "$work/slicer.err" ||
  { cat "$work/slicer.err"; fail "slicer exit status $?"; }
cat "$work/slicer.err"
if grep -q '\.spool' "$work/slicer.err"; then  # a complaint names the file
  fail "the slicer complained about the spool"
fi
expected=$(sed -n 's/^tcp connections opened: //p' "$work/bare.txt")
got=$(sqlite3 -batch "$work/t.db" 'SELECT count(*) FROM connection')
[ "$got" = "$expected" ] || fail "$got connections in the database, expected $expected"
refused=$(sqlite3 -batch "$work/t.db" \
  "SELECT count(*) FROM connection WHERE end_class = 'refused'")
[ "$refused" = 2 ] || fail "$refused refused connections, expected 2"
exchanges=$(sqlite3 -batch "$work/t.db" 'SELECT count(*) FROM exchange WHERE dr > 0')
[ "$exchanges" -gt 0 ] || fail "no exchange received anything"
echo "ok: slicer: $got connections ($refused refused), $exchanges exchanges with data"
