#!/usr/bin/env bash
# curl_timing.sh - our Te and Tw agree with curl's own -w timers on the same
# transfer (server waits 50 ms), within 1 ms, five times over.
source "$(dirname "$0")/../lib/common.sh"
need_cmd curl
DB=$WORK/run.db
fault_server delay --delay-ms 50
warmup_port=$FAULT_PORT
fault_server delay --delay-ms 50
# Each curl fetches from two servers, one connection each, and the second
# is compared: the first pays the layer's one-time spool creation
# (reported by scripts/bench.sh), which curl's clock would count in its Te.
for i in 1 2 3 4 5; do
  rm -rf "$SPOOL"; mkdir -p "$SPOOL"
  w=$(preload curl -sf -o /dev/null -o /dev/null \
      -w '%{time_namelookup} %{time_connect} %{time_pretransfer} %{time_starttransfer}\n' \
      "http://127.0.0.1:$warmup_port/" "http://127.0.0.1:$FAULT_PORT/" | tail -n 1)
  rm -f "$DB"*
  "$SLICER" -q -o "$DB" "$SPOOL"
  expect_eq "$(q "$DB" "SELECT count(*) FROM connection")" 2 "connections"
  ours=$(q "$DB" "SELECT te_ms, tw_ms FROM exchange_metrics WHERE peer_port = $FAULT_PORT" | tr '|' ' ')
  python3 - "$w" "$ours" <<'PY' || fail "run $i: curl and observe disagree"
import sys
nl, conn, pre, start = map(float, sys.argv[1].split())
te, tw = map(float, sys.argv[2].split())
curl_te = (conn - nl) * 1000
curl_tw = (start - pre) * 1000
print(f"Te ours {te:.3f} curl {curl_te:.3f} (diff {te - curl_te:+.3f} ms); "
      f"Tw ours {tw:.3f} curl {curl_tw:.3f} (diff {tw - curl_tw:+.3f} ms)")
sys.exit(0 if abs(te - curl_te) <= 1.0 and abs(tw - curl_tw) <= 1.0 else 1)
PY
done
ok "Te and Tw within 1 ms of curl's timers in 5 runs"
