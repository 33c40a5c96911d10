#!/usr/bin/env bash
# bench-pg.sh [CLIENTS] [EXCHANGES] - time `manager pull` of CLIENTS client
# databases of EXCHANGES exchanges each into a PostgreSQL store of our own
# (initdb in a temporary directory, a Unix socket, as tests/lib/pg.sh
# starts it), pulling them again, then `manager stats` and `manager
# report` on the URI, and the store's size. Defaults 100 x 10000; the
# figures of docs/scale.md come from this script. RUNS (default 3) runs of
# stats, min-max; OTHER_MANAGER=PATH (another build's manager) times its
# stats side by side, run for run, and its pull again.
set -euo pipefail
cd "$(dirname "$0")/.."
clients=${1:-100}
per=${2:-10000}
[[ -n ${SKIP_DEPS:-} ]] || scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j2 >/dev/null
export OBSERVE_BUILD=$PWD/build
source tests/lib/common.sh
source tests/lib/pg.sh
pg_start >/dev/null
dir=$WORK
build/bin/spoolgen "$dir/one.spool" "$per"
build/bin/slicer -q -o "$dir/one.db" "$dir/one.spool"
sqlite3 "$dir/one.db" "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;" >/dev/null
mkdir -p "$dir/clients"
for ((i = 1; i <= clients; i++)); do
  cp "$dir/one.db" "$dir/clients/client-$i.db"
  sqlite3 "$dir/clients/client-$i.db" "UPDATE client SET name = 'client-$i'"
done
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
t=$(date +%s%N)
build/bin/manager pull -q -o "$PG_URI" "$dir/clients"
first=$(ms "$t")
rows=$(pq "SELECT count(*) FROM exchange")
echo "pulled $clients databases of $per exchanges ($rows rows) into PostgreSQL in $first ms" \
  "($(( rows * 1000 / (first > 0 ? first : 1) )) exchanges/s)"
t=$(date +%s%N)
build/bin/manager pull -q -o "$PG_URI" "$dir/clients"
echo "pulled the same $clients databases again in $(ms "$t") ms"
if [[ -n ${OTHER_MANAGER:-} ]]; then
  t=$(date +%s%N)
  "$OTHER_MANAGER" pull -q -o "$PG_URI" "$dir/clients"
  echo "  $OTHER_MANAGER: pulled them again in $(ms "$t") ms"
  t=$(date +%s%N)
  build/bin/manager pull -q -o "$PG_URI" "$dir/clients"
  echo "  and this build again in $(ms "$t") ms"
fi
# stats: RUNS runs, min-max; another manager's side by side, run for run
times=() others=()
for ((r = 0; r < ${RUNS:-3}; r++)); do
  t=$(date +%s%N); build/bin/manager stats "$PG_URI" >/dev/null; times+=("$(ms "$t")")
  if [[ -n ${OTHER_MANAGER:-} ]]; then
    t=$(date +%s%N); "$OTHER_MANAGER" stats "$PG_URI" >/dev/null; others+=("$(ms "$t")")
  fi
done
# the same figures from an SQLite central database of the same sources
t=$(date +%s%N)
build/bin/manager pull -q -o "$dir/central.db" "$dir/clients"
echo "for comparison, pulled into an SQLite central database in $(ms "$t") ms"
sq=()
for ((r = 0; r < ${RUNS:-3}; r++)); do
  t=$(date +%s%N); build/bin/manager stats "$dir/central.db" >/dev/null; sq+=("$(ms "$t")")
done
minmax() { printf '%s\n' "$@" | sort -n | sed -n '1p;$p' | paste -sd- ; }
echo "manager stats on the URI (snapshot included): $(minmax "${times[@]}") ms over ${#times[@]} runs"
[[ -z ${OTHER_MANAGER:-} ]] || echo "  $OTHER_MANAGER: $(minmax "${others[@]}") ms"
echo "manager stats on the SQLite central database: $(minmax "${sq[@]}") ms"
t=$(date +%s%N)
build/bin/manager report "$PG_URI" -o "$dir/report" -q >/dev/null
echo "manager report on the URI (snapshot included): $(ms "$t") ms"
t=$(date +%s%N)
pq "SELECT client, count(*), percentile_disc(0.5) WITHIN GROUP (ORDER BY tw_ms) FROM exchange_metrics GROUP BY client" >/dev/null
echo "one query in PostgreSQL (p50 of Tw per client over exchange_metrics): $(ms "$t") ms"
echo "store size: $(pq "SELECT pg_size_pretty(pg_database_size('observe'))")," \
  "exchange $(pq "SELECT pg_size_pretty(sum(pg_total_relation_size(inhrelid))) FROM pg_inherits WHERE inhparent = 'exchange'::regclass")" \
  "with its indexes"
