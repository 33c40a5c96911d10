# pg.sh - a real PostgreSQL server of our own for the tests of the central
# store on PostgreSQL: initdb into a temporary directory as an unprivileged
# user (the postgres user when the test runs as root), password
# authentication (scram-sha-256), listening only on a Unix socket in that
# directory; stopped and removed when the script exits.
# shellcheck shell=bash
#
# Source tests/lib/common.sh first. pg_start: skips the test (77) when the
# server or the manager's libpq support is missing; sets PGD (the
# directory: data, socket, log), PG_URI (postgresql://observe@/observe?host=PGD),
# exports PGPASSWORD (the right password) and defines pq SQL (psql's
# unaligned rows of SQL against the database).
pg_start() {
  local bin pw
  bin=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
  [ -x "$bin/initdb" ] || skip "PostgreSQL is not installed (Debian package postgresql-15)"
  need_cmd psql
  "$BUILD/bin/manager" pull -q -o postgresql://nobody@/x?host=/nonexistent /dev/null 2>"$WORK/pg-probe.err" || true
  ! grep -q "built without libpq" "$WORK/pg-probe.err" ||
    skip "the manager was built without libpq (Debian package libpq-dev)"
  PGD=$(mktemp -d "${TMPDIR:-/tmp}/observe-pg.XXXXXX")
  chmod 755 "$PGD"
  local as=()
  if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || skip "running as root and there is no postgres user to run the server"
    chown postgres: "$PGD"
    as=(runuser -u postgres --)
  fi
  pw=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
  echo "$pw" > "$PGD/pw"
  chmod 644 "$PGD/pw"
  "${as[@]}" "$bin/initdb" -D "$PGD/data" -U observe --pwfile="$PGD/pw" -A scram-sha-256 \
    -E UTF8 --locale=C >"$WORK/initdb.log" 2>&1 || fail "initdb: $(tail -5 "$WORK/initdb.log")"
  rm -f "$PGD/pw"
  "${as[@]}" "$bin/pg_ctl" -D "$PGD/data" -l "$PGD/log" -w -o \
    "-c listen_addresses='' -k $PGD -c fsync=off -c full_page_writes=off -c synchronous_commit=off" \
    start >"$WORK/pg_ctl.log" 2>&1 || fail "pg_ctl start: $(cat "$WORK/pg_ctl.log"; tail -5 "$PGD/log" 2>/dev/null)"
  at_exit "${as[*]} $bin/pg_ctl -D $PGD/data -m immediate -w stop >/dev/null 2>&1; rm -rf $PGD"
  export PGPASSWORD=$pw
  psql -X -q -h "$PGD" -U observe -d postgres -c "CREATE DATABASE observe" ||
    fail "cannot create the database"
  export PG_URI="postgresql://observe@/observe?host=$PGD"
  ok "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on a Unix socket in $PGD, password auth"
}

# pq SQL: the rows of SQL, columns separated by |
pq() { psql -X -A -t -q -v ON_ERROR_STOP=1 -h "$PGD" -U observe -d observe -c "$1"; }
