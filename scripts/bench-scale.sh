#!/usr/bin/env bash
# bench-scale.sh [CLIENTS] [PER] - every step at CLIENTS x PER exchanges,
# from a REAL spool: ab -k -c 4 -n PER against nginx with the layer
# preloaded (one spool); the slicer on it (one client database); that
# database copied CLIENTS times under CLIENTS client names; then manager
# pull of them all into a new central database, pull again (nothing new),
# manager stats --by client and manager report. Wall time and peak RSS
# (/usr/bin/time) of each step, one line each. Defaults 10 x 100000
# (1 M exchanges); the issue's scale is 100 x 100000 (10 M).
# BENCH_DIR=DIR keeps the spool and the databases there (reused when the
# spool holds PER exchanges already). BEFORE=MANAGER also times that
# (older) manager's report on the same central database, alternating
# with this one's (RUNS=N times each, default 1), and says whether the
# two report directories are the same (diff -r).
set -euo pipefail
cd "$(dirname "$0")/.."
CLIENTS=${1:-10}
PER=${2:-100000}
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh
MANAGER=$BUILD/bin/manager
dir=$(bench_dir "${BENCH_DIR:-}")

if [[ ! -f $dir/one.db || $(q "$dir/one.db" "SELECT count(*) FROM exchange") != "$PER" ]]; then
  make_site "$WORK/site"
  nginx_start "$WORK/site"
  rm -rf "$dir/spool" "$dir/one.db"*
  mkdir -m 0700 "$dir/spool"
  env LD_PRELOAD="$LAYER_PRELOAD" OBSERVE_DIR="$dir/spool" ab -q -k -c 4 -n "$PER" "$NGINX_URL/100b" >/dev/null
fi
echo "scale: $CLIENTS clients x $PER exchanges = $((CLIENTS * PER)) exchanges"
rm -f "$dir/one.db"*
step "slicer ($PER exchanges)" "$SLICER" -q -o "$dir/one.db" "$dir/spool"
step "slicer again (nothing new)" "$SLICER" -q -o "$dir/one.db" "$dir/spool"
sqlite3 "$dir/one.db" "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;" >/dev/null
rm -rf "$dir/clients" "$dir"/central.db* "$dir/report"
mkdir -p "$dir/clients"
for ((i = 1; i <= CLIENTS; i++)); do
  cp "$dir/one.db" "$dir/clients/client-$i.db"
  sqlite3 "$dir/clients/client-$i.db" "UPDATE client SET name = 'client-$i'"
done
step "manager pull ($CLIENTS sources)" "$MANAGER" pull -q -o "$dir/central.db" "$dir/clients"
step "manager pull again" "$MANAGER" pull -q -o "$dir/central.db" "$dir/clients"
step "manager stats --by client" "$MANAGER" stats "$dir/central.db" --by client
if [[ -z ${BEFORE:-} ]]; then
  step "manager report" "$MANAGER" report "$dir/central.db" -o "$dir/report" -q
  exit 0
fi
for ((r = 1; r <= ${RUNS:-1}; r++)); do
  rm -rf "$dir/report-before" "$dir/report"
  step "manager report (BEFORE)" "$BEFORE" report "$dir/central.db" -o "$dir/report-before" -q
  step "manager report" "$MANAGER" report "$dir/central.db" -o "$dir/report" -q
done
if diff -r "$dir/report-before" "$dir/report" >/dev/null; then
  echo "report directories: the same"
else
  echo "report directories: DIFFERENT (diff -r $dir/report-before $dir/report)"
fi
