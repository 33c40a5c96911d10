#!/usr/bin/env bash
# demo.sh - the README's first command: build everything, start a local nginx
# on a free loopback port over a small site, run curl, ApacheBench (with and
# without keep-alive) and headless Chromium (when installed) under observe,
# and print what they did on the network, exchange by exchange, then a
# summary by program and the path of the database. A second client machine
# ("lab-b": python and wget, its own database) is then merged with the
# first by manager pull into a central database, compared by manager stats,
# and drawn by manager report: the demo ends with the report's page, which
# has a waterfall per program (Chromium's page load among them) and, as
# before and after, lab-b's same requests without keep-alive (a database
# of their own, the baseline) against its run with keep-alive.
#
# usage: scripts/demo.sh [DB]     (default ./demo/observe.db, made afresh;
#                                  the rest goes next to it)
# The build directory is ./build, or $OBSERVE_BUILD.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
build=${OBSERVE_BUILD:-build}
echo "== building in $build"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
export OBSERVE_BUILD=$build

# shellcheck source=tests/lib/common.sh
source tests/lib/common.sh
# shellcheck source=tests/lib/nginx.sh
source tests/lib/nginx.sh
source tests/lib/chromium.sh

DB=$(realpath -m "${1:-demo/observe.db}")
OUT=$(dirname "$DB")
LAB_B=$OUT/lab-b.db CENTRAL=$OUT/central.db REPORT=$OUT/report
BEFORE=$OUT/lab-b-before.db
mkdir -p "$OUT"
rm -rf "$DB" "$DB-wal" "$DB-shm" "$LAB_B"* "$BEFORE"* "$CENTRAL"* "$REPORT"

make_site "$WORK/site"
nginx_start "$WORK/site" demo-nginx
URL=$NGINX_URL
echo "== nginx on $URL serving index.html (a stylesheet, a script, two images),"
echo "   100b (100 B), 50k (51,200 B), 1m (1,048,576 B); access log $NGINX_LOG"

# run COMMAND...: under observe; its per-exchange table goes to stderr.
# The heading shows $label instead of the command when set.
label=
run() {
  echo
  echo "== observe -- ${label:-$*}"
  label=
  "$OBSERVE" -c demo -o "$DB" -- "$@"
}
# run_short COMMAND...: many exchanges: the table's first rows and last line
run_short() {
  echo
  echo "== observe -- $*"
  "$OBSERVE" -c demo -o "$DB" -- "$@" 2>&1 >/dev/null |
    awk 'NR <= 4 { print; next } { last = $0; n++ }
         END { if (n > 1) print "   ..."; print last }'
}

for f in 100b 50k 1m; do
  run curl -s -o /dev/null "$URL/$f"
done
run_short ab -q -n 50 -c 1 "$URL/100b"
run_short ab -q -k -n 50 -c 1 "$URL/100b"

chromium=$(command -v chromium || true)
if [ -n "$chromium" ]; then
  # The page goes to dom.html, Chromium's own messages to a log, observe's
  # table to the terminal: the shell in between redirects and execs.
  label="timeout 60 chromium --headless ... --dump-dom $URL/index.html"
  # shellcheck disable=SC2016
  run sh -c 'out=$1 err=$2; shift 2; exec "$@" >"$out" 2>"$err"' sh \
    "$WORK/dom.html" "$WORK/chromium.log" \
    timeout 60 "$chromium" "${CHROMIUM_FLAGS[@]}" \
    --user-data-dir="$WORK/chromium" --dump-dom "$URL/index.html" ||
    echo "(chromium exited with status $?)"
  grep -q "observe demo" "$WORK/dom.html" ||
    echo "(chromium did not print the page; its messages: $WORK/chromium.log)"
else
  echo
  echo "== chromium is not installed: no page load (scripts/deps.sh installs it as root)"
fi

nginx_settle
echo
echo "== nginx logged $(wc -l < "$NGINX_LOG") requests;" \
  "observe recorded $(sqlite3 "$DB" 'SELECT count(*) FROM exchange WHERE dr > 0')" \
  "exchanges with a response"

echo
echo "== summary by program (ms; from the views exchange_metrics and connection_metrics)"
sqlite3 -header -column "$DB" "
  WITH e AS (
    SELECT replace(program, rtrim(program, replace(program, '/', '')), '') AS prog,
           tw_ms, tr_ms, dr,
           row_number() OVER (PARTITION BY program ORDER BY tw_ms IS NULL, tw_ms) AS k,
           count(tw_ms) OVER (PARTITION BY program) AS n
    FROM exchange_metrics),
  c AS (
    SELECT replace(program, rtrim(program, replace(program, '/', '')), '') AS prog,
           count(*) AS connections, avg(te_ms) AS te, avg(tt_ms) AS tt
    FROM connection_metrics GROUP BY 1)
  SELECT e.prog AS program, c.connections, count(*) AS exchanges,
         printf('%.3f', c.te) AS avg_te,
         printf('%.3f', avg(e.tw_ms)) AS avg_tw,
         printf('%.3f', max(CASE WHEN e.k = (e.n + 1) / 2 THEN e.tw_ms END)) AS median_tw,
         printf('%.3f', avg(e.tr_ms)) AS avg_tr,
         printf('%.3f', max(e.tr_ms)) AS max_tr,
         printf('%.3f', c.tt) AS avg_tt,
         sum(e.dr) AS bytes_received
  FROM e JOIN c USING (prog) GROUP BY e.prog ORDER BY e.prog"
