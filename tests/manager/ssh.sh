#!/usr/bin/env bash
# ssh.sh - manager pull from ssh:// sources through a real sshd that this
# test starts on a free loopback port with host and user keys it makes.
# The snapshot is consistent: rows committed but still only in the
# client's WAL file come along, rows of a transaction still open do not.
# An unreachable host or a missing file is named with the reason and
# skipped while the other sources merge; pulling again adds nothing; a
# progress bar shows on a terminal only.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
MANAGER=$BUILD/bin/manager
source "$REPO/tests/lib/sshd.sh"

# ---- an sshd of our own, on loopback, keys only ----------------------------
sshd_start

# ---- client machines: two local, one "remote" behind ssh ------------------
make_site "$WORK/site"
nginx_start "$WORK/site"
URL=http://127.0.0.1:$NGINX_PORT
mkdir -p "$WORK/clients" "$WORK/remote"
client_run alpha "$WORK/clients/alpha.db" curl -sf -o /dev/null -o /dev/null "$URL/100b" "$URL/50k"
client_run beta "$WORK/clients/beta.db" ab -q -k -n 20 -c 2 "$URL/100b"
# a path with a space and a quote: it goes through two shells
REMOTE_DB="$WORK/remote/obs dir's/observe.db"
mkdir -p "$(dirname "$REMOTE_DB")"
client_run remote "$REMOTE_DB" ab -q -n 12 "$URL/100b"
n_remote=$(q "$REMOTE_DB" "SELECT count(*) FROM exchange")
expect_eq "$n_remote" 12 "exchanges in the remote client's database"

# The remote client is live: a writer has committed 5 more exchanges that
# are only in the WAL file (no checkpoint), and holds a transaction with 7
# more open. A raw copy of observe.db would miss the 5; a snapshot has them
# and not the 7.
"$PYTHON" - "$REMOTE_DB" "$WORK/writer.ready" <<'PY' &
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA wal_autocheckpoint=0")
cid, seq = db.execute("SELECT connection_id, max(seq) FROM exchange GROUP BY connection_id LIMIT 1").fetchone()
def copy(n, base):
    for i in range(1, n + 1):
        db.execute("INSERT INTO exchange(connection_id, seq, t3_ns, t4_ns, t5_ns, tfb_ns, t6_ns, ds, dr, complete) "
                   "SELECT connection_id, ?, t3_ns, t4_ns, t5_ns, tfb_ns, t6_ns, ds, dr, 1 FROM exchange "
                   "WHERE connection_id = ? AND seq = ?", (base + i, cid, seq))
db.execute("BEGIN"); copy(5, 1000); db.execute("COMMIT")
db.execute("BEGIN"); copy(7, 2000)
open(sys.argv[2], "w").close()
time.sleep(600)  # killed when the test no longer needs it
PY
WRITER=$!
at_exit "kill $WRITER 2>/dev/null; wait $WRITER 2>/dev/null"
wait_until 60 test -e "$WORK/writer.ready" || fail "the writer did not start in 60 s"
[ -s "$REMOTE_DB-wal" ] || fail "the committed rows are not in a WAL file"
raw=$(sqlite3 "file:$(cd "$(dirname "$REMOTE_DB")" && pwd)/observe.db?immutable=1" "SELECT count(*) FROM exchange" 2>/dev/null || echo "?")
ok "a raw copy of the file would hold $raw exchanges"

SSH_URL="ssh://$ME@127.0.0.1:$PORT$REMOTE_DB"
C=$WORK/central.db
"$MANAGER" pull -q -o "$C" -e "$RSH" "$WORK/clients" "$SSH_URL"
expect_eq "$(q "$C" "SELECT count(*) FROM exchange_metrics WHERE client = 'remote'")" $((n_remote + 5)) \
  "remote exchanges merged: the committed ones, WAL included, not the open transaction"
expect_eq "$(q "$C" "SELECT count(*) FROM exchange")" $((2 + 20 + n_remote + 5)) "exchanges in the central database"
expect_eq "$(q "$C" "SELECT group_concat(name, ' ') FROM (SELECT name FROM client ORDER BY name)")" "alpha beta remote" "clients"
kill "$WRITER"; wait "$WRITER" 2>/dev/null || true

# pulling the same sources again adds nothing
"$MANAGER" pull -o "$C" -e "$RSH" "$WORK/clients" "$SSH_URL" 2>"$WORK/again.err"
grep -q "3 sources, 0 skipped, 0 exchanges new" "$WORK/again.err" || fail "re-pull: $(cat "$WORK/again.err")"
ok "pulling again adds nothing"

# failures are named with the reason; the good source in the same pull merges
client_run gamma "$WORK/gamma.db" curl -sf -o /dev/null "$URL/100b"
DEAD=$(free_port)
set +e
"$MANAGER" pull -q -o "$C" -e "$RSH" "ssh://127.0.0.1:$DEAD/x/observe.db" \
  "ssh://$ME@127.0.0.1:$PORT$WORK/nowhere/observe.db" "ssh://127.0.0.1:$PORT" \
  "$WORK/gamma.db" 2>"$WORK/fail.err"
status=$?
set -e
cat "$WORK/fail.err"
expect_eq "$status" 1 "exit status when sources were skipped"
grep -q "^manager: ssh://127.0.0.1:$DEAD/x/observe.db: ssh exited with status 255: .*refused.*(skipped)$" "$WORK/fail.err" ||
  fail "unreachable host not named with the reason"
grep -q "^manager: ssh://$ME@127.0.0.1:$PORT$WORK/nowhere/observe.db: .*no such file: $WORK/nowhere/observe.db (skipped)$" "$WORK/fail.err" ||
  fail "missing remote file not named with the reason"
grep -q "^manager: ssh://127.0.0.1:$PORT: expected ssh://\[user@\]host\[:port\]/path" "$WORK/fail.err" ||
  fail "a bad URL not named with the reason"
expect_eq "$(q "$C" "SELECT count(*) FROM exchange_metrics WHERE client = 'gamma'")" 1 "the good source still merged"

# a password is never asked: without our key, BatchMode fails at once
set +e
timeout 30 "$MANAGER" pull -q -o "$C" -e "ssh -F /dev/null -o IdentitiesOnly=yes -o IdentityFile=/dev/null -o UserKnownHostsFile=$S/known_hosts" "$SSH_URL" 2>"$WORK/nokey.err" </dev/null
status=$?
set -e
expect_eq "$status" 1 "no key: skipped, not hanging at a prompt"
grep -q "Permission denied" "$WORK/nokey.err" || fail "no key: $(cat "$WORK/nokey.err")"

# a progress bar on a terminal, and none without
if command -v script >/dev/null; then
  script -qec "\"$MANAGER\" pull -o \"$WORK/tty.db\" -e \"$RSH\" \"$WORK/clients\" \"$SSH_URL\"" /dev/null >"$WORK/tty.out"
  grep -q 'manager: \[#' "$WORK/tty.out" || fail "no progress bar on a terminal: $(tr '\r' '\n' <"$WORK/tty.out" | tail -3)"
  grep -q '3/3' "$WORK/tty.out" || fail "the progress bar does not count sources"
  ok "a progress bar on a terminal"
fi
"$MANAGER" pull -o "$WORK/pipe.db" -e "$RSH" "$WORK/clients" "$SSH_URL" 2>"$WORK/pipe.err"
! grep -q $'\r' "$WORK/pipe.err" || fail "progress output without a terminal"
expect_eq "$(wc -l <"$WORK/pipe.err")" 1 "lines on stderr without a terminal"
