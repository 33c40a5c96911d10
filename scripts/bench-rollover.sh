#!/usr/bin/env bash
# bench-rollover.sh [REQUESTS] - one process records beyond the spool's old
# cap with the default settings, and nothing is lost. A spool used to stop
# for good at 1 GiB (8,388,608 records of 128 bytes; the records after it
# were dropped); it now rolls over into segments of OBSERVE_SPOOL_SEGMENT_MB
# (256 MiB by default). ab -k -c 4 -n REQUESTS against nginx (100-byte file,
# loopback) with the layer preloaded; every exchange writes two records (its
# own and its HTTP record), so the default 4,500,000 requests make about
# 9 M records, past the old cap. Then the slicer with --delete; printed: the
# records and segments written, the exchanges stored, the requests in
# nginx's log, the records lost, the files left, with the time and peak RSS
# of each step. Takes 5-10 minutes and ~2.5 GB of disk for a while
# (BENCH_DIR=DIR puts the spool and the database there). tests/safety/
# rollover.sh is the test (1 MiB segments, 40,000 requests); this is the
# same at full scale, kept out of the test suite for its time.
set -euo pipefail
cd "$(dirname "$0")/.."
REQUESTS=${1:-4500000}
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh
need_cmd ab
dir=$(bench_dir "${BENCH_DIR:-}")
STEP_WIDTH=44
rm -rf "$dir/spool" "$dir/roll.db"*
mkdir -m 0700 "$dir/spool"
make_site "$WORK/site"
nginx_start "$WORK/site" rollover-nginx

echo "rollover: ab -k -c 4 -n $REQUESTS, default segments ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs)"
step "ab -k with the layer ($REQUESTS requests)" \
  env LD_PRELOAD="$LAYER_PRELOAD" OBSERVE_DIR="$dir/spool" ab -q -k -c 4 -n "$REQUESTS" "$NGINX_URL/100b"
segments=$(find "$dir/spool" -name '*.spool' | wc -l)
bytes=$(du -cb "$dir"/spool/*.spool | tail -1 | cut -f1)
nginx_wait_log "$REQUESTS"
step "slicer --delete" "$SLICER" -q --delete -o "$dir/roll.db" "$dir/spool"
records=$(q "$dir/roll.db" "SELECT (SELECT count(*) FROM exchange) + (SELECT count(*) FROM connection) + (SELECT count(*) FROM exchange WHERE method <> '')")
stored=$(q "$dir/roll.db" "SELECT count(*) FROM exchange WHERE status = 200 AND complete")
logged=$(awk -F'\t' '$6 == "/100b" && $7 == 200' "$NGINX_LOG" | wc -l)
lost=$(q "$dir/roll.db" "SELECT sum(dropped) FROM process")
left=$(find "$dir/spool" -name '*.spool' | wc -l)
printf '%-44s %s\n' "spool files written (segments)" "$segments"
printf '%-44s %s MiB\n' "bytes written" "$((bytes / 1048576))"
printf '%-44s %s (old cap: 8388608)\n' "records (connections, exchanges, HTTP)" "$records"
printf '%-44s %s\n' "exchanges stored (200, complete)" "$stored"
printf '%-44s %s\n' "requests in nginx's log" "$logged"
printf '%-44s %s\n' "records lost (process.dropped)" "$lost"
printf '%-44s %s\n' "spool files left after slicer --delete" "$left"
if [[ $stored == "$REQUESTS" && $logged == "$REQUESTS" && $lost == 0 && $left == 0 && $records -gt 8388608 ]]; then
  echo "past the old cap, nothing lost"
else
  echo "NOT as expected"
  exit 1
fi
rm -rf "$dir/spool" "$dir/roll.db"*
