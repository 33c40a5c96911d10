#!/usr/bin/env bash
# overhead.sh - experiment 1 of issue 5: the layer's overhead, as in the
# paper's section 6.1 (docs/references.md, docs/experiments.md: two
# ApacheBench clients fetch a 51,200-byte file from one server at the same
# time, one through the observation layer, one bare; the mean throughput per
# connection differed by 2%).
#
# Against a real nginx on a free loopback port (tests/lib/nginx.sh):
#  1. ab, concurrent (the paper's set-up): two `ab -c 1` (a connection per
#     request) fetch /50k (51,200 B) AT THE SAME TIME for the same number of
#     seconds (-t), one with libobserve.so preloaded, one bare. Per client,
#     the mean throughput per connection = bytes per connection / mean
#     connection time = (Total transferred / n) / (Time taken / n), both from
#     ab's own summary, the same way for both clients. (ab's per-request file,
#     -g, rounds every time to whole milliseconds, and a request here takes
#     0.1-0.4 ms, so it cannot serve.) Equal running times (-t rather than
#     -n) keep both clients in competition to the end: with -n the faster
#     one finishes first and the other runs alone for the rest. Odd rounds
#     start the observed client first, even rounds the bare one. For
#     context, the layer's own view of the observed client (Σ(Ds+Dr)/ΣTt and
#     the mean per-connection Ra) is reported next to ab's figure.
#     Each round is followed by an A/A control: the same with both clients
#     bare, which shows how far two identical clients differ here.
#  2. The same comparison for other clients, as alternating sequential pairs
#     (they cannot share two cores fairly), the order swapped every round:
#     curl with N URLs on one command line (one process, keep-alive), a fresh
#     curl per fetch, wrk -t1 -c4 -d S (requests/s), and headless Chromium
#     loading a page with four images (--dump-dom; a fresh profile per load).
#
# Every figure is a rate (higher is faster), so ratio = observed / bare: 0.98
# means 2% slower under the layer. Per client: median of the rounds' bare and
# observed rates, the median of the per-round ratios and their min-max.
# Output (printed, and in DIR): overhead.md (markdown table and notes),
# overhead.csv (the table), rounds.csv (every round), ra.csv (ab's figure and
# the layer's per round) and overhead.png (per-round ratios per client).
#
# Checked in every run (a failure exits 1): both ab clients finished with no
# failed or non-2xx request and each moved exactly 51,200 B of body per
# request; the observed ab database holds exactly one exchange per completed
# ab request, each on a connection of its own, and every Dr equals the
# response's size on the wire (headers + 51,200; measured apart with curl
# --http1.0), plus one connection with nothing received: the one ab had just
# opened when its time ran out; nginx logged every completed request as 200
# with 51,200 B; curl and Chromium fetched all they should (nginx's log), wrk
# saw no socket error or bad status; the layer recorded each observed curl
# fetch and Chromium page (and its 4 images) once, and at least every
# request wrk completed; and the layer at most doubles ab's own CPU time
# per request (user + system, GNU time; the median over the rounds of
# observed / bare requests per CPU second >= 0.5; measured per round under
# load: 0.92-1.08, the A/A control 0.91-1.23). CPU time, not wall time: with two ab
# processes and nginx on the machine's cores beside whatever else runs
# there, one descheduled process moves a round's wall-time ratio by half
# (the A/A control of two identical bare clients went to 0.54 with a busy
# loop per CPU beside it), while the CPU a process uses per request hardly
# depends on how long it waited for a CPU. The wall-time figures are
# reported, not asserted; the run without --quick gives them
# (docs/experiments.md).
#
# usage: scripts/experiments/overhead.sh [--quick] [-o DIR]
#   --quick  a short run (about 25 s here), as CTest's experiments.overhead
#   -o DIR   output directory (default ./experiments-out/overhead)
# The build directory is ./build, or $OBSERVE_BUILD (not built here). Exit 77
# (skipped) when nginx, ab, curl, wrk, sqlite3, gnuplot or GNU time is missing; without
# Chromium only that part is left out, with a note. Network: loopback only.
# nginx and every client started here are stopped on exit; every loop is
# bounded in count, every client in time (timeout), the whole run too.
set -euo pipefail

# shellcheck source=scripts/experiments/args.sh
source "$(dirname "$0")/args.sh"
experiment_args overhead "$@"

# shellcheck source=tests/lib/common.sh
source "$(dirname "$0")/../../tests/lib/common.sh"
# shellcheck source=tests/lib/nginx.sh
source "$REPO/tests/lib/nginx.sh"
source "$REPO/tests/lib/chromium.sh"

