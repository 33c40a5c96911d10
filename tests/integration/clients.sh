#!/usr/bin/env bash
# clients.sh CLIENT - a real client under the layer against a real nginx;
# every request in nginx's access log must appear exactly once in the
# database (tests/lib/check_access.py), with bytes and times in order.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
source "$REPO/tests/lib/chromium.sh"

client=$1
make_site "$WORK/site"
nginx_start "$WORK/site"
URL=http://127.0.0.1:$NGINX_PORT
DB=$WORK/run.db
check_args=()

case $client in
curl)
  need_cmd curl
  # one URL, then three on one keep-alive connection, the layer preloaded by hand
  preload curl -sf -o /dev/null "$URL/100b"
  preload curl -sf -o /dev/null -o /dev/null -o /dev/null "$URL/100b" "$URL/50k" "$URL/1m"
  # the slicer on real spools, memchecked (not when sanitized: they exclude
  # each other, and the sanitizers check the slicer then)
  if command -v valgrind >/dev/null && [ -z "${OBSERVE_SANITIZE:-}" ]; then
    valgrind --quiet --error-exitcode=99 --leak-check=full "$SLICER" -q -o "$DB" "$SPOOL" ||
      fail "valgrind found errors in the slicer"
    ok "slicer clean under valgrind"
  else
    "$SLICER" -q -o "$DB" "$SPOOL"
  fi
  expect_eq "$(q "$DB" "SELECT count(*) FROM connection")" 2 "curl connections"
  expect_eq "$(q "$DB" "SELECT group_concat(seq, ' ') FROM (SELECT seq FROM exchange WHERE connection_id = (SELECT connection_id FROM exchange GROUP BY connection_id HAVING count(*) = 3) ORDER BY seq)")" "1 2 3" "keep-alive exchanges on one connection"
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange WHERE dr >= 1048576")" 1 "the 1 MB response in one exchange"
  ;;
wget)
  need_cmd wget
  "$OBSERVE" -q -o "$DB" -- wget -q -O /dev/null "$URL/50k"
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange WHERE peeked = 1")" 1 "wget peeks at the headers"
  ;;
ab)
  need_cmd ab
  "$OBSERVE" -q -o "$DB" -- ab -q -n 200 -c 4 "$URL/100b" >/dev/null
  # ab may open a spare connection at the end that carries no request
  expect_eq "$(q "$DB" "SELECT count(DISTINCT connection_id) FROM exchange")" 200 "ab: one connection per request"
  expect_eq "$(q "$DB" "SELECT count(*) FROM connection c WHERE t2_how = 'reconnect' AND EXISTS (SELECT 1 FROM exchange e WHERE e.connection_id = c.id)")" 200 "ab learns T2 from a second connect()"
  ;;
ab-k)
  need_cmd ab
  "$OBSERVE" -q -o "$DB" -- ab -q -k -n 200 -c 4 "$URL/100b" >/dev/null
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange")" 200 "ab -k exchanges"
  n=$(q "$DB" "SELECT count(*) FROM connection")
  [ "$n" -le 8 ] || fail "ab -k -c 4 used $n connections"
  ok "ab -k used $n connections"
  ;;
wrk)
  need_cmd wrk
  "$OBSERVE" -q -o "$DB" -- wrk -t2 -c4 -d2s "$URL/100b" >/dev/null
  # wrk stops mid-request at its deadline: unanswered exchanges are allowed
  check_args+=(--allow-unanswered --allow-abandoned)
  n=$(q "$DB" "SELECT count(DISTINCT connection_id) FROM exchange")
  expect_eq "$n" 4 "wrk connections with exchanges"
  ;;
python)
  preload python3 "$REPO/tests/integration/clients/py_clients.py" "$URL" >/dev/null
  "$SLICER" -q -o "$DB" "$SPOOL"
  # urllib 1 + http.client 3 on one connection + asyncio 3 connections x 2
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange")" 10 "python exchanges"
  expect_eq "$(q "$DB" "SELECT max(cnt) FROM (SELECT count(*) cnt FROM exchange GROUP BY connection_id)")" 3 "http.client keep-alive"
  expect_eq "$(q "$DB" "SELECT count(*) FROM connection")" 5 "python connections (urllib 1, http.client 1, asyncio 3)"
  ;;
node)
  need_cmd node
  "$OBSERVE" -q -o "$DB" -- node "$REPO/tests/integration/clients/node_client.js" "$URL" >/dev/null
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange")" 3 "node exchanges"
  expect_eq "$(q "$DB" "SELECT count(*) FROM connection")" 1 "node keep-alive agent: one connection"
  ;;
chromium)
  command -v chromium >/dev/null 2>&1 || skip "chromium is not installed"
  "$OBSERVE" -q -o "$DB" -- timeout 90 chromium "${CHROMIUM_FLAGS[@]}" --user-data-dir="$WORK/chromium" \
    --dump-dom "$URL/index.html" >"$WORK/dom.html" 2>"$WORK/chromium.log" || true
  grep -q "observe demo" "$WORK/dom.html" || fail "chromium did not load the page"
  n=$(q "$DB" "SELECT count(*) FROM exchange")
  [ "$n" -ge 6 ] || fail "chromium: $n exchanges, expected the page and its resources (>= 6)"
  ok "chromium: $n exchanges"
  # Chromium may stop a transfer it no longer needs
  check_args+=(--allow-unanswered --allow-abandoned)
  ;;
*)
  fail "unknown client $client"
  ;;
esac

nginx_settle
python3 "$REPO/tests/lib/check_access.py" "$DB" "$NGINX_LOG" "$NGINX_PORT" "${check_args[@]}" ||
  fail "$client: access log and database disagree"
ok "$client: every logged request recorded exactly once"
