#!/usr/bin/env bash
# report.sh - manager report on a central database of three clients (names
# with a quote, markup and a space in them): every plot in PNG and SVG,
# summary.txt agreeing with values computed here from the rows, a waterfall
# for the first run of each program, index.html loaded from disk in
# headless Chromium with every image loaded (and a broken image caught);
# with --baseline, the before/after table and CDFs, the page loaded again;
# a filter that keeps one client, an empty selection, a file that is no
# database.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
source "$REPO/tests/lib/chromium.sh"
MANAGER=$BUILD/bin/manager
need_cmd gnuplot
need_cmd file
make_site "$WORK/site"
nginx_start "$WORK/site"
URL=http://127.0.0.1:$NGINX_PORT
mkdir -p "$WORK/clients"
client() {  # NAME FILE COMMAND...
  local name=$1 db=$2; shift 2
  OBSERVE_CLIENT=$name "$OBSERVE" -q -o "$WORK/clients/$db.db" -- "$@" >/dev/null
}
client "alpha's lab" alpha ab -q -n 60 -c 2 "$URL/50k"
client "alpha's lab" alpha curl -s -o /dev/null -o /dev/null "$URL/1m" "$URL/100b"
client "beta <b>" beta ab -q -k -n 80 "$URL/100b"
client "beta <b>" beta wget -q -O /dev/null "$URL/1m"
client gamma gamma "$PYTHON" -c "
import urllib.request
for p in ['/100b', '/50k', '/1m'] * 5:
    urllib.request.urlopen('$URL' + p).read()"
C=$WORK/central.db
"$MANAGER" pull -q -o "$C" "$WORK/clients"
R=$WORK/report
start=$(date +%s%N)
"$MANAGER" report "$C" -o "$R" > "$WORK/report.out"
ok "report written in $(( ($(date +%s%N) - start) / 1000000 )) ms"
expect_eq "$(cat "$WORK/report.out")" "$R/index.html" "the page's path on stdout"

plots="tt_histogram cdf_tt cdf_te cdf_tw cdf_tr cdf_rr cdf_ra size_time tr_series throughput compare_p50 compare_p99"
for p in $plots; do
  file "$R/$p.png" | grep -q "PNG image data, 1000 x 600" || fail "$p.png: $(file "$R/$p.png")"
  grep -q "<svg" "$R/$p.svg" || fail "$p.svg is not SVG"
  grep -q "alpha's lab" "$R/$p.svg" || grep -q "alpha&apos;s lab\|alpha&#39;s lab" "$R/$p.svg" || fail "$p.svg: no legend for alpha's lab"
done
ok "12 plots, PNG 1000x600 and SVG each, with the clients in their legends"
# the analyses' plots: one nginx, so one server in each
for p in endings keepalive size_fit; do
  file "$R/$p.png" | grep -q "PNG image data, 1000 x" || fail "$p.png: $(file "$R/$p.png")"
  grep -q "<svg" "$R/$p.svg" || fail "$p.svg is not SVG"
  grep -q "127.0.0.1:$NGINX_PORT" "$R/$p.svg" || fail "$p.svg does not name the server"
done
expect_eq "$(file "$R/endings.png" | grep -o '1000 x [0-9]*')" "1000 x 310" "endings: one panel for one server"
ok "the analyses' plots: endings, keepalive, size_fit"
grep -q "beta &lt;b&gt;" "$R/index.html" || fail "client names are not escaped in the page"
! grep -q "<b>" "$R/index.html" || fail "markup from a client name reached the page"
ok "client names escaped in the page"

# summary.txt against the rows: count, p50, p99, max of Tt and Tw per client
"$PYTHON" - "$C" "$R/summary.txt" <<'PY' || fail "summary.txt disagrees with the rows"
import math, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rank = lambda v, p: v[max(1, math.ceil(p / 100 * len(v))) - 1]
got = {}
for line in open(sys.argv[2]):
    if len(line) > 33 and line[25:32].strip() in ("Tt ms", "Tw ms", "Tr ms"):
        f = line[33:].split()
        got[(line[:24].strip(), line[25:32].strip())] = (int(f[0]), float(f[2]), float(f[4]), float(f[5]))
