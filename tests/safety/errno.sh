#!/usr/bin/env bash
# errno.sh ERRNO_KEPT - errno as the host left it, whatever the spool does:
# tests/safety/clients/errno_kept makes 300 exchanges (600 records: the
# spool grows) and counts the successful calls that changed errno. Its
# output must be the same bare and with the layer while the spool
#   grows        (an ordinary run),
#   is refused   (a spool directory owned by another user),
#   stops        (ulimit -f 20: room for the first 128 records, no growth).
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/safety/lib.sh"
prog=${1:?usage: errno.sh ERRNO_KEPT}
N=300

host_run bare - "$prog" "$N"
expect_eq "$(cat "$WORK/bare.rc")" 0 "bare run"
grep -q "send *$N calls, errno changed by 0" "$WORK/bare.out" || fail "bare run: $(cat "$WORK/bare.out")"

host_run grows - observed "$WORK/grows" "$prog" "$N"
expect_same_host bare grows
expect_eq "$(layer_lines grows)" "" "grows: nothing from the layer"
read -r reserved used dropped < <(spool_counts "$(find "$WORK/grows" -name '*.spool')")
expect_eq "$used:$dropped" "$reserved:0" "grows: every record in the spool ($reserved)"
[ "$used" -gt 128 ] || fail "grows: only $used records: the spool did not grow"

if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
  mkdir -m 0755 "$WORK/theirs"
  chown nobody "$WORK/theirs"
  host_run refused - observed "$WORK/theirs" "$prog" "$N"
  expect_same_host bare refused
  expect_one_warning refused "not recording: .* is owned by uid"
else
  echo "note: not root: the refused case is left out"
fi

host_run stops.bare "-f 20" "$prog" "$N"
host_run stops "-f 20" observed "$WORK/stops" "$prog" "$N"
expect_same_host stops.bare stops
expect_one_warning stops "file size limit .*; recording stopped"
