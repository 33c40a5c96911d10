#!/usr/bin/env bash
# drops.sh - issue 13 item 12: when a process's spool could not grow
# (here a file size limit, ulimit -f 64, that ApacheBench's 2,000
# keep-alive requests outgrow), the layer stops recording and counts the
# records it could not write. The count was stored (process.dropped) and
# a per-file line said it, but the slicer exited 0, its summary and
# observe's table were silent, and manager stats and the report showed the
# partial figures as if whole. Now the slicer's summary says how many
# records were lost and it exits 1; observe warns under its table (and
# passes ab's exit status through); manager stats says it on stderr (its
# output stays a table or CSV); the report says it on its page and in
# summary.txt.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
need_cmd ab
need_cmd gnuplot
MANAGER=$BUILD/bin/manager
make_site "$WORK/site"
nginx_start "$WORK/site"
URL=$NGINX_URL/100b

(ulimit -f 64; preload ab -q -k -n 2000 "$URL" > "$WORK/ab.out") || fail "ab failed"
grep -q '^Complete requests: *2000' "$WORK/ab.out" || fail "ab: $(cat "$WORK/ab.out")"
rc=0
"$SLICER" -o "$WORK/run.db" "$SPOOL" 2> "$WORK/slicer.err" || rc=$?
cat "$WORK/slicer.err"
lost=$(q "$WORK/run.db" "SELECT sum(dropped) FROM process")
[ "$lost" -gt 0 ] || fail "no record lost: the limit did not bite"
expect_eq "$rc" 1 "the slicer's exit status when records were lost"
grep -qE "^slicer: .* $lost records lost by the layer \(spool full\)" "$WORK/slicer.err" ||
  fail "the slicer's summary does not say $lost records were lost"
ok "the slicer's summary says $lost records were lost"

rc=0
"$OBSERVE" -o "$WORK/observe.db" -- sh -c 'ulimit -f 64; exec ab -q -k -n 2000 "$1"' sh "$URL" \
  > /dev/null 2> "$WORK/observe.err" || rc=$?
expect_eq "$rc" 0 "observe passes ab's exit status through"
olost=$(q "$WORK/observe.db" "SELECT sum(dropped) FROM process")
[ "$olost" -gt 0 ] || fail "observe: no record lost"
grep -qE "^observe: warning: $olost records lost by the layer \(spool full\)" "$WORK/observe.err" ||
  fail "observe does not warn: $(tail -3 "$WORK/observe.err")"
ok "observe warns: $(grep '^observe: warning' "$WORK/observe.err")"

"$MANAGER" pull -q -o "$WORK/central.db" "$WORK/run.db"
"$MANAGER" stats "$WORK/central.db" > "$WORK/stats.out" 2> "$WORK/stats.err"
"$MANAGER" stats "$WORK/central.db" --csv > "$WORK/stats.csv" 2> /dev/null
grep -qE "^manager: warning: $lost records lost by the layer \(spool full\) in 1 process" "$WORK/stats.err" ||
  fail "manager stats does not say it: $(cat "$WORK/stats.err")"
ok "manager stats says: $(cat "$WORK/stats.err")"
"$PYTHON" -c 'import csv, sys; rows = list(csv.reader(open(sys.argv[1]))); assert all(len(r) == 8 for r in rows), rows' \
  "$WORK/stats.csv" || fail "manager stats --csv is no longer plain CSV"
"$MANAGER" stats "$WORK/central.db" --view endings > /dev/null 2> "$WORK/view.err"
grep -q "$lost records lost" "$WORK/view.err" || fail "manager stats --view does not say it"
ok "manager stats --view says it too"
"$MANAGER" report -q "$WORK/central.db" -o "$WORK/report"
for f in summary.txt index.html; do
  grep -q "$lost records lost by the layer (spool full) in 1 process" "$WORK/report/$f" ||
    fail "the report's $f does not say it"
  ok "the report's $f says it"
done