command -v nginx >/dev/null 2>&1 || PATH=$PATH:/usr/sbin
for prog in nginx ab curl wrk sqlite3 gnuplot; do need_cmd "$prog"; done
[ -x /usr/bin/time ] || skip "GNU time (/usr/bin/time) is not installed"
[ -f "$LIBOBSERVE" ] && [ -x "$SLICER" ] ||
  die "no $LIBOBSERVE or $SLICER: build first (cmake -S . -B build && cmake --build build), or set OBSERVE_BUILD"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)

if [ "$QUICK" = 1 ]; then
  AB_ROUNDS=2 AB_SECS=3            # concurrent ab: rounds x seconds
  CURL_PAIRS=2 CURL_N=300          # curl, N URLs in one process
  CURL1_PAIRS=2 CURL1_N=15         # curl, a process per fetch
  WRK_PAIRS=2 WRK_SECS=1
  CHROME_PAIRS=2 CHROME_LOADS=1    # loads per client and round
  DEADLINE=150                     # seconds for the whole run (CTest: 240)
else
  AB_ROUNDS=16 AB_SECS=4
  CURL_PAIRS=10 CURL_N=3000
  CURL1_PAIRS=10 CURL1_N=150
  WRK_PAIRS=8 WRK_SECS=4
  CHROME_PAIRS=10 CHROME_LOADS=3
  DEADLINE=900
fi
CPU_RATIO_MIN=0.5   # observed / bare requests per CPU second of ab
START=$SECONDS
# in_time WHAT: every loop asks before each step
in_time() {
  [ $((SECONDS - START)) -lt "$DEADLINE" ] || fail "$1: over the ${DEADLINE} s limit of the whole run"
}

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
ROUNDS_CSV=$OUT/rounds.csv
echo "client,round,first,bare,observed,ratio" > "$ROUNDS_CSV"
echo "round,observed_started,ab_MBps,layer_ra_MBps,layer_bytes_over_tt_MBps,connections" > "$OUT/ra.csv"

# The site: make_site's files (/50k is 51,200 B) and a page with four images.
make_site "$WORK/site"
cat > "$WORK/site/page.html" <<'HTML'
<!doctype html>
<html><head><meta charset="utf-8"><title>overhead page</title>
<link rel="icon" href="data:,"></head>
<body><h1>overhead page</h1>
<p><img src="logo.png?1" alt="a"> <img src="dot.svg?1" alt="b">
<img src="logo.png?2" alt="c"> <img src="dot.svg?2" alt="d"></p>
</body></html>
HTML
PAGE_REQUESTS=5   # the page and its four images
nginx_start "$WORK/site" overhead-nginx
URL=$NGINX_URL/50k
BODY=51200

# The response's size on the wire, headers included, measured apart from the
# layer and from ab: HTTP/1.0 as ab asks (Connection: close), HTTP/1.1 as
# curl and wrk ask (Connection: keep-alive).
wire_size() {
  curl -s -m 10 "$@" -o /dev/null -w '%{size_header} %{size_download}' "$URL" |
    awk -v body="$BODY" '$2 == body { print $1 + $2 }'
}
WIRE10=$(wire_size --http1.0)
WIRE11=$(wire_size)
[ -n "$WIRE10" ] && [ -n "$WIRE11" ] || fail "nginx does not serve $URL as $BODY bytes"

# ---------------------------------------------------------------- helpers
now_ns() { date +%s%N; }
# field FILE LABEL: the first number after "LABEL:" in ab's summary
field() { sed -n "s/^$2:[[:space:]]*\([0-9.]*\).*/\1/p" "$1" | head -n 1; }
# log_count: lines of nginx's access log
log_count() { wc -l < "$NGINX_LOG"; }
# log_settle N: until nginx's log has N lines (it writes a line after the
# response), 5 s at most; fails otherwise
log_settle() { nginx_wait_log "$1"; }
# fmt X: four significant digits, no exponent
fmt() { awk -v x="$1" 'BEGIN { if (x >= 1000) printf "%.0f", x; else printf "%.4g", x }'; }
# record CLIENT ROUND FIRST BARE OBSERVED: a line of rounds.csv
record() {
  local ratio
  ratio=$(awk -v o="$5" -v b="$4" 'BEGIN { printf "%.4f", o / b }')
  echo "$1,$2,$3,$4,$5,$ratio" >> "$ROUNDS_CSV"
  printf '  %-12s round %2d (%s first): bare %10s  observed %10s  ratio %s\n' \
    "$1" "$2" "$3" "$(fmt "$4")" "$(fmt "$5")" "$ratio"
}
bg_pids=()
# stop the clients still running if the script ends early (expanded then)
# shellcheck disable=SC2016
at_exit 'for p in "${bg_pids[@]}"; do kill "$p" 2>/dev/null; done'

