#!/usr/bin/env bash
# demo.sh - the main job: build everything, start a local nginx over a small
# site, run curl, ab (with and without keep-alive) and headless Chromium
# (when installed) under observe, and print what they did on the network.
#
# usage: scripts/demo.sh [DB]     (default ./demo/observe.db)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j2 >/dev/null

source tests/lib/common.sh
source tests/lib/nginx.sh

DB=$(realpath -m "${1:-demo/observe.db}")
mkdir -p "$(dirname "$DB")"
rm -f "$DB" "$DB-wal" "$DB-shm"

make_site "$WORK/site"
nginx_start "$WORK/site" demo-nginx
URL=http://127.0.0.1:$NGINX_PORT
echo "== nginx on $URL serving index.html, 100b, 50k (51,200 B), 1m (1,048,576 B)"

run() {
  echo
  echo "== observe -- $*"
  "$OBSERVE" -c demo -o "$DB" -- "$@"
}
run_quiet() {  # many exchanges: only observe's last line
  echo
  echo "== observe -- $*"
  "$OBSERVE" -c demo -o "$DB" -- "$@" 2>&1 >/dev/null | tail -n 1
}
for f in 100b 50k 1m; do
  run curl -s -o /dev/null "$URL/$f"
done
run_quiet ab -q -n 50 -c 1 "$URL/100b"
run_quiet ab -q -k -n 50 -c 1 "$URL/100b"
if command -v chromium >/dev/null 2>&1; then
  run timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-quic \
    --no-first-run --disable-background-networking --disable-component-update \
    --disable-sync --user-data-dir="$WORK/chromium" --dump-dom "$URL/index.html" \
    >/dev/null 2>"$WORK/chromium.log" || echo "(chromium exited with $?)"
else
  echo; echo "== chromium is not installed: skipping the page load"
fi

echo
echo "== summary by program (times in ms, from the view exchange_metrics)"
sqlite3 -header -column "$DB" "
  SELECT replace(program, rtrim(program, replace(program, '/', '')), '') AS program,
         count(*) AS exchanges,
         count(DISTINCT connection_id) AS connections,
         printf('%.3f', avg(te_ms)) AS avg_te,
         printf('%.3f', avg(tw_ms)) AS avg_tw,
         printf('%.3f', avg(tr_ms)) AS avg_tr,
         printf('%.3f', max(tr_ms)) AS max_tr,
         sum(dr) AS bytes_received
  FROM exchange_metrics GROUP BY 1 ORDER BY 1"
echo
echo "== by response size (curl and chromium fetch all three files)"
sqlite3 -header -column "$DB" "
  SELECT dr AS bytes, count(*) AS n, printf('%.3f', avg(tw_ms)) AS avg_tw,
         printf('%.3f', avg(trecv_ms)) AS avg_trecv,
         printf('%.1f', avg(rr) / 1e6) AS avg_rr_MBps
  FROM exchange_metrics WHERE dr > 1000 GROUP BY dr ORDER BY dr"
echo
echo "database: $DB"
echo "try:  sqlite3 $DB 'SELECT * FROM exchange_metrics LIMIT 5'"
