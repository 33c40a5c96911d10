#!/usr/bin/env bash
# client-server.sh - experiment 2 of issue 5: client-side against server-side
# time, as in section 6.2 of the paper observe follows (docs/experiments.md:
# ~20,000 files of a real site's sizes, 10,000
# random accesses; the layer's Tt averaged 815 ms where the server's access
# log said 418 ms; its Figs. 9-11).
#
# Here: a site of N files whose sizes follow seed 002's measured web
# distribution (lognormal, mu = 7.811, sigma = 1.573 on ln bytes; sparse
# files), served by a real nginx whose listening socket has a small send
# buffer (sndbuf=8k, as the paper's Solaris server had 8 KB), reached through
# tests/tools/netsim, which delays each direction by DELAY ms and limits each
# connection's download to RATE bytes/s, reading from the server no faster
# than it can pass on (a small queue and a small receive buffer: the server
# feels the slow network as a full send buffer, as it would on a real
# path). curl under observe makes ACCESSES random accesses, PARALLEL at a
# time, each on a connection of its own (Connection: close, like the paper's
# ApacheBench 1.3). Then the layer's Tt per request is set against nginx's
# $request_time for the same request: the histograms (Fig. 9), the
# size-time scatters of both sides (Figs. 10 and 11), and the table.
#
# Checked in every run (client-server.py check_all; exit 1 on failure):
# every access is in both views exactly once; Dr is the file plus headers
# and nginx sent the whole file; Tw is at least the relay's round trip; Tt
# is never below nginx's own time.
#
# usage: scripts/experiments/client-server.sh [--quick] [-o DIR]
#   --quick  a short run (300 accesses of 1,000 files, about 15 s), as CTest's
#            experiments.client_server
#   -o DIR   output directory (default ./experiments-out/client-server)
# Environment: FILES, ACCESSES, PARALLEL, DELAY (ms each way), RATE (bytes/s
# per connection, down), SEED override the defaults (20000, 10000, 8, 20,
# 1000000, 1). The build directory is ./build, or $OBSERVE_BUILD (not built
# here). Exit 77 when nginx, curl, sqlite3 or gnuplot is missing. Network:
# loopback only; everything started here is stopped on exit.
set -euo pipefail

# shellcheck source=scripts/experiments/args.sh
source "$(dirname "$0")/args.sh"
experiment_args client-server "$@"

# shellcheck source=tests/lib/common.sh
source "$(dirname "$0")/../../tests/lib/common.sh"
# shellcheck source=tests/lib/nginx.sh
source "$REPO/tests/lib/nginx.sh"
need_cmd curl
need_cmd sqlite3
need_cmd gnuplot
NETSIM=$BUILD/bin/netsim
[ -x "$NETSIM" ] || skip "$NETSIM is not built"
HERE=$(cd "$(dirname "$0")" && pwd)

if [ "$QUICK" = 1 ]; then
  FILES=${FILES:-1000} ACCESSES=${ACCESSES:-300} PARALLEL=${PARALLEL:-4}
  DELAY=${DELAY:-5} UNIQUE=--unique
else
  FILES=${FILES:-20000} ACCESSES=${ACCESSES:-10000} PARALLEL=${PARALLEL:-8}
  DELAY=${DELAY:-20} UNIQUE=
fi
RATE=${RATE:-1000000} SEED=${SEED:-1}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

echo "== site: $FILES files, lognormal sizes (mu 7.811, sigma 1.573), seed $SEED"
"$PYTHON" "$HERE/client-server.py" site "$WORK/site" "$FILES" "$SEED"
awk -F'\t' '{ n++; s += $2; if ($2 <= 30720) small++ } END {
  printf "   %d files, %.1f MB in all, mean %.0f B, %.0f%% at most 30 KB\n", n, s / 1e6, s / n, 100 * small / n }' \
  "$WORK/site/sizes.tsv"

# nginx: the site on a port whose socket has an 8 KB send buffer
SNDBUF_PORT=$(free_port)
export NGINX_EXTRA="listen 127.0.0.1:$SNDBUF_PORT sndbuf=8k;"
nginx_start "$WORK/site"

# the relay: DELAY each way, RATE down per connection; it reads from nginx
# only as fast as it passes on (16 KiB queue, 4 KiB receive buffer)
"$NETSIM" --target "127.0.0.1:$SNDBUF_PORT" --delay "$DELAY" --rate-down "$RATE" \
  --queue-max 16Ki --target-rcvbuf 4096 --lifetime 1200 --stats "$WORK/netsim.stats" \
  > "$WORK/netsim.port" 2> "$WORK/netsim.err" &
netsim_pid=$!
at_exit "kill $netsim_pid 2>/dev/null; wait $netsim_pid 2>/dev/null"
wait_until 60 test -s "$WORK/netsim.port" || fail "netsim did not start in 60 s: $(cat "$WORK/netsim.err")"
RELAY=http://127.0.0.1:$(head -n 1 "$WORK/netsim.port")
echo "== nginx (sndbuf=8k) behind netsim: ${DELAY} ms each way, $RATE B/s down per connection"

"$PYTHON" "$HERE/client-server.py" urls "$WORK/site" "$RELAY" "$ACCESSES" "$SEED" "$WORK/urls.cfg" $UNIQUE
echo "== observe -- curl --parallel --parallel-max $PARALLEL: $ACCESSES random accesses"
DB=$OUT/client-server.db
rm -f "$DB" "$DB-wal" "$DB-shm"
start=$(date +%s.%N)
timeout 1200 "$OBSERVE" -q -o "$DB" -- curl -s --no-progress-meter --parallel --parallel-max "$PARALLEL" \
  --parallel-immediate -H 'Connection: close' --config "$WORK/urls.cfg" ||
  fail "curl failed (status $?)"
end=$(date +%s.%N)
nginx_wait_log "$ACCESSES"
nginx_settle
kill -TERM "$netsim_pid"
wait "$netsim_pid" 2>/dev/null || true
awk -v s="$start" -v e="$end" 'BEGIN { printf "   %.1f s\n", e - s }'
echo "   relay: $(cat "$WORK/netsim.stats" 2>/dev/null || tail -n 1 "$WORK/netsim.err")"
cp "$NGINX_LOG" "$OUT/access.log"
cp "$WORK/site/sizes.tsv" "$OUT/sizes.tsv"

echo "== client (observe) against server (nginx \$request_time)"
"$PYTHON" "$HERE/client-server.py" analyse "$DB" "$OUT/access.log" "$OUT/sizes.tsv" "$OUT" "$DELAY" --check
echo "== manager report"
"$BUILD/bin/manager" report "$DB" -o "$OUT/report" -q
echo "results: $OUT/client-server.md, $OUT/fig9.png, $OUT/fig10.png, $OUT/fig11.png, $OUT/report/index.html"