echo "observe overhead (paper section 6.1): nginx on $NGINX_URL, /50k = $BODY B"
echo "response on the wire: $WIRE10 B (HTTP/1.0, ab), $WIRE11 B (HTTP/1.1, curl, wrk)"
echo "$(nproc) CPUs, $(uname -r), $(date -u +%Y-%m-%dT%H:%MZ); mode: $([ "$QUICK" = 1 ] && echo quick || echo full)"

# ------------------------------------------------ 1. ab, two at the same time
# ab -t stops after that many seconds (lasttime >= stoptime), -n only
# bounds it (after -t, or -t would set it to 50,000); -s: a socket timeout.
AB_ARGS=(-q -c 1 -t "$AB_SECS" -n 1000000 -s 10)

# The clients' CPU time from GNU time (user + system), and their system
# calls from perf's software counter where perf may count it here (else
# that column is left out).
PERF_EVENTS=
if command -v perf >/dev/null 2>&1; then
  ev=raw_syscalls:sys_enter
  if perf stat -x, -e "$ev" -o "$WORK/perf.probe" -- true >/dev/null 2>&1 &&
    grep -q "^[0-9.]*,[^,]*,$ev" "$WORK/perf.probe"; then
    PERF_EVENTS=$ev
  fi
fi
echo "client,round,bare_syscalls_per_request,observed_syscalls_per_request" > "$OUT/syscalls.csv"
# per_request TIME_FILE PERF_FILE N: "requests per CPU second, system calls
# per request" (- when perf did not count)
per_request() {
  awk -v n="$3" 'FNR == NR { cpu = $1 + $2; next } $3 == "raw_syscalls:sys_enter" { sc = $1 }
    END { printf "%.1f %s\n", n / (cpu > 0 ? cpu : 0.01), sc == "" ? "-" : sprintf("%.2f", sc / n) }' \
    "$1" FS=, "$2"
}

# ab_check FILE WHAT: ab's summary says every request completed, no failure,
# 51,200 B of body and WIRE10 B in all per request; prints "N MB/s", the
# throughput per connection = bytes per connection / mean connection time
# = (Total transferred / N) / (Time taken / N), in 10^6 B/s
ab_check() {
  local f=$1 what=$2 n failed total html secs
  n=$(field "$f" "Complete requests")
  failed=$(field "$f" "Failed requests")
  total=$(field "$f" "Total transferred")
  html=$(field "$f" "HTML transferred")
  secs=$(field "$f" "Time taken for tests")
  [ -n "$n" ] && [ "$n" -ge 100 ] || fail "$what completed ${n:-no} requests (< 100): $(tail -n 3 "$f")"
  [ "$failed" = 0 ] || fail "$what: $failed failed requests"
  ! grep -q '^Non-2xx responses' "$f" || fail "$what: $(grep '^Non-2xx' "$f")"
  [ "$html" = $((n * BODY)) ] || fail "$what: $html B of body for $n requests"
  [ "$total" = $((n * WIRE10)) ] || fail "$what: $total B for $n requests of $WIRE10 B"
  awk -v n="$n" -v t="$total" -v s="$secs" 'BEGIN { printf "%d %.3f\n", n, t / s / 1e6 }'
}

