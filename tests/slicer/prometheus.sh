#!/usr/bin/env bash
# prometheus.sh - a real Prometheus (Debian's) scrapes slicer --follow
# --metrics: its histogram_quantile(0.9, ...) of the wait for the first byte,
# the connect and the request's duration, and its counts by status class,
# queried through its HTTP API, agree with manager stats (and, for the
# request's duration, which manager stats does not show, with the rows) on
# the same exchanges, within the width of the bucket the exact value falls
# in. Traffic: servers of our own that answer after 3, 30, 120 and 400 ms,
# and nginx (200s and 404s). Everything on loopback; scrape_interval 1 s.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
need_cmd prometheus
need_cmd curl
MANAGER=$BUILD/bin/manager
DB=$WORK/run.db

make_site "$WORK/site"
nginx_start "$WORK/site"
METRICS_PORT=$(free_port)
"$SLICER" --follow -o "$DB" --metrics "127.0.0.1:$METRICS_PORT" "$SPOOL" 2>"$WORK/slicer.log" &
slicer_pid=$!
at_exit "kill $slicer_pid 2>/dev/null"
wait_port "$METRICS_PORT"

# the traffic: requests that wait 3 to 400 ms, 200s and 404s
expected=0
for spec in 3:6 30:5 120:4 400:2; do
  fault_server delay --delay-ms "${spec%%:*}"
  urls=()
  for ((i = 0; i < ${spec##*:}; i++)); do urls+=("http://127.0.0.1:$FAULT_PORT/$i"); done
  preload curl -s $(printf -- '-o /dev/null %s ' "${urls[@]}")
  expected=$((expected + ${spec##*:}))
done
preload curl -s -o /dev/null -o /dev/null -o /dev/null -o /dev/null \
  "$NGINX_URL/100b" "$NGINX_URL/50k" "$NGINX_URL/missing" "$NGINX_URL/gone"
expected=$((expected + 4))

# Prometheus, its data in $WORK, scraping every second
PROM_PORT=$(free_port)
cat > "$WORK/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: observe
    static_configs:
      - targets: ['127.0.0.1:$METRICS_PORT']
YML
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
  --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$WORK/prometheus.log" 2>&1 &
prom_pid=$!
at_exit "kill $prom_pid 2>/dev/null; wait $prom_pid 2>/dev/null"
ready() { curl -sf "http://127.0.0.1:$PROM_PORT/-/ready" >/dev/null; }
wait_until 60 ready || { cat "$WORK/prometheus.log" >&2; fail "Prometheus is not ready after 60 s"; }
# promql EXPR: the value of a one-sample result, or one line per sample
# "LABEL VALUE" for a result by one label
promql() {
  curl -sfG "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1" |
    "$PYTHON" -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
for s in r:
    labels = [v for k, v in s["metric"].items()]
    print(" ".join(labels + [s["value"][1]]))'
}

stored() { [ "$(q "$DB" "SELECT count(*) FROM exchange" 2>/dev/null || echo 0)" = "$expected" ]; }
wait_until 60 stored || fail "slicer did not store the $expected exchanges"
# every exchange and every connection that connected, in one scrape (the
# connections are observed once their process is gone)
connects=$(q "$DB" "SELECT count(*) FROM connection_metrics WHERE te_ms IS NOT NULL")
scraped() {
  [ "$(promql 'sum(http_client_request_duration_seconds_count)')" = "$expected" ] &&
    [ "$(promql 'sum(observe_connect_duration_seconds_count)')" = "$connects" ]
}
wait_until 60 scraped || { promql 'sum(http_client_request_duration_seconds_count)' >&2; fail "Prometheus did not scrape $expected requests and $connects connects"; }
ok "Prometheus scraped the $expected requests and $connects connects"

# counts by status class: manager stats's count of Tw per class
for class in 2 4; do
  want=$("$MANAGER" stats "$DB" --csv --where "status / 100 = $class" | awk -F, '$2 == "Tw ms" {n += $3} END {print n + 0}')
  got=$(promql "sum by (observe_status_class) (http_client_request_duration_seconds_count{observe_status_class=\"${class}xx\"})" | awk '{print $2}')
  [ "$want" -gt 0 ] || fail "no ${class}xx exchange in manager stats"
  expect_eq "$got" "$want" "Prometheus's ${class}xx requests, as manager stats counts them"
done

# within_bucket EXACT_S PROM_S WHAT: PROM_S lies in the bucket of EXACT_S
within_bucket() {
  "$PYTHON" - "$@" <<'PY'
import sys
exact, prom, what = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
bounds = [0, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]
hi = next(i for i, b in enumerate(bounds) if exact <= b + 1e-12)
lo_b, hi_b = bounds[max(hi - 1, 0)], bounds[hi]
ok = lo_b - 1e-9 <= prom <= hi_b + 1e-9
print("%s: p90 %.6f s exact, %.6f s by Prometheus, bucket (%g, %g]: %s"
      % (what, exact, prom, lo_b, hi_b, "agree" if ok else "DISAGREE"))
sys.exit(0 if ok else 1)
PY
}
p90() { "$MANAGER" stats "$DB" --csv | awk -F, -v m="$1" '$2 == m {print $6 / 1000}'; }
within_bucket "$(p90 'Tw ms')" "$(promql 'histogram_quantile(0.9, sum by (le) (observe_wait_duration_seconds_bucket))')" \
  "wait for the first byte" || fail "the wait's p90"
within_bucket "$(p90 'Te ms')" "$(promql 'histogram_quantile(0.9, sum by (le) (observe_connect_duration_seconds_bucket))')" \
  "connect" || fail "the connect's p90"
# the request's duration, T3 to T6: the exact p90 (nearest rank) from the rows
exact=$(q "$DB" "SELECT (t6_ns - t3_ns) / 1e9 FROM exchange ORDER BY 1
  LIMIT 1 OFFSET (SELECT (9 * count(*) + 9) / 10 - 1 FROM exchange)")
within_bucket "$exact" "$(promql 'histogram_quantile(0.9, sum by (le) (http_client_request_duration_seconds_bucket))')" \
  "request duration" || fail "the request duration's p90"
kill -TERM "$slicer_pid"
wait "$slicer_pid" || fail "slicer --follow did not end well: $(cat "$WORK/slicer.log")"
ok "Prometheus and manager stats agree"
