#!/usr/bin/env bash
# bench-slicer.sh [REQUESTS] [RUNS] - the slicer on REAL spools made by the
# layer (no generator), side by side in one run:
#   1. spools, each client run with libobserve.so preloaded against nginx
#      on loopback:
#      ab     ab -k -c 4 -n REQUESTS (100-byte file); AB_PROCS (default 1)
#             such runs one after another, a spool each (AB_PROCS=10 with
#             REQUESTS=1000000: 10 M exchanges in 10 spools);
#      wrk    wrk -t2 -c32 (100-byte file) stopped after REQUESTS responses
#             (when wrk is installed);
#      chrome headless Chromium loading a page of CHROME_RESOURCES (default
#             300) images, scripts and stylesheets CHROME_LOADS times
#             (default 10, a fresh profile each: nothing cached), when
#             chromium is installed;
#      abnew  ab -c 4 -n REQUESTS without keep-alive: a connection per
#             exchange (not in the default set);
#      SPOOLS (default "ab wrk chrome") chooses among them;
#   2. per spool: the slicer into a fresh database (wall time min-max of
#      RUNS, least user CPU seconds, peak RSS), the floor (SQLite copying the
#      same rows into the same schema: an empty database made by slicer -o,
#      ATTACH the slicer's output, INSERT INTO t SELECT * FROM o.t per table
#      in one transaction; min-max of RUNS, least user CPU) and their
#      ratios: wall min over min ("ratio"), user CPU least over least
#      ("cpu");
#   3. per spool: the slicer again on the same spool into the same database
#      (nothing new: the re-run cost), min-max of RUNS, and its share of a
#      fresh slice.
# BASELINE_SLICER=PATH (another build's slicer, e.g. main's) adds per spool
# a line "<spool>-" with its time and ratios against the same floor, run in
# the same loop.
# Defaults: 200000 requests, 3 runs. The build directory is ./build, or
# $OBSERVE_BUILD. BENCH_KEEP=DIR keeps the spools and databases there.
set -euo pipefail
cd "$(dirname "$0")/.."
REQUESTS=${1:-200000}
RUNS=${2:-3}
AB_PROCS=${AB_PROCS:-1}
CHROME_RESOURCES=${CHROME_RESOURCES:-300}
CHROME_LOADS=${CHROME_LOADS:-10}
SPOOLS=${SPOOLS:-ab wrk chrome}
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh
source tests/lib/chromium.sh
out=$(bench_dir "${BENCH_KEEP:-}")
make_site "$WORK/site"
# the page Chromium loads: every resource a distinct URL of a small file
{
  echo '<!doctype html><html><head><meta charset="utf-8"><title>many</title>'
  echo '<link rel="icon" href="data:,">'
  for ((i = 0; i < CHROME_RESOURCES; i++)); do
    case $((i % 4)) in
      0) echo "<link rel=\"stylesheet\" href=\"style.css?$i\">" ;;
      1) echo "<script src=\"app.js?$i\"></script>" ;;
      2) echo "<img src=\"logo.png?$i\" alt=\"\">" ;;
      3) echo "<img src=\"dot.svg?$i\" alt=\"\">" ;;
    esac
  done
  echo '</head><body><h1>many</h1></body></html>'
} > "$WORK/site/many.html"
nginx_start "$WORK/site"

# minmax FILE: "min-max" of the numbers in FILE (first column)
minmax() { sort -n "$1" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%d-%d", lo, hi }'; }
# fastest FILE: the line of FILE with the lowest first column
fastest() { sort -n "$1" | head -1; }
# least_cpu FILE: the lowest second column of FILE
least_cpu() { awk 'NR == 1 || $2 < m { m = $2 } END { print m }' "$1"; }
# timed FILE CMD...: run CMD, append "wall_ms user_s rss_kib" to FILE
# (wall and user CPU time, ms resolution, from bash's time; peak RSS from
# /usr/bin/time)
timed() {
  local file=$1 t
  shift
  t=$( { TIMEFORMAT="%3R %3U"; time /usr/bin/time -f %M -o "$WORK/rss" "$@" >/dev/null 2>>"$WORK/timed.err"; } 2>&1 )
  awk -v t="$t" -v rss="$(cat "$WORK/rss")" \
    'BEGIN { split(t, a, " "); printf "%d %.3f %d\n", a[1] * 1000, a[2], rss }' >> "$file"
}

# the floor, one process tree (its CPU time measured whole): SQLite copying
# DB's rows into a fresh database OUT with the slicer's schema
cat > "$WORK/floor.sh" <<'EOF'
#!/usr/bin/env bash
set -euo pipefail
rm -f "$3" "$3"-wal "$3"-shm
"$1" -q -o "$3"
sqlite3 -batch "$3" >/dev/null <<SQL
PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
ATTACH '$2' AS o;
BEGIN;
INSERT INTO client SELECT * FROM o.client;
INSERT INTO process SELECT * FROM o.process;
INSERT INTO connection SELECT * FROM o.connection;
INSERT INTO exchange SELECT * FROM o.exchange;
COMMIT;
SQL
EOF
chmod +x "$WORK/floor.sh"

# record NAME CMD...: run CMD with the layer, its spools into $out/NAME
record() {
  local name=$1
  shift
  env LD_PRELOAD="$LAYER_PRELOAD" OBSERVE_DIR="$out/$name" "$@"
}

# both of wrk's threads made their requests (stop.lua)
wrk_done() { [ -f "$WORK/wrk.done" ] && [ "$(wc -l < "$WORK/wrk.done")" -ge 2 ]; }

declare -a spools=()
for s in $SPOOLS; do
  rm -rf "${out:?}/$s"
  mkdir -p "$out/$s"
  chmod 0700 "$out/$s"
  case $s in
    ab)
      for ((i = 0; i < AB_PROCS; i++)); do
        record ab ab -q -k -c 4 -n "$REQUESTS" "$NGINX_URL/100b" >/dev/null
      done
      ;;
    abnew)
      record abnew ab -q -c 4 -n "$REQUESTS" "$NGINX_URL/100b" >/dev/null
      ;;
    wrk)
      command -v wrk >/dev/null || continue
      # each of the 2 threads stops after its half of REQUESTS responses
      # and says so in wrk.done; then wrk (which would sleep out its -d) is
      # told to end
      rm -f "$WORK/wrk.done"
      cat > "$WORK/stop.lua" <<EOF