checked = 0
for (client,) in db.execute("SELECT name FROM client"):
    for metric, col, view in (("Tt ms", "tt_ms", "connection_metrics"), ("Tw ms", "tw_ms", "exchange_metrics"),
                              ("Tr ms", "tr_ms", "exchange_metrics")):
        v = sorted(x for (x,) in db.execute(f"SELECT {col} FROM {view} WHERE client = ? AND {col} IS NOT NULL", (client,)))
        n, p50, p99, mx = got[(client[:24], metric)]
        assert n == len(v), (client, metric, n, len(v))
        for want, have in ((rank(v, 50), p50), (rank(v, 99), p99), (v[-1], mx)):
            assert abs(want - have) <= 0.0005 + 1e-9 * abs(want), (client, metric, want, have)
        checked += 1
print(f"ok: summary.txt: {checked} rows agree with the database")
PY
for view in endings keepalive size family; do
  grep -q "^$view$" "$R/summary.txt" || fail "summary.txt has no $view section"
done
ok "summary.txt has the four analyses"

# a waterfall per program, for its first run, in the order of those runs
n=0
for prog in ab curl wget python3; do
  n=$((n + 1))
  file "$R/waterfall_$n.png" | grep -q "PNG image data, 1000 x" || fail "waterfall_$n.png: $(file "$R/waterfall_$n.png")"
  grep -Eq "<text>conn 1 127\.0\.0\.1:$NGINX_PORT( http/1\.1)?, " "$R/waterfall_$n.svg" || fail "waterfall_$n.svg has no connection row"
  grep -q "^waterfall waterfall_$n.svg: $prog[.0-9]* [0-9]* on " "$R/summary.txt" ||
    fail "waterfall $n is not $prog's: $(grep "^waterfall" "$R/summary.txt")"