echo
echo "== by response size (Tw: wait for the first byte; Trecv: first to last byte)"
sqlite3 -header -column "$DB" "
  SELECT dr AS bytes_received, count(*) AS n,
         printf('%.3f', avg(tw_ms)) AS avg_tw,
         printf('%.3f', avg(trecv_ms)) AS avg_trecv,
         printf('%.1f', avg(rr) / 1e6) AS avg_rr_MBps
  FROM exchange_metrics WHERE dr > 1000 GROUP BY dr ORDER BY dr"
echo
echo "database: $DB"
echo "try:  sqlite3 -header -column $DB 'SELECT program, path, status, te_ms, tw_ms, tr_ms, dr FROM exchange_metrics LIMIT 10'"

# A second client machine: its own name and database, as if on another host.
# Before: its requests each on a new connection; after: on one, kept alive.
echo
echo "== a second client, lab-b, before: python (a connection per request, with pauses) and wget"
OBSERVE_CLIENT=lab-b "$OBSERVE" -q -o "$BEFORE" -- "$PYTHON" -c "
import time, urllib.request
for i, p in enumerate(['/index.html', '/50k', '/100b', '/1m'] * 5):
    urllib.request.urlopen('$URL' + p).read()
    time.sleep(0.02 * (i % 3))"
OBSERVE_CLIENT=lab-b "$OBSERVE" -q -o "$BEFORE" -- wget -q -O /dev/null "$URL/1m" "$URL/50k"
echo "   $(sqlite3 "$BEFORE" 'SELECT count(*) FROM connection') connections in $BEFORE"
echo "== lab-b, after: python (keep-alive, with pauses) and wget"
OBSERVE_CLIENT=lab-b "$OBSERVE" -q -o "$LAB_B" -- "$PYTHON" -c "
import http.client, time
c = http.client.HTTPConnection('127.0.0.1', $NGINX_PORT)
for i, p in enumerate(['/index.html', '/50k', '/100b', '/1m'] * 5):
    c.request('GET', p); c.getresponse().read()
    time.sleep(0.02 * (i % 3))
c.close()"
OBSERVE_CLIENT=lab-b "$OBSERVE" -q -o "$LAB_B" -- wget -q -O /dev/null "$URL/1m" "$URL/50k"
echo "   $(sqlite3 "$LAB_B" 'SELECT count(*) FROM exchange') exchanges on" \
  "$(sqlite3 "$LAB_B" 'SELECT count(*) FROM connection') connections in $LAB_B"

echo
echo "== manager pull -o $CENTRAL $DB $LAB_B"
"$BUILD/bin/manager" pull -o "$CENTRAL" "$DB" "$LAB_B"
echo
echo "== manager stats $CENTRAL --by client (ms; rates in MB/s)"
"$BUILD/bin/manager" stats "$CENTRAL" --by client
echo
echo "== manager compare $BEFORE $LAB_B --by path (lab-b before and after keep-alive; ms, MB/s)"
"$BUILD/bin/manager" compare "$BEFORE" "$LAB_B" --by path
echo
echo "== manager findings $BEFORE (lab-b before keep-alive: why it was slow, what to change)"
"$BUILD/bin/manager" findings "$BEFORE"
echo
echo "== manager waterfall $DB --program chromium -o $OUT/page.svg"
if [ -n "$chromium" ]; then
  "$BUILD/bin/manager" waterfall "$DB" --program chromium -o "$OUT/page.svg"
else
  echo "   (no Chromium page load)"
fi
echo
echo "== manager report $CENTRAL -o $REPORT --baseline $BEFORE"
"$BUILD/bin/manager" report "$CENTRAL" -o "$REPORT" --baseline "$BEFORE" >/dev/null
echo "   the report opens with its findings ($REPORT/summary.txt):"
sed -n '/^findings, the most time/,/^$/p; /^no finding/p' "$REPORT/summary.txt" | sed 's/^/     /'
echo "   $(ls "$REPORT"/*.png | wc -l) plots (PNG and SVG), $REPORT/summary.txt;"
echo "   before and after (lab-b against its baseline), waterfalls:"
sed -n 's/^waterfall /     /p' "$REPORT/summary.txt"
echo
echo "report: $REPORT/index.html   (open it in a browser)"
