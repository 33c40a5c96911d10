#!/usr/bin/env bash
# node.sh - issue 14 item 1: Node.js (libuv) closes its sockets with
# syscall(SYS_close, fd), which close() never sees: every connection stayed
# open in the layer, and when fs.readFileSync reused the fd number, the
# file's bytes counted as received. Five GETs of /100b, each on its own
# connection, with a 1 MB file read between them: every connection must end
# (closed, T7 known) and Dr must be what nginx sent, not the file.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
need_cmd node
make_site "$WORK/site"
nginx_start "$WORK/site"
DB=$WORK/run.db

preload node - "http://127.0.0.1:$NGINX_PORT/100b" "$WORK/site/1m" <<'JS' || fail "node failed"
const http = require('http');
const fs = require('fs');
const [url, file] = process.argv.slice(2);
function get(i) {
  if (i === 5) return;
  http.get(url, { agent: false }, (res) => {
    let n = 0;
    res.on('data', (d) => { n += d.length; });
    res.on('end', () => {
      if (n !== 100) throw new Error('short answer ' + n);
      // after the socket is closed: the next open may take its number
      setImmediate(() => { fs.readFileSync(file); get(i + 1); });
    });
  });
}
get(0);
JS
"$SLICER" -q -o "$DB" "$SPOOL"
expect_eq "$(q "$DB" "SELECT count(*) FROM connection")" 5 "connections"
expect_eq "$(q "$DB" "SELECT count(*) FROM connection WHERE end_class IN ('client_close', 'server_close') AND t7_ns IS NOT NULL")" 5 "connections closed, T7 known"
dr=$(q "$DB" "SELECT sum(dr) FROM exchange")
[ "$dr" -lt 5000 ] || fail "Dr $dr bytes for five answers of 100 bytes (the file counted?)"
ok "Dr $dr bytes for five answers of 100 bytes"
nginx_settle
python3 "$REPO/tests/lib/check_access.py" "$DB" "$NGINX_LOG" "$NGINX_PORT" ||
  fail "access log and database disagree"