# ab_round R KIND: two ab at the same time. KIND observed: one with the
# layer (its spool in $WORK/ab-spool.R), one bare; KIND control: both bare
# (the A/A control: what two identical clients differ by here). Odd rounds
# start the observed (or control's "observed") client first, even rounds the
# bare one. Records the round; for KIND observed checks its database.
ab_round() {
  local r=$1 kind=$2 spool=$WORK/ab-spool.$1 db=$WORK/ab.$1.db
  local order first who i rc n_b rate_b n_o rate_o before got want cpu_b cpu_o sys_b sys_o
  local -a pre meter
  mkdir -p "$spool"
  before=$(log_count)
  if ((r % 2)); then order=(observed bare) first=observed; else order=(bare observed) first=bare; fi
  bg_pids=()
  for who in "${order[@]}"; do
    pre=(env)
    [ "$kind/$who" = observed/observed ] && pre=(env LD_PRELOAD="$LAYER_PRELOAD" OBSERVE_DIR="$spool")
    meter=()
    # shellcheck disable=SC2054  # -x, is perf's field separator
    [ -n "$PERF_EVENTS" ] && meter=(perf stat -x, -e "$PERF_EVENTS" -o "$WORK/perf.$who" --)
    : > "$WORK/perf.$who"
    timeout -k 5 $((AB_SECS + 30)) "${meter[@]}" /usr/bin/time -f '%U %S' -o "$WORK/cpu.$who" \
      "${pre[@]}" ab "${AB_ARGS[@]}" "$URL" > "$WORK/ab.$who" 2>&1 &
    bg_pids+=($!)
  done
  for i in 0 1; do
    rc=0; wait "${bg_pids[$i]}" || rc=$?
    [ "$rc" = 0 ] || fail "ab ($kind, ${order[$i]}) round $r exited with $rc: $(tail -n 3 "$WORK/ab.${order[$i]}")"
  done
  bg_pids=()
  read -r n_b rate_b < <(ab_check "$WORK/ab.bare" "ab ($kind, bare) round $r")
  read -r n_o rate_o < <(ab_check "$WORK/ab.observed" "ab ($kind, $first) round $r")
  local suffix=; [ "$kind" = control ] && suffix=-aa
  record "ab$suffix" "$r" "$first" "$rate_b" "$rate_o"
  # the client's CPU: requests per CPU second; system calls per request
  read -r cpu_b sys_b < <(per_request "$WORK/cpu.bare" "$WORK/perf.bare" "$n_b")
  read -r cpu_o sys_o < <(per_request "$WORK/cpu.observed" "$WORK/perf.observed" "$n_o")
  record "ab-cpu$suffix" "$r" "$first" "$cpu_b" "$cpu_o"
  echo "$kind,$r,$sys_b,$sys_o" >> "$OUT/syscalls.csv"
  # nginx: every completed request of both clients, 200 and 51,200 B
  want=$((n_b + n_o))
  log_settle $((before + want))
  got=$(awk -F'\t' -v from="$before" 'NR > from && $7 == 200 && $8 == 51200' "$NGINX_LOG" | wc -l)
  [ "$got" -ge "$want" ] || fail "ab ($kind) round $r: nginx logged $got full responses, expected $want"
  if [ "$kind" = observed ]; then
    # the observed client's database
    "$SLICER" -q -o "$db" "$spool"
    ab_expect "SELECT count(*) FROM exchange WHERE dr = $WIRE10" "$n_o" \
      "exchanges whose Dr is the response on the wire ($WIRE10 B), one per completed request"
    # ab -t stops with its next connection just opened (its request not
    # answered, maybe not sent), and the exit closes it: n + 1 connections,
    # the last with nothing received
    ab_expect "SELECT count(*) FROM connection" $((n_o + 1)) "connections (n + 1)"
    ab_expect "SELECT count(*) FROM (SELECT connection_id FROM exchange
              GROUP BY connection_id HAVING count(*) > 1)" 0 "connections with more than one exchange"
    ab_expect "SELECT count(*) FROM connection c
              WHERE c.seq < (SELECT max(seq) FROM connection) AND NOT EXISTS
                (SELECT 1 FROM exchange e WHERE e.connection_id = c.id AND e.dr = $WIRE10)" 0 \
      "connections before the last without their response"
    ab_expect "SELECT coalesce(sum(e.dr), 0) FROM exchange e JOIN connection c ON c.id = e.connection_id
              WHERE c.seq = (SELECT max(seq) FROM connection)" 0 "bytes received on the last connection"
    # the layer's own view of the observed client, for context
    q "$db" "SELECT printf('%d,%d,%.3f,%.3f,%.3f,%d', $r, '$first' = 'observed', $rate_o,
        avg(ra) / 1e6, (sum(bytes_sent) + sum(bytes_received)) * 1e3 / sum(tt_ms) / 1e6, count(*))
        FROM connection_metrics WHERE bytes_received > 0" >> "$OUT/ra.csv"
  fi
  rm -rf "$spool" "$db" "$db-wal" "$db-shm"
}
# ab_expect SQL EXPECTED WHAT: on the database of ab_round's observed client
ab_expect() {
  local got
  got=$(q "$db" "$1")
  [ "$got" = "$2" ] || fail "ab round $r: $3: expected $2, got $got"
}

echo
echo "== ab -c 1 -t $AB_SECS, two at the same time: observed and bare, then both bare (A/A control); $AB_ROUNDS rounds"
for ((r = 1; r <= AB_ROUNDS; r++)); do
  in_time "ab round $r"
  ab_round "$r" observed
  in_time "ab control round $r"
  ab_round "$r" control
done
ok "ab: both clients completed every request, no failure; the observed one's database: one exchange per request, Dr = $WIRE10 B, in every round"