done
[ ! -e "$R/waterfall_5.png" ] || fail "a second run of a program got a waterfall"
# ab -c 2 may open a connection it never uses: its rows from the database
ab_rows=$(q "$C" "SELECT (SELECT count(*) FROM connection_metrics WHERE program LIKE '%/ab' AND client = 'alpha''s lab')
  + (SELECT count(*) FROM exchange_metrics WHERE program LIKE '%/ab' AND client = 'alpha''s lab')")
grep -q "^waterfall waterfall_1.svg: ab [0-9]* on alpha's lab: 30 connections, 30 exchanges (the first 60 of $ab_rows rows)$" \
  "$R/summary.txt" || fail "ab's waterfall is not cut at 60 of $ab_rows rows: $(grep "^waterfall waterfall_1" "$R/summary.txt")"
ok "4 waterfalls: ab, curl, wget, python3 (their first runs), ab's cut at 60 rows"

# the page, opened from disk in a browser: it loads, every image loads
check_page() {  # REPORT_DIR -> prints "images=N loaded=M broken=..."
  cat > "$WORK/check.html" <<HTML
<!DOCTYPE html><html><body><div id=out>pending</div>
<iframe id=f src="file://$1/index.html" width=1200 height=800></iframe>
<script>
document.getElementById('f').onload = function () {
  var d = this.contentDocument, imgs = d ? d.images : [], ok = 0, bad = [];
  for (var i = 0; i < imgs.length; i++)
    if (imgs[i].complete && imgs[i].naturalWidth > 0) ok++; else bad.push(imgs[i].getAttribute('src'));
  document.getElementById('out').textContent = 'RESULT images=' + imgs.length + ' loaded=' + ok +
    ' broken=' + bad.join(',') + ' title=' + (d ? d.title : 'none');
};
</script></body></html>
HTML
  timeout 90 chromium "${CHROMIUM_FLAGS[@]}" --allow-file-access-from-files \
    --user-data-dir="$WORK/chromium" --virtual-time-budget=10000 \
    --dump-dom "file://$WORK/check.html" 2>"$WORK/chromium.log" | grep -o "RESULT images=[^<]*" | head -1
}
if command -v chromium >/dev/null 2>&1; then
  res=$(check_page "$R")
  echo "$res"
  [[ $res == "RESULT images=19 loaded=19 broken= title=observe report: $C" ]] || fail "the page in Chromium: ${res:-nothing} ($(tail -3 "$WORK/chromium.log"))"
  ok "index.html from disk in headless Chromium: 19 images, all loaded"
  cp -r "$R" "$WORK/broken"
  rm "$WORK/broken/cdf_tw.svg"
  res=$(check_page "$WORK/broken")
  [[ $res == *"loaded=18 broken=cdf_tw.svg "* ]] || fail "a missing image was not caught: $res"
  ok "a missing image is caught by the same check"
else
  echo "note: chromium is not installed: the page is not checked in a browser"
fi

# before and after: alpha's own database as the baseline, per client:
# alpha's lab is the same on both sides, beta and gamma only after
B=$WORK/baseline
"$MANAGER" report "$C" -o "$B" -q --baseline "$WORK/clients/alpha.db" 2> "$WORK/baseline.err"
[ ! -s "$WORK/baseline.err" ] || fail "the report with a baseline complained: $(cat "$WORK/baseline.err")"
file "$B/compare_cdf.png" | grep -q "PNG image data, 1000 x 900" || fail "compare_cdf.png: $(file "$B/compare_cdf.png")"
grep -q "alpha's lab (baseline)\|alpha&apos;s lab (baseline)\|alpha&#39;s lab (baseline)" "$B/compare_cdf.svg" ||
  fail "compare_cdf.svg: no baseline curve for alpha's lab"
grep -q "^before and after (A: $WORK/clients/alpha.db, B: $C)$" "$B/summary.txt" || fail "summary.txt: no before and after"
expect_eq "$(grep -c "^alpha's lab .* 1.000 *1$" "$B/summary.txt")" 6 "alpha's lab against itself: change 1, p 1 in its 6 rows"
grep -Eq "^beta <b> +Tw ms +0 +[1-9][0-9]* +- " "$B/summary.txt" || fail "beta is not on side B alone: $(grep "^beta" "$B/summary.txt")"
grep -q "<h2>Before and after</h2>" "$B/index.html" || fail "the page has no before and after section"
if command -v chromium >/dev/null 2>&1; then
  res=$(check_page "$B")
  [[ $res == "RESULT images=20 loaded=20 broken= title=observe report: $C" ]] ||
    fail "the page with a baseline in Chromium: ${res:-nothing}"
  ok "the page with a baseline in headless Chromium: 20 images, all loaded"
fi

# a filter that keeps one client
"$MANAGER" report "$C" -o "$WORK/gamma" -q --where "client = 'gamma'" 2>"$WORK/gamma.err"
[ ! -s "$WORK/gamma.err" ] || fail "the filtered report complained: $(cat "$WORK/gamma.err")"
expect_eq "$(grep -c '^gamma ' "$WORK/gamma/summary.txt")" 8 "the filtered summary: gamma's 8 metrics"
expect_eq "$(grep -c "^alpha\|^beta" "$WORK/gamma/summary.txt")" 0 "the filtered summary: no other client"
grep -q "^filter: client = 'gamma'$" "$WORK/gamma/summary.txt" || fail "the filter is not named in summary.txt"
# a filter on a column the findings' queries also join (peer_addr: of the
# view and of connection) once failed with "ambiguous column name"
"$MANAGER" report "$C" -o "$WORK/peer" -q --peer 127.0.0.1 2>"$WORK/peer.err" ||
  fail "report --peer failed: $(cat "$WORK/peer.err")"
[ ! -s "$WORK/peer.err" ] || fail "the report with --peer complained: $(cat "$WORK/peer.err")"
grep -q "^gamma " "$WORK/peer/summary.txt" || fail "report --peer: no client in the summary"
ok "filters: one client, one peer (a column the findings' joins share)"

# nothing matches: a page that says so, exit 0
"$MANAGER" report "$C" -o "$WORK/empty" -q --where "dr > 1e15" 2>"$WORK/empty.err"
[ ! -s "$WORK/empty.err" ] || fail "the empty report complained: $(cat "$WORK/empty.err")"
grep -q "No exchange matches the filter" "$WORK/empty/index.html" || fail "the empty report does not say so"
ok "an empty selection gives a page that says so"

# every response of one size: nothing to fit, the scatter is still drawn
# (gnuplot once failed on the NaN fit)
OBSERVE_CLIENT=delta "$OBSERVE" -q -o "$WORK/same.db" -- ab -q -n 20 "$URL/100b" >/dev/null
"$MANAGER" report "$WORK/same.db" -o "$WORK/same" -q 2>"$WORK/same.err" ||
  fail "a report of one response size: $(grep -v '^Warning: empty' "$WORK/same.err" | head -3)"
[ -s "$WORK/same/size_fit.png" ] || fail "no size_fit.png for one response size"
ok "one response size: the report is written, the size scatter without a fit"

# not a database
echo "not sqlite" > "$WORK/junk.db"
set +e
"$MANAGER" report "$WORK/junk.db" -o "$WORK/junk" 2>"$WORK/junk.err"
status=$?
set -e
expect_eq "$status" 2 "exit status for a file that is no database"
grep -q "junk.db" "$WORK/junk.err" || fail "the bad file is not named: $(cat "$WORK/junk.err")"
ok "$(cat "$WORK/junk.err")"
