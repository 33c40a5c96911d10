#!/usr/bin/env bash
# otlp_push.sh - the OTLP/HTTP push to a receiver of our own
# (tests/servers/otlp_receiver.py) on loopback:
# - slicer --follow --otlp: a 429 is retried after its Retry-After; while
#   the receiver is stopped, then started again, and while slicer itself is
#   stopped and started again, no span is lost and none is sent twice (the
#   receiver's span ids, as a multiset, are the database's);
# - batches of at most 128 exchanges, 512 spans;
# - OTEL_EXPORTER_OTLP_HEADERS reaches the receiver, percent-decoded;
# - every body decodes against OpenTelemetry's .proto files (traces and
#   metrics) and the spans carry the attributes of their rows
#   (tests/slicer/check_otlp.py);
# - no query string, credential or header value reaches a body or the
#   /metrics page;
# - manager export --otlp: a 400 is not retried and is reported with the
#   endpoint and the status; a partialSuccess is reported; a second export
#   sends nothing again.
# Skipped (77) when npm cannot fetch OpenTelemetry's packages.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
source "$REPO/tests/lib/otel.sh"
need_cmd node
need_cmd npm
need_cmd curl
otel_npm_fetch || skip "npm could not fetch $PROTOBUFJS and $PROTO_PACKAGE (offline? $NPM_DIR/npm.log)"
MANAGER=$BUILD/bin/manager
DB=$WORK/run.db

make_site "$WORK/site"
nginx_start "$WORK/site"
URL=http://127.0.0.1:$NGINX_PORT
# traffic: a query string, userinfo and an Authorization header, a 404
traffic() {
  preload curl -s -o /dev/null -o /dev/null -o /dev/null -H "Authorization: Bearer SECRETAUTH" \
    "http://user:SECRETPASS@127.0.0.1:$NGINX_PORT/100b?token=SECRETTOKEN" "$URL/50k" "$URL/missing"
}
exported() { "$SLICER" export -d "$DB" --format otlp -o "$WORK/export.json"; }
all_received() { exported && "$PYTHON" "$REPO/tests/slicer/check_push.py" match "$RECV_DIR" "$WORK/export.json" >"$WORK/match.out"; }
exchanges() { q "$DB" "SELECT count(*) FROM exchange" 2>/dev/null || echo 0; }
more_than() { [ "$(exchanges)" -gt "$1" ]; }

receiver_start recv --plan 429,200
RECV=http://127.0.0.1:$RECV_PORT
traffic
traffic
# more than a batch holds: 300 exchanges on one keep-alive connection
need_cmd ab
preload ab -q -k -n 300 "$URL/100b" >/dev/null
METRICS_PORT=$(free_port)
slicer_start() {
  OTEL_EXPORTER_OTLP_HEADERS=' x-api-key = SECRETKEY%2C1 , x-tenant=t1,' OTEL_METRIC_EXPORT_INTERVAL=300 \
    "$SLICER" --follow -o "$DB" --otlp "$RECV" "$@" "$SPOOL" 2>>"$WORK/slicer.log" &
  SLICER_PID=$!
  at_exit "kill $SLICER_PID 2>/dev/null"
}
slicer_stop() { kill -TERM "$SLICER_PID"; wait "$SLICER_PID" || true; }
slicer_start --metrics "127.0.0.1:$METRICS_PORT"
wait_port "$METRICS_PORT"
wait_until 60 all_received || { cat "$WORK/match.out" "$WORK/slicer.log" >&2; fail "the spans did not all arrive"; }
cat "$WORK/match.out"
curl -sf "http://127.0.0.1:$METRICS_PORT/metrics" > "$WORK/metrics.txt" || fail "no /metrics page"
grep -q '^http_client_request_duration_seconds_count{' "$WORK/metrics.txt" || fail "no request histogram on /metrics"

# the 429 was retried after its Retry-After (1 s), and said
"$PYTHON" - "$RECV_DIR/log.jsonl" <<'PY' || fail "the 429 was not retried as asked"
import json, sys
t = [json.loads(l) for l in open(sys.argv[1]) if '"/v1/traces"' in l]
assert t[0]["status"] == 429 and t[1]["status"] == 200, [r["status"] for r in t]
assert t[1]["spans"] == t[0]["spans"], "the same batch again"
gap = t[1]["time"] - t[0]["time"]
assert gap >= 0.95, "retried after %.2f s, Retry-After said 1" % gap
print("429: retried after %.2f s" % gap)
PY
grep -q "/v1/traces: HTTP 429" "$WORK/slicer.log" || fail "the 429 was not said"
"$PYTHON" - "$RECV_DIR/log.jsonl" <<'PY' || fail "the batches"
import json, sys
t = [json.loads(l) for l in open(sys.argv[1]) if '"/v1/traces"' in l]
sizes = [len(r["spans"]) for r in t if r["status"] == 200]
assert len(sizes) >= 3 and max(sizes) <= 512, sizes
print("batches: %d requests of %s spans" % (len(sizes), sizes))
PY
ok "a 429 is retried after Retry-After"