local n = 0
response = function()
  n = n + 1
  if n == $(( (REQUESTS + 1) / 2 )) then
    local f = io.open("$WORK/wrk.done", "a"); f:write("done\\n"); f:close()
    wrk.thread:stop()
  end
end
EOF
      # not through record: SIGINT must reach wrk itself
      env LD_PRELOAD="$LAYER_PRELOAD" OBSERVE_DIR="$out/wrk" \
        wrk -t2 -c32 -d600s -s "$WORK/stop.lua" "$NGINX_URL/100b" >/dev/null &
      wrk_pid=$!
      wait_until 600 wrk_done ||
        fail "wrk did not make $REQUESTS requests in 600 s"
      kill -INT "$wrk_pid"
      wait "$wrk_pid"
      ;;
    chrome)
      command -v chromium >/dev/null || continue
      for ((i = 0; i < CHROME_LOADS; i++)); do
        rm -rf "$WORK/profile"
        record chrome timeout 120 chromium "${CHROMIUM_FLAGS[@]}" \
          --user-data-dir="$WORK/profile" --dump-dom "$NGINX_URL/many.html" \
          > "$WORK/dom.html" 2>> "$WORK/chromium.log"
        grep -q '<h1>many</h1>' "$WORK/dom.html" || fail "chromium did not load the page (see $WORK/chromium.log)"
      done
      ;;
    *) fail "unknown spool kind $s (SPOOLS: ab abnew wrk chrome)" ;;
  esac
  spools+=("$s")
done

printf '%-8s %9s %13s %6s %6s %13s %6s %7s %7s %11s %6s\n' spool exchanges "slicer ms" user RSS \
  "floor ms" user ratio "cpu" "again ms" share
for s in "${spools[@]}"; do
  rm -f "$WORK"/t.*
  db=$out/$s.db
  for ((i = 0; i < RUNS; i++)); do
    rm -f "$db" "$db"-wal "$db"-shm
    timed "$WORK/t.slice" "$SLICER" -q -o "$db" "$out/$s"
    timed "$WORK/t.floor" "$WORK/floor.sh" "$SLICER" "$db" "$out/$s.floor.db"
    timed "$WORK/t.again" "$SLICER" -q -o "$db" "$out/$s"
    if [[ -n ${BASELINE_SLICER:-} ]]; then
      rm -f "$db.base" "$db.base"-wal "$db.base"-shm
      timed "$WORK/t.base" "$BASELINE_SLICER" -q -o "$db.base" "$out/$s"
    fi
  done
  n=$(q "$db" "SELECT count(*) FROM exchange")
  read -r fl _ < <(fastest "$WORK/t.floor")
  fl_user=$(least_cpu "$WORK/t.floor")
  read -r ag _ < <(fastest "$WORK/t.again")
  for v in slice base; do
    [[ -s $WORK/t.$v ]] || continue
    read -r sl _ < <(fastest "$WORK/t.$v")
    sl_user=$(least_cpu "$WORK/t.$v")
    printf '%-8s %9d %13s %6s %6s %13s %6s %7s %7s %11s %6s\n' "$s$([[ $v == base ]] && echo -)" "$n" \
      "$(minmax "$WORK/t.$v")" "$sl_user" \
      "$(awk '$3 > m { m = $3 } END { printf "%dM", m / 1024 }' "$WORK/t.$v")" \
      "$(minmax "$WORK/t.floor")" "$fl_user" \
      "$(awk -v a="$sl" -v b="$fl" 'BEGIN { printf "%.2fx", a / (b ? b : 1) }')" \
      "$(awk -v a="$sl_user" -v b="$fl_user" 'BEGIN { printf "%.2fx", a / (b > 0 ? b : 0.01) }')" \
      "$([[ $v == slice ]] && minmax "$WORK/t.again" || echo -)" \
      "$([[ $v == slice ]] && awk -v a="$ag" -v b="$sl" 'BEGIN { printf "%.0f%%", 100 * a / (b ? b : 1) }' || echo -)"
  done
done
