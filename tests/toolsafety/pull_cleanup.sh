#!/usr/bin/env bash
# pull_cleanup.sh - issue 13 item 11: manager pull over ssh left
# $TMPDIR/observe-pull.* behind on the machine it runs on, with the
# snapshot's -wal and -shm files that SQLite made beside it (a copy of a
# client's whole database, in /tmp), and everything when it was
# interrupted. Now nothing is left: neither after a pull, nor when the
# pull is stopped by SIGINT or SIGTERM while ssh runs (ssh is stopped
# too, and manager dies of the same signal), nor on the client machine.
# A real sshd on loopback; the client machine's TMPDIR passed over ssh.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
source "$REPO/tests/lib/sshd.sh"
need_cmd curl
MANAGER=$BUILD/bin/manager
SSHD_EXTRA="AcceptEnv TMPDIR" sshd_start
mkdir -m 0700 "$WORK/tmp" "$WORK/remote-tmp"
RSH="$RSH -o SetEnv=TMPDIR=$WORK/remote-tmp"
make_site "$WORK/site"
nginx_start "$WORK/site"
preload curl -sf -o /dev/null -o /dev/null "$NGINX_URL/100b" "$NGINX_URL/50k" || fail "curl failed"
"$SLICER" -q -o "$WORK/client.db" "$SPOOL"
URL="ssh://$ME@127.0.0.1:$PORT$WORK/client.db"

# left DIR: what is left in DIR, one name a line
left() { find "$1" -mindepth 1 -printf '%P\n' | sort; }

TMPDIR=$WORK/tmp "$MANAGER" pull -q -o "$WORK/central.db" -e "$RSH" "$URL" || fail "pull failed"
expect_eq "$(q "$WORK/central.db" "SELECT count(*) FROM exchange")" 2 "exchanges pulled"
expect_eq "$(left "$WORK/tmp")" "" "left in the puller's TMPDIR"
expect_eq "$(left "$WORK/remote-tmp")" "" "left in the client machine's TMPDIR"

# An ssh that brings the snapshot back and then hangs: the pull is
# stopped while it waits for ssh.
cat > "$WORK/slow-ssh" <<EOF
#!/bin/sh
ssh "\$@"
echo \$\$ > "$WORK/ssh.pid"
exec sleep 600
EOF
chmod +x "$WORK/slow-ssh"
at_exit '[ ! -s "$WORK/ssh.pid" ] || kill "$(cat "$WORK/ssh.pid")" 2>/dev/null'
for sig in INT TERM; do
  rm -f "$WORK/ssh.pid"
  # (a background job starts with SIGINT ignored: as from a terminal, not)
  TMPDIR=$WORK/tmp env --default-signal=INT \
    "$MANAGER" pull -q -o "$WORK/central.db" -e "$WORK/slow-ssh ${RSH#ssh }" "$URL" &
  pid=$!
  wait_until 60 test -s "$WORK/ssh.pid" || fail "SIG$sig: ssh did not run in 60 s"
  [ -n "$(left "$WORK/tmp")" ] || fail "SIG$sig: no snapshot in the TMPDIR while ssh runs"
  ok "SIG$sig: while ssh runs, the TMPDIR holds $(left "$WORK/tmp" | tr '\n' ' ')"
  kill -"$sig" "$pid"
  rc=0
  wait "$pid" || rc=$?
  expect_eq "$rc" $((128 + $(kill -l "$sig"))) "SIG$sig: manager's exit status (killed by the signal)"
  ssh_pid=$(cat "$WORK/ssh.pid")
  wait_until 10 sh -c "! kill -0 $ssh_pid 2>/dev/null" || fail "SIG$sig: ssh ($ssh_pid) still runs"
  ok "SIG$sig: ssh stopped"
  expect_eq "$(left "$WORK/tmp")" "" "SIG$sig: left in the puller's TMPDIR"
  expect_eq "$(left "$WORK/remote-tmp")" "" "SIG$sig: left in the client machine's TMPDIR"
done
expect_eq "$(q "$WORK/central.db" "PRAGMA quick_check")" ok "the central database after the interrupted pulls"
