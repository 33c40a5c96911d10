#!/usr/bin/env bash
# bench-slicer.sh [REQUESTS] [RUNS] - the slicer on REAL spools made by the
# layer (no generator), side by side in one run:
#   1. spools: ab -k -c 4 -n REQUESTS against nginx (100-byte file,
#      loopback), and wrk -t2 -c32 for WRK_SECONDS (default 4) when wrk is
#      installed; each recorded with libobserve.so preloaded;
#   2. per spool: the slicer into a fresh database (wall time min-max of
#      RUNS, peak RSS), the floor (SQLite copying the same rows into the
#      same schema: an empty database with the slicer's schema, ATTACH the
#      slicer's output, INSERT INTO t SELECT * FROM o.t per table in one
#      transaction; min-max of RUNS) and their ratio (min over min);
#   3. per spool: the slicer again on the same spool into the same database
#      (nothing new: the re-run cost), min-max of RUNS, and its share of a
#      fresh slice.
# Defaults: 200000 requests, 3 runs. The build directory is ./build, or
# $OBSERVE_BUILD. BENCH_KEEP=DIR keeps the spools and databases there.
set -euo pipefail
cd "$(dirname "$0")/.."
REQUESTS=${1:-200000}
RUNS=${2:-3}
WRK_SECONDS=${WRK_SECONDS:-4}
build=${OBSERVE_BUILD:-build}
[[ -n ${SKIP_DEPS:-} ]] || scripts/deps.sh
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j2 >/dev/null
export OBSERVE_BUILD=$build
# shellcheck source=tests/lib/common.sh
source tests/lib/common.sh
# shellcheck source=tests/lib/nginx.sh
source tests/lib/nginx.sh
if [[ -n ${BENCH_KEEP:-} ]]; then
  mkdir -p "$BENCH_KEEP"
  out=$(cd "$BENCH_KEEP" && pwd)
else
  out=$WORK
fi
make_site "$WORK/site"
nginx_start "$WORK/site"

# now_ms: monotonic milliseconds
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# minmax FILE: "min-max" of the numbers in FILE
minmax() { sort -n "$1" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%d-%d", lo, hi }'; }
lowest() { sort -n "$1" | head -1; }

# floor DB OUT: SQLite copying DB's rows into a fresh database with the schema
floor() {
  rm -f "$2" "$2"-wal "$2"-shm
  "$SLICER" -q -o "$2"
  sqlite3 -batch "$2" >/dev/null <<SQL
PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
ATTACH '$1' AS o;
BEGIN;
INSERT INTO client SELECT * FROM o.client;
INSERT INTO process SELECT * FROM o.process;
INSERT INTO connection SELECT * FROM o.connection;
INSERT INTO exchange SELECT * FROM o.exchange;
COMMIT;
SQL
}

declare -a spools=()
mkdir -p "$out/ab" "$out/wrk"
chmod 0700 "$out/ab" "$out/wrk"
rm -f "$out"/ab/*.spool "$out"/wrk/*.spool
env LD_PRELOAD="$LAYER_PRELOAD" OBSERVE_DIR="$out/ab" ab -q -k -c 4 -n "$REQUESTS" "$NGINX_URL/100b" >/dev/null
spools+=(ab)
if command -v wrk >/dev/null; then
  env LD_PRELOAD="$LAYER_PRELOAD" OBSERVE_DIR="$out/wrk" wrk -t2 -c32 -d"${WRK_SECONDS}s" "$NGINX_URL/100b" >/dev/null
  spools+=(wrk)
fi

printf '%-5s %9s %15s %8s %15s %7s %15s %7s\n' spool exchanges "slicer ms" "RSS MiB" "floor ms" ratio "again ms" share
for s in "${spools[@]}"; do
  : > "$WORK/t.slice"; : > "$WORK/t.floor"; : > "$WORK/t.again"
  for ((i = 0; i < RUNS; i++)); do
    db=$out/$s.db
    rm -f "$db" "$db"-wal "$db"-shm
    t0=$(now_ms)
    /usr/bin/time -f %M -o "$WORK/rss" "$SLICER" -q -o "$db" "$out/$s"
    t1=$(now_ms)
    echo $((t1 - t0)) >> "$WORK/t.slice"
    echo $(( $(cat "$WORK/rss") / 1024 )) >> "$WORK/rss.$s"
    t0=$(now_ms)
    floor "$db" "$out/$s.floor.db"
    t1=$(now_ms)
    echo $((t1 - t0)) >> "$WORK/t.floor"
    t0=$(now_ms)
    "$SLICER" -q -o "$db" "$out/$s"
    t1=$(now_ms)
    echo $((t1 - t0)) >> "$WORK/t.again"
  done
  n=$(q "$db" "SELECT count(*) FROM exchange")
  sl=$(lowest "$WORK/t.slice"); fl=$(lowest "$WORK/t.floor"); ag=$(lowest "$WORK/t.again")
  printf '%-5s %9d %15s %8s %15s %7s %15s %7s\n' "$s" "$n" "$(minmax "$WORK/t.slice")" \
    "$(sort -n "$WORK/rss.$s" | tail -1)" "$(minmax "$WORK/t.floor")" \
    "$(awk -v a="$sl" -v b="$fl" 'BEGIN { printf "%.2fx", a / (b ? b : 1) }')" \
    "$(minmax "$WORK/t.again")" \
    "$(awk -v a="$ag" -v b="$sl" 'BEGIN { printf "%.0f%%", 100 * a / (b ? b : 1) }')"
done
