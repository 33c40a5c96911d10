#!/usr/bin/env bash
# follow_delete.sh - slicer --follow --delete under sustained load, as a
# service would run it: wrk (2 threads, 8 connections) under the layer for
# a bounded time, with 1 MiB segments that roll over every few thousand
# requests, and slicer --follow --delete beside it. Every request nginx
# logged is stored once; the segments it stored are deleted; and the
# slicer says nothing (not a word about the files it deleted itself) and
# exits 0 on SIGTERM: a systemd unit sees no failure. Run on both capture
# paths (the layer's records, OBSERVE_CAPTURE=events) when given one.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
need_cmd wrk
[ -n "${1:-}" ] && export OBSERVE_CAPTURE=$1
make_site "$WORK/site"
nginx_start "$WORK/site"
DB=$WORK/follow.db
export OBSERVE_SPOOL_SEGMENT_MB=1

"$SLICER" --follow --delete -q -o "$DB" "$SPOOL" 2>"$WORK/follow.err" &
FPID=$!
at_exit "kill $FPID 2>/dev/null || true"
wait_until 20 test -s "$DB" || fail "slicer --follow made no database: $(cat "$WORK/follow.err")"

preload wrk -t 2 -c 8 -d 6s "http://127.0.0.1:$NGINX_PORT/100b" >"$WORK/wrk.out" ||
  fail "wrk failed: $(tail -n 3 "$WORK/wrk.out")"
nginx_settle
logged=$(wc -l < "$NGINX_LOG")
count() { q "$DB" "SELECT count(*) FROM exchange" 2>/dev/null || echo 0; }
stored_all() { [ "$(count)" -ge "$logged" ]; }
wait_until 120 stored_all || fail "$(count) of $logged requests stored"
kill -TERM "$FPID"
set +e
wait "$FPID"
status=$?
set -e
expect_eq "$status" 0 "slicer --follow --delete exit status"
expect_eq "$(wc -c < "$WORK/follow.err")" 0 "bytes slicer printed: $(head -c 300 "$WORK/follow.err")"
expect_eq "$(count)" "$logged" "requests stored, none twice"
left=$(find "$SPOOL" -name '*.spool' | wc -l)
expect_true "the stored segments were deleted ($left left of the run's)" test "$left" -le 1
ok "$logged requests under wrk, $(q "$DB" "SELECT count(*) FROM process") process"