# ------------------------------------------- 2. sequential alternating pairs
# pairs CLIENT PAIRS FUNCTION: FUNCTION MODE SPOOL prints the rate of one run
# (bare, or observed with its spool in SPOOL); even rounds run bare first.
pairs() {
  local client=$1 npairs=$2 fn=$3 r first b o spool
  spool=${SPOOL_OF[$client]:-$WORK/spool-$client}
  mkdir -p "$spool"
  for ((r = 1; r <= npairs; r++)); do
    in_time "$client round $r"
    if ((r % 2)); then
      first=observed
      o=$("$fn" observed "$spool"); b=$("$fn" bare "")
    else
      first=bare
      b=$("$fn" bare ""); o=$("$fn" observed "$spool")
    fi
    record "$client" "$r" "$first" "$b" "$o"
  done
}
declare -A SPOOL_OF=()
# pre MODE SPOOL: the command prefix of a run (sets the array PRE)
pre() {
  if [ "$1" = observed ]; then PRE=(env LD_PRELOAD="$LAYER_PRELOAD" OBSERVE_DIR="$2"); else PRE=(env); fi
}
# slice_client CLIENT: its observed runs into one database; prints the path
slice_client() {
  local db=$WORK/$1.db spool=${SPOOL_OF[$1]:-$WORK/spool-$1}
  "$SLICER" -q -o "$db" "$spool"
  rm -rf "$spool"
  echo "$db"
}
# rate N NS: N per second over NS nanoseconds
rate_of() { awk -v n="$1" -v ns="$2" 'BEGIN { printf "%.3f", n / (ns / 1e9) }'; }

# curl, N URLs on one command line: one process, one keep-alive connection.
# The URLs differ by their query (curl's [1-N] glob); the bodies go to stdout.
curl_multi() {
  local before t0 t1 rc=0
  pre "$1" "$2"
  before=$(log_count)
  t0=$(now_ns)
  timeout -k 5 120 "${PRE[@]}" curl -s -f -m 100 "$URL?[1-$CURL_N]" > /dev/null || rc=$?
  t1=$(now_ns)
  [ "$rc" = 0 ] || fail "curl ($1) exited with $rc"
  log_settle $((before + CURL_N))
  rate_of "$CURL_N" $((t1 - t0))
}
echo
echo "== curl, $CURL_N URLs in one process (keep-alive), alternating pairs"
pairs curl-multi "$CURL_PAIRS" curl_multi
db=$(slice_client curl-multi)
want=$((CURL_PAIRS * CURL_N))
got=$(q "$db" "SELECT count(*) FROM exchange WHERE dr = $WIRE11 AND status = 200")
[ "$got" = "$want" ] && [ "$(q "$db" "SELECT count(*) FROM exchange")" = "$want" ] ||
  fail "curl-multi: $got exchanges of $WIRE11 B recorded, expected $want"
ok "curl-multi: the layer recorded each of the $want observed fetches once, Dr = $WIRE11 B"

# a fresh curl per fetch: process start and the layer's set-up every time
curl_each() {
  local before t0 t1 i
  pre "$1" "$2"
  before=$(log_count)
  t0=$(now_ns)
  for ((i = 1; i <= CURL1_N; i++)); do
    timeout -k 5 20 "${PRE[@]}" curl -s -f -m 10 -o /dev/null "$URL?$i" || fail "curl ($1) fetch $i failed"
  done
  t1=$(now_ns)
  log_settle $((before + CURL1_N))
  rate_of "$CURL1_N" $((t1 - t0))
}
# curl_each_check CLIENT: one process, one exchange of WIRE11 B per observed fetch
curl_each_check() {
  local db want got
  db=$(slice_client "$1")
  want=$((CURL1_PAIRS * CURL1_N))
  got=$(q "$db" "SELECT count(*) FROM exchange WHERE dr = $WIRE11 AND status = 200")
  [ "$got" = "$want" ] && [ "$(q "$db" "SELECT count(DISTINCT process_id) FROM connection")" = "$want" ] ||
    fail "$1: $got exchanges of $WIRE11 B recorded, expected $want, one per process"
  ok "$1: one process, one exchange of $WIRE11 B per observed fetch ($want)"
}
echo
echo "== curl, a process per fetch ($CURL1_N fetches), alternating pairs; spool in $WORK (on $(df --output=fstype "$WORK" | tail -n 1))"
pairs curl-each "$CURL1_PAIRS" curl_each
curl_each_check curl-each
# The same with the spool on tmpfs: a process's first connect creates its
# spool file, and on a disk file system that costs about a millisecond
if [ -d /dev/shm ] && SHM_SPOOL=$(mktemp -d /dev/shm/observe-overhead.XXXXXX 2>/dev/null); then
  at_exit "rm -rf '$SHM_SPOOL'"
  SPOOL_OF[curl-each-shm]=$SHM_SPOOL
  echo
  echo "== curl, a process per fetch, spool in /dev/shm (tmpfs), alternating pairs"
  pairs curl-each-shm "$CURL1_PAIRS" curl_each
  curl_each_check curl-each-shm
