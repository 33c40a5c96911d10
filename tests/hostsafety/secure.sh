#!/usr/bin/env bash
# secure.sh - issue 13 item 7: a setuid program (secure-execution mode,
# AT_SECURE) runs with its caller's environment, which it must not trust:
# the layer used to read OBSERVE_DIR with getenv and create a root-owned
# spool wherever the caller pointed. The rule (docs/layer.md): in
# secure-execution mode the layer records nothing and says nothing.
#
# The loader ignores LD_PRELOAD there, so the client is one linked against
# the layer (hs_client_linked: an absolute RUNPATH, which the loader does
# honour); made setuid root and run as nobody, it must fetch its answer,
# leave no file in OBSERVE_DIR, HOME or XDG_STATE_HOME, and print nothing
# of the layer's. The same binary without the setuid bit, run as nobody,
# does record: the layer is there and working.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
[ "$(id -u)" = 0 ] || skip "needs root (a setuid-root copy of the client)"
command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
if findmnt -n -o OPTIONS -T "$WORK" 2>/dev/null | grep -qw nosuid; then
  skip "$WORK is on a nosuid file system"
fi
make_site "$WORK/site"
nginx_start "$WORK/site"

chmod 755 "$WORK"
# evil: a directory the setuid program's euid (root) would accept as its
# spool directory (root's, 0700) if it trusted its caller's OBSERVE_DIR;
# mine: nobody's own, where the same program without setuid records.
mkdir -p "$WORK/bin" "$WORK/evil" "$WORK/mine" "$WORK/home" "$WORK/state"
chmod 700 "$WORK/evil"
chown nobody "$WORK/mine" && chmod 700 "$WORK/mine"
chmod 777 "$WORK/home" "$WORK/state"
cp "$BUILD/bin/hs_client_linked" "$WORK/bin/setuid_client"
cp "$BUILD/bin/hs_client_linked" "$WORK/bin/plain_client"
chmod 4755 "$WORK/bin/setuid_client"
chmod 755 "$WORK/bin/plain_client"
as_nobody() { # DIR PROGRAM ARG...
  local dir=$1
  shift
  setpriv --reuid=65534 --regid=65534 --clear-groups \
    env OBSERVE_DIR="$dir" OBSERVE_LOG=3 HOME="$WORK/home" \
    XDG_STATE_HOME="$WORK/state" "$@"
}

as_nobody "$WORK/evil" "$WORK/bin/setuid_client" get "$NGINX_PORT" > "$WORK/out" 2> "$WORK/err" ||
  fail "the setuid client failed: $(cat "$WORK/out" "$WORK/err")"
grep -q '^read [0-9]' "$WORK/out" || fail "the setuid client got no answer: $(cat "$WORK/out")"
ok "the setuid client got its answer"
[ ! -s "$WORK/err" ] || fail "the layer spoke in secure-execution mode: $(cat "$WORK/err")"
ok "nothing on stderr (OBSERVE_LOG=3 is the caller's, not trusted)"
left=$(find "$WORK/evil" "$WORK/home" "$WORK/state" -mindepth 1 | head -5)
[ -z "$left" ] || fail "the setuid program wrote where its caller said: $left ($(stat -c %U "${left%%$'\n'*}"))"
ok "no file in OBSERVE_DIR, HOME or XDG_STATE_HOME"

as_nobody "$WORK/mine" "$WORK/bin/plain_client" get "$NGINX_PORT" > "$WORK/out" 2> "$WORK/err" ||
  fail "the plain client failed: $(cat "$WORK/out" "$WORK/err")"
n=$(find "$WORK/mine" -name '*.spool' -user nobody | wc -l)
expect_eq "$n" 1 "spools of the same client without setuid (the layer is loaded)"