# the receiver stopped: new exchanges wait; started again: they arrive
receiver_stop
before=$(exchanges)
traffic
wait_until 60 more_than "$before" || fail "slicer did not store the new exchanges"
wait_until 60 grep -q "Couldn't connect\|Failed to connect\|Connection refused" "$WORK/slicer.log" ||
  fail "no failed push said while the receiver was stopped"
receiver_start recv --port "$RECV_PORT"
wait_until 60 all_received || { cat "$WORK/match.out" >&2; fail "spans lost or twice across the receiver's restart"; }
ok "receiver stopped and started: $(cat "$WORK/match.out")"

# slicer stopped and started again: it goes on from its mark
slicer_stop
slicer_start
traffic
wait_until 60 all_received || { cat "$WORK/match.out" >&2; fail "spans lost or twice across slicer's restart"; }
slicer_stop
all_received || { cat "$WORK/match.out" >&2; fail "spans lost or twice at slicer's stop"; }
ok "slicer stopped and started: $(cat "$WORK/match.out")"

# the headers of OTEL_EXPORTER_OTLP_HEADERS, percent-decoded, on every request
"$PYTHON" - "$RECV_DIR/log.jsonl" <<'PY' || fail "OTEL_EXPORTER_OTLP_HEADERS"
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
for r in rs:
    h = {k.lower(): v for k, v in r["headers"].items()}
    assert h.get("x-api-key") == "SECRETKEY,1" and h.get("x-tenant") == "t1", h
    assert h.get("content-encoding") == "gzip" and h.get("content-type") == "application/json", h
assert any(r["path"] == "/v1/metrics" for r in rs), "no metrics pushed"
print("headers: %d requests, each with the extra headers, gzipped JSON" % len(rs))
PY

# every body against OpenTelemetry's .proto files; the spans against the rows
for body in "$RECV_DIR"/[0-9]*.json; do
  n=$(basename "$body" .json)
  if grep -q '"resourceMetrics"' "$body"; then
    otel_check "$body" "$WORK/decoded.$n.json" metrics >/dev/null || fail "metrics body $n"
  else
    otel_check "$body" "$WORK/decoded.$n.json" >/dev/null || fail "traces body $n"
  fi
done
"$PYTHON" "$REPO/tests/slicer/check_push.py" merge "$RECV_DIR" "$WORK/decoded" "$WORK/merged.json"
"$PYTHON" "$REPO/tests/slicer/check_otlp.py" "$DB" "$WORK/merged.json" || fail "the pushed spans do not match the database"
ok "every body decodes with OpenTelemetry's .proto files ($(ls "$RECV_DIR"/[0-9]*.json | wc -l) bodies)"

# no secret in a body or on /metrics
for secret in SECRETPASS SECRETTOKEN SECRETAUTH SECRETKEY "$(printf user:SECRETPASS | base64)"; do
  ! grep -lF -- "$secret" "$RECV_DIR"/[0-9]*.json "$WORK/metrics.txt" || fail "'$secret' was sent"
done
ok "no query string, credential or header value in a body or on /metrics"

# manager export: a 400 is not retried, and said
# export_to NAME: manager export to the receiver; its status in status
export_to() {
  set +e
  "$MANAGER" export --otlp "http://127.0.0.1:$RECV_PORT" "$DB" 2>"$WORK/$1.log"
  status=$?
  set -e
}
receiver_start refuse --plan 400
export_to refuse
expect_eq "$status" 1 "manager export's status after a 400"
grep -q "http://127.0.0.1:$RECV_PORT/v1/traces: HTTP 400: test refusal; not retried" "$WORK/refuse.log" ||
  { cat "$WORK/refuse.log" >&2; fail "the 400 was not said with its endpoint"; }
traces=$(grep -c '"/v1/traces"' "$RECV_DIR/log.jsonl")
batches=$(( ($(exchanges) + 127) / 128 ))
expect_eq "$traces" "$batches" "trace requests to a receiver that answers 400 (one per batch, none again)"

# manager export: a partialSuccess said; everything once; again: nothing
receiver_start partial --partial 1
export_to partial
expect_eq "$status" 1 "manager export's status after a partialSuccess"
grep -q "the receiver rejected 1 of [0-9]* spans: test rejection" "$WORK/partial.log" ||
  { cat "$WORK/partial.log" >&2; fail "the partialSuccess was not said"; }
all_received || { cat "$WORK/match.out" >&2; fail "manager export: spans lost or twice"; }
"$MANAGER" export -q --otlp "http://127.0.0.1:$RECV_PORT" "$DB" || fail "a second export failed"
all_received || { cat "$WORK/match.out" >&2; fail "a second manager export sent spans again"; }
ok "manager export: 400 not retried, partialSuccess said, nothing sent twice"