fi

# wrk: requests/s from its own summary; its completed requests are kept for
# the check (it stops with up to 4 requests in flight)
WRK_DONE=0
wrk_run() {
  local out=$WORK/wrk.out n
  pre "$1" "$2"
  timeout -k 5 $((WRK_SECS + 30)) "${PRE[@]}" wrk -t1 -c4 -d"${WRK_SECS}s" "$URL" > "$out" 2>&1 ||
    fail "wrk ($1) failed: $(tail -n 3 "$out")"
  ! grep -q 'Socket errors\|Non-2xx' "$out" || fail "wrk ($1): $(grep 'Socket errors\|Non-2xx' "$out")"
  n=$(sed -n 's/^ *\([0-9]*\) requests in .*/\1/p' "$out")
  [ -n "$n" ] && [ "$n" -gt 0 ] || fail "wrk ($1): no request completed: $(tail -n 3 "$out")"
  if [ "$1" = observed ]; then echo "$n" >> "$WORK/wrk.done"; fi
  sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' "$out"
}
echo
echo "== wrk -t1 -c4 -d${WRK_SECS}s, alternating pairs"
: > "$WORK/wrk.done"
pairs wrk "$WRK_PAIRS" wrk_run
db=$(slice_client wrk)
WRK_DONE=$(awk '{ s += $1 } END { print s + 0 }' "$WORK/wrk.done")
full=$(q "$db" "SELECT count(*) FROM exchange WHERE dr = $WIRE11 AND status = 200")
all=$(q "$db" "SELECT count(*) FROM exchange")
[ "$full" -ge "$WRK_DONE" ] && [ "$all" -le $((WRK_DONE + 4 * WRK_PAIRS)) ] ||
  fail "wrk: $full complete exchanges ($all in all) recorded for $WRK_DONE completed requests"
ok "wrk: $full complete exchanges of $WIRE11 B recorded for the $WRK_DONE requests wrk completed ($all in all)"

# headless Chromium: CHROME_LOADS fresh browsers, each with a fresh profile
# (no cache) loading page.html and its four images; loads per second
chrome_run() {
  local before t0 t1 i prof rc
  pre "$1" "$2"
  before=$(log_count)
  t0=$(now_ns)
  for ((i = 1; i <= CHROME_LOADS; i++)); do
    prof=$(mktemp -d "$WORK/chromium.XXXXXX")
    rc=0
    timeout -k 5 60 "${PRE[@]}" "$CHROMIUM" "${CHROMIUM_FLAGS[@]}" --user-data-dir="$prof" \
      --dump-dom "$NGINX_URL/page.html" > "$WORK/dom.html" 2>> "$WORK/chromium.log" || rc=$?
    [ "$rc" = 0 ] && grep -q "<h1>overhead page</h1>" "$WORK/dom.html" ||
      fail "chromium ($1) did not load the page (exit $rc; see $WORK/chromium.log)"
    rm -rf "$prof"
  done
  t1=$(now_ns)
  log_settle $((before + CHROME_LOADS * PAGE_REQUESTS))
  rate_of "$CHROME_LOADS" $((t1 - t0))
}
echo
if [ -n "$CHROMIUM" ]; then
  echo "== headless Chromium, $CHROME_LOADS page loads (page + 4 images) per run, alternating pairs"
  pairs chromium "$CHROME_PAIRS" chrome_run
  db=$(slice_client chromium)
  want=$((CHROME_PAIRS * CHROME_LOADS))
  got=$(q "$db" "SELECT count(*) FROM exchange WHERE path = '/page.html' AND status = 200")
  imgs=$(q "$db" "SELECT count(*) FROM exchange WHERE path IN ('/logo.png', '/dot.svg') AND status = 200")
  [ "$got" = "$want" ] && [ "$imgs" = $((4 * want)) ] ||
    fail "chromium: the layer recorded $got pages and $imgs images for $want loads"
  ok "chromium: the layer recorded each of the $want observed loads: the page and its 4 images"
else
  echo "== headless Chromium: not installed, left out"
fi

