#!/usr/bin/env bash
# full_fs.sh - the spool on a file system that fills up (a 256 KiB tmpfs)
# under ab -k -n 20000: ab finishes every request (no SIGBUS from a spool
# page the file system cannot back), the layer says once that it stopped
# recording, the slicer reads what was recorded, and every record that
# could not be had is counted in records_dropped, once.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
source "$REPO/tests/safety/lib.sh"
need_cmd ab
REQUESTS=20000

DIR=$WORK/small
mkdir -p "$DIR"
mount -t tmpfs -o size=256k,mode=0700 tmpfs "$DIR" 2> "$WORK/mount.err" ||
  skip "cannot mount a tmpfs here ($(cat "$WORK/mount.err")): this test needs root (CI runs as root)"
at_exit "umount '$DIR'"
make_site "$WORK/site"
nginx_start "$WORK/site"

host_run ab - observed "$DIR" ab -k -n "$REQUESTS" "$NGINX_URL/100b"
expect_eq "$(cat "$WORK/ab.rc")" 0 "ab's exit status (a signal would be 128+n)"
expect_eq "$(awk '/^Complete requests:/ { print $3 }' "$WORK/ab.out")" "$REQUESTS" "ab: complete requests"
expect_eq "$(awk '/^Failed requests:/ { print $3 }' "$WORK/ab.out")" 0 "ab: failed requests"
expect_one_warning ab 'cannot reserve .*No space left on device; recording stopped'

spool=$(find "$DIR" -name '*.spool')
[ "$(printf '%s\n' "$spool" | wc -l)" -eq 1 ] && [ -f "$spool" ] || fail "expected one spool in $DIR: $spool"
expect_counted_once "$spool"
DB=$WORK/run.db
rc=0
"$SLICER" -o "$DB" "$DIR" 2> "$WORK/slicer.err" || rc=$?
expect_eq "$rc" 1 "the slicer's exit status (records were lost)"
grep -q 'the writer lost [1-9][0-9]* records' "$WORK/slicer.err" ||
  fail "the slicer did not report the lost records: $(cat "$WORK/slicer.err")"
ok "slicer: $(grep -o 'the writer lost.*' "$WORK/slicer.err")"
read -r dropped < <(spool_counts "$spool" | cut -d' ' -f3)
expect_eq "$(q "$DB" "SELECT dropped FROM process")" "$dropped" "process.dropped = the header's records_dropped"
n=$(q "$DB" "SELECT count(*) FROM exchange WHERE complete = 1 AND ds > 0 AND dr > 100")
[ "$n" -gt 0 ] && [ "$n" -lt "$REQUESTS" ] || fail "$n complete exchanges recorded, expected some, not all"
ok "$n exchanges recorded before the file system filled up"
expect_eq "$(q "$DB" "SELECT count(*) FROM connection")" 1 "ab -k: one connection recorded"
