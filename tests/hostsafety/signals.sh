#!/usr/bin/env bash
# signals.sh - issue 13 item 5: a signal handler that calls send, connect
# and close every 200 us while the main loop sends and receives on the same
# connection (tests/hostsafety/clients/sigsend.c). The layer used to spin
# for ever on the connection's lock, or wait for ever on its own mutex,
# when the signal came while the thread was inside its bookkeeping. Five
# runs of a second each: each must end (20 s at most), the program's server
# must get every byte sent, and the records must add up: every answer byte
# in Dr, every byte the server got in Ds except those of the calls the layer
# reports as unobserved (OBSERVE_LOG=1: re-entered from a handler while
# inside the layer; each handler send is one byte). Odd runs keep the program
# to one thread (its servers in a forked child: "alone"), where the layer
# takes no locks; even runs have the servers in threads.
source "$(dirname "$0")/../lib/common.sh"
runs=${SIGSEND_RUNS:-5}

for ((i = 1; i <= runs; i++)); do
  rm -rf "$SPOOL" "$WORK/run.db"
  status=0
  mode=threads
  ((i % 2)) && mode=alone
  timeout 20 env LD_PRELOAD="$LAYER_PRELOAD" OBSERVE_DIR="$SPOOL" OBSERVE_LOG=1 \
    "$BUILD/bin/sigsend" 1 "$mode" > "$WORK/out" 2> "$WORK/err" || status=$?
  [ "$status" != 124 ] || fail "run $i: no progress for 20 s (a hook waiting for a lock its thread holds)"
  [ "$status" = 0 ] || fail "run $i: status $status: $(cat "$WORK/out" "$WORK/err")"
  read -r _ rounds _ main _ handler _ got_m _ got_h _ answers _ port < "$WORK/out"
  unobserved=$(sed -n 's/.*: \([0-9]*\) hooked calls from signal handlers.*/\1/p' "$WORK/err")
  unobserved=${unobserved:-0}
  "$SLICER" -q -o "$WORK/run.db" "$SPOOL"
  read -r ds dr < <(q "$WORK/run.db" "SELECT sum(e.ds), sum(e.dr) FROM exchange e JOIN connection c ON c.id = e.connection_id WHERE c.peer_port = $port" | tr '|' ' ')
  sent=$((got_m + got_h))
  [ "$dr" = $((answers * 10)) ] || fail "run $i: Dr $dr, the program received $((answers * 10))"
  [ "$ds" -le "$sent" ] && [ "$ds" -ge $((sent - unobserved)) ] ||
    fail "run $i: Ds $ds, the server got $sent bytes, $unobserved calls unobserved"
  echo "ok: run $i ($mode): $rounds rounds, $handler sends from the handler, $unobserved calls unobserved; Ds $ds of $sent, Dr $dr"
done
ok "$runs runs: no hang, records add up"
