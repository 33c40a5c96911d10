#!/usr/bin/env bash
# chdir.sh - issue 13 item 11: a relative OBSERVE_DIR is made absolute
# when the layer starts, so that a program that changes its directory
# (daemons chdir to /, build tools into their trees) neither stops
# recording when its spool must grow (the layer re-opens the directory by
# name, and found another one or none) nor writes into a directory of the
# same name elsewhere. observe -d with a relative directory is the same.
# Real python: one request, chdir, 300 more on new connections (the spool
# grows past its first part).
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
make_site "$WORK/site"
nginx_start "$WORK/site"
mkdir -p "$WORK/a" "$WORK/b/spool"
chmod 0700 "$WORK/b/spool"

client() {
  cat <<'PY'
import http.client, os, sys
def get():
    c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]))
    c.request("GET", "/100b")
    c.getresponse().read()
    c.close()
get()
os.chdir(sys.argv[2])
for _ in range(300):
    get()
PY
}

# check TAG DIR: 301 exchanges in DIR's spool, nothing lost, nothing in the
# directory of the same name after the chdir
check() {
  local tag=$1 dir=$2
  "$SLICER" -o "$WORK/$tag.db" "$dir" 2> "$WORK/$tag.slicer" || fail "$tag: $(cat "$WORK/$tag.slicer")"
  expect_eq "$(q "$WORK/$tag.db" "SELECT count(*) FROM exchange WHERE dr > 100")" 301 \
    "$tag: exchanges recorded (each with its answer)"
  expect_eq "$(q "$WORK/$tag.db" "SELECT sum(dropped) FROM process")" 0 "$tag: records lost"
  expect_eq "$(find "$WORK/b/spool" -type f | wc -l)" 0 "$tag: files in the other directory named spool"
}

(cd "$WORK/a" && mkdir -m 0700 spool &&
  client | OBSERVE_LOG=1 OBSERVE_DIR=spool LD_PRELOAD="$LAYER_PRELOAD" \
    "$PYTHON" - "$NGINX_PORT" "$WORK/b") 2> "$WORK/preload.err" || fail "python: $(cat "$WORK/preload.err")"
expect_eq "$(grep -c 'observe\[' "$WORK/preload.err" || true)" 0 "lines from the layer"
check preload "$WORK/a/spool"

(cd "$WORK/a" && client | "$OBSERVE" -q -o "$WORK/observe.db" -d kept -- \
  "$PYTHON" - "$NGINX_PORT" "$WORK/b") || fail "observe -d kept"
check observe "$WORK/a/kept"
