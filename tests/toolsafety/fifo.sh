#!/usr/bin/env bash
# fifo.sh - issue 13 item 11: a FIFO named x.spool in a spool directory
# hung the slicer for ever (open() of a FIFO waits for a writer), and so
# did a FIFO given to manager pull, stats or report, slicer export or as
# a database. Now anything that is not a regular file is named with the
# reason and skipped, and the good files beside it are still read.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
need_cmd curl
MANAGER=$BUILD/bin/manager
make_site "$WORK/site"
nginx_start "$WORK/site"
preload curl -sf -o /dev/null "$NGINX_URL/100b" || fail "curl failed"
mkfifo "$SPOOL/x.spool"
mkdir "$WORK/dbs"
mkfifo "$WORK/dbs/x.db" "$WORK/fifo.db"

# run TAG EXPECTED-STATUS CMD...: CMD must end within 60 s (a hang is the
# failure), with that exit status; its stderr in $WORK/TAG.err
run() {
  local tag=$1 want=$2 rc=0
  shift 2
  timeout 30 "$@" > "$WORK/$tag.out" 2> "$WORK/$tag.err" </dev/null || rc=$?
  [ "$rc" != 124 ] || fail "$tag: still running after 30 s (blocked on the FIFO)"
  expect_eq "$rc" "$want" "$tag: exit status"
}
# said TAG PATTERN: TAG's stderr has a line that matches PATTERN (grep -E)
said() {
  grep -qE -- "$2" "$WORK/$1.err" || fail "$1: no line matching '$2' in: $(cat "$WORK/$1.err")"
  ok "$1 said: $(grep -E -- "$2" "$WORK/$1.err" | head -1)"
}

run slicer 1 "$SLICER" -o "$WORK/run.db" "$SPOOL"
said slicer "^slicer: $SPOOL/x.spool: not a regular file \(a FIFO\)"
expect_eq "$(q "$WORK/run.db" "SELECT count(*) FROM exchange")" 1 "the good spool beside it sliced"
run slicer-file 1 "$SLICER" -o "$WORK/run.db" "$SPOOL/x.spool"
said slicer-file "x.spool: not a regular file \(a FIFO\)"
run slicer-db 2 "$SLICER" -o "$WORK/fifo.db" "$SPOOL"
said slicer-db "fifo.db: not a regular file \(a FIFO\)"
run observe-db 2 "$OBSERVE" -o "$WORK/fifo.db" -- true
said observe-db "fifo.db: not a regular file \(a FIFO\)"
run export 2 "$SLICER" export -d "$WORK/fifo.db" --format csv
said export "fifo.db: not a regular file \(a FIFO\)"

cp "$WORK/run.db" "$WORK/dbs/good.db"
run pull 1 "$MANAGER" pull -o "$WORK/central.db" "$WORK/dbs"
said pull "^manager: $WORK/dbs/x.db: not a regular file \(a FIFO\) \(skipped\)"
expect_eq "$(q "$WORK/central.db" "SELECT count(*) FROM exchange")" 1 "the good database beside it merged"
run pull-file 1 "$MANAGER" pull -o "$WORK/central.db" "$WORK/fifo.db"
said pull-file "fifo.db: not a regular file \(a FIFO\) \(skipped\)"
run stats 2 "$MANAGER" stats "$WORK/fifo.db"
said stats "^manager: $WORK/fifo.db: not a regular file \(a FIFO\)"
run report 2 "$MANAGER" report "$WORK/fifo.db" -o "$WORK/report"
said report "^manager: $WORK/fifo.db: not a regular file \(a FIFO\)"