# ------------------------------------------------------------------ summary
# summary CLIENT: median bare, median observed, median ratio, min, max, mean,
# rounds, rounds where observed > bare
summary() {
  awk -F, -v c="$1" 'NR > 1 && $1 == c { n++; b[n] = $4; o[n] = $5; r[n] = $6; s += $6; up += $5 > $4 }
    function med(a, n,   i, j, t) {
      for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
      return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    END { if (!n) exit
      mb = med(b, n); mo = med(o, n); mr = med(r, n)
      printf "%s %s %.4f %.4f %.4f %.4f %d %d\n", mb, mo, mr, r[1], r[n], s / n, n, up }' "$ROUNDS_CSV"
}
CLIENTS=(ab ab-aa ab-cpu ab-cpu-aa curl-multi curl-each curl-each-shm wrk chromium)
declare -A LABEL=(
  [ab]="ab -c 1, concurrent"
  [ab-aa]="ab -c 1, concurrent, A/A control"
  [ab-cpu]="ab -c 1, concurrent: client CPU"
  [ab-cpu-aa]="ab -c 1, A/A control: client CPU"
  [curl-multi]="curl, $CURL_N URLs, 1 process"
  [curl-each]="curl, a process per fetch"
  [curl-each-shm]="curl, a process per fetch, spool on tmpfs"
  [wrk]="wrk -t1 -c4 -d${WRK_SECS}s"
  [chromium]="chromium --headless"
)
declare -A METRIC=(
  [ab]="MB/s per connection"
  [ab-aa]="MB/s per connection"
  [ab-cpu]="requests per CPU second"
  [ab-cpu-aa]="requests per CPU second"
  [curl-multi]="fetches/s"
  [curl-each]="fetches/s"
  [curl-each-shm]="fetches/s"
  [wrk]="requests/s"
  [chromium]="page loads/s"
)
CSV=$OUT/overhead.csv MD=$OUT/overhead.md TXT=$OUT/overhead.txt
echo "client,metric,bare,observed,ratio,ratio_min,ratio_max,ratio_mean,rounds,rounds_observed_higher" > "$CSV"
{
  echo "| client | metric | bare | observed | ratio | min–max | rounds |"
  echo "|---|---|---:|---:|---:|---|---:|"
} > "$MD"
row() { printf '%-42s %-20s %10s %10s %7s  %-15s %6s\n' "$@"; }
row client metric bare observed ratio "min-max" rounds > "$TXT"
CPU_RATIO=
for c in "${CLIENTS[@]}"; do
  s=$(summary "$c")
  [ -n "$s" ] || continue
  read -r mb mo mr rmin rmax rmean n up <<<"$s"
  [ "$c" = ab-cpu ] && CPU_RATIO=$mr
  echo "\"${LABEL[$c]}\",${METRIC[$c]},$mb,$mo,$mr,$rmin,$rmax,$rmean,$n,$up" >> "$CSV"
  echo "| ${LABEL[$c]} | ${METRIC[$c]} | $(fmt "$mb") | $(fmt "$mo") | $mr | $rmin–$rmax | $n |" >> "$MD"
  row "${LABEL[$c]}" "${METRIC[$c]}" "$(fmt "$mb")" "$(fmt "$mo")" "$mr" "$rmin-$rmax" "$n" >> "$TXT"
done
# the layer's own Ra of the observed ab, against ab's figure for that client
read -r ab_o ra bt <<<"$(awk -F, 'NR > 1 { n++; a[n] = $3; r[n] = $4; t[n] = $5 }
  function med(x, n,   i, j, v) {
    for (i = 2; i <= n; i++) { v = x[i]; for (j = i - 1; j >= 1 && x[j] > v; j--) x[j + 1] = x[j]; x[j + 1] = v }
    return (n % 2) ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2 }
  END { printf "%s %s %s\n", med(a, n), med(r, n), med(t, n) }' "$OUT/ra.csv")"
for what in "Σ(Ds+Dr) / ΣTt:$bt" "mean Ra:$ra"; do
  label="ab observed, the layer's ${what%%:*}" value=${what##*:}
  echo "\"$label\",MB/s per connection,,$value,,,,,$AB_ROUNDS," >> "$CSV"
  echo "| $label | MB/s per connection | | $(fmt "$value") | | | $AB_ROUNDS |" >> "$MD"
  row "$label" "MB/s per connection" "" "$(fmt "$value")" "" "" "$AB_ROUNDS" >> "$TXT"
done
SYSCALL_NOTE=.
if [ "$(wc -l < "$OUT/syscalls.csv")" -gt 1 ] && ! grep -q ',-' "$OUT/syscalls.csv"; then
  SYSCALL_NOTE=$(awk -F, '$1 == "observed" { n++; b[n] = $3; o[n] = $4 }
    function med(x, n,   i, j, v) {
      for (i = 2; i <= n; i++) { v = x[i]; for (j = i - 1; j >= 1 && x[j] > v; j--) x[j + 1] = x[j]; x[j + 1] = v }
      return (n % 2) ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2 }
    END { printf "; system calls per request (perf), median: bare %.2f, observed %.2f.", med(b, n), med(o, n) }' \
    "$OUT/syscalls.csv")
fi
cat >> "$MD" <<EOF

Ratio = observed / bare of a rate (0.98 = 2% slower under the layer): the median of the per-round
ratios, with their min–max; bare and observed are the medians of the rounds' rates. The seed paper
(§6.1) found a 2% difference in mean throughput per connection (ab, 51,200 B, 100 Mbit/s Ethernet).
ab: two \`ab -c 1 -t $AB_SECS\` fetch /50k ($BODY B; $WIRE10 B on the wire) at the same time, one
observed; throughput per connection = bytes per connection / mean connection time, from ab's own
summary (Total transferred / Time taken) for both; the observed client and the one started first
swap every round. The layer's view of the same observed client (medians over rounds), for
context: Σ(Ds + Dr) / ΣTt over its connections is the same kind of figure as ab's
($(fmt "$ab_o") MB/s), higher because Tt (connect to close) leaves out ab's work between
connections; the mean of the per-connection Ra = (Ds + Dr) / Tt is higher still, as a mean of
rates is pulled up by the fastest connections. A/A control: after each round the same with both
clients bare (ratio = the client in the observed one's place / the other): how far two identical
clients differ on this machine. Client CPU: requests completed per second of CPU time (user +
system, GNU time) of the ab process itself$SYSCALL_NOTE
curl, wrk, Chromium: alternating sequential runs, bare and observed, the order swapped every round;
curl and Chromium rates are 1 / wall time; "spool on tmpfs": OBSERVE_DIR in /dev/shm rather than
in $(df --output=fstype "$WORK" | tail -n 1) (a process's first connect creates its spool file there).
Machine: $(nproc) CPUs, $(grep -m 1 'model name' /proc/cpuinfo | sed 's/.*: //'), Linux $(uname -r);
$(date -u +%Y-%m-%d); mode $([ "$QUICK" = 1 ] && echo "--quick" || echo full).
EOF
[ -n "$CHROMIUM" ] || echo "Chromium is not installed here: left out." >> "$MD"

# the plot: every round's ratio per client and their median; 1 and the
# paper's 0.98 marked
PLOT_DAT=$WORK/plot.dat PLOT_MED=$WORK/plot-median.dat
: > "$PLOT_DAT"; : > "$PLOT_MED"
xtics=() i=0
for c in "${CLIENTS[@]}"; do
  grep -q "^$c," "$ROUNDS_CSV" || continue
  i=$((i + 1))
  xtics+=("\"${LABEL[$c]}\" $i")
  awk -F, -v c="$c" -v x="$i" 'NR > 1 && $1 == c { n++; print x + (n - 1) * 0.04 - 0.18, $6, $2 }' "$ROUNDS_CSV" >> "$PLOT_DAT"
  echo "$i $(summary "$c" | cut -d' ' -f3)" >> "$PLOT_MED"
done
(IFS=,; cat > "$WORK/plot.gp" <<EOF
set terminal pngcairo size 1200,700 font "sans,10"
set output "$OUT/overhead.png"
set title "observe overhead: observed / bare, every round (paper §6.1: 2% slower)"
set xlabel "client"
set ylabel "observed / bare (rate; below 1 = slower under the layer)"
set xtics (${xtics[*]}) rotate by -25
set xrange [0.4:$i.6]
set grid ytics
set key tmargin horizontal
set rmargin 10
plot 1 with lines dashtype 2 lc rgb "gray40" title "no difference", \
     0.98 with lines dashtype 3 lw 2 lc rgb "red" title "paper: 2% slower", \
     "$PLOT_DAT" using 1:2 with points pt 7 ps 1.2 lc rgb "navy" title "one round", \
     "$PLOT_MED" using (\$1 - 0.25):2:(0.5):(0) with vectors nohead lw 2 lc rgb "dark-orange" title "median of the rounds"
EOF
)
gnuplot "$WORK/plot.gp" || fail "gnuplot failed"
[ -s "$OUT/overhead.png" ] || fail "no plot"

echo
echo "== results (ratio = observed / bare; median of rounds, min-max)"
cat "$TXT"
echo
echo "written: $MD, $CSV, $ROUNDS_CSV, $OUT/ra.csv, $OUT/overhead.png"

awk -v r="$CPU_RATIO" -v lo="$CPU_RATIO_MIN" 'BEGIN { exit !(r >= lo) }' ||
  fail "ab: requests per CPU second, observed / bare: median $CPU_RATIO < $CPU_RATIO_MIN (the layer more than doubles ab's CPU per request)"
ok "ab: requests per CPU second, observed / bare: median $CPU_RATIO >= $CPU_RATIO_MIN (took $((SECONDS - START)) s)"
