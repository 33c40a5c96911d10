#!/usr/bin/env bash
# spool_dir.sh CASE - a spool directory that someone else controls: the
# layer writes nothing there, says why once, and the host (curl of two URLs)
# shows what it shows without the layer.
#   other_owner   OBSERVE_DIR owned by another user (nobody)
#   world_writable OBSERVE_DIR of mode 1777 (and observe -d refuses it)
#   default_tmp   no HOME, no XDG_STATE_HOME: the default /tmp/observe-UID/
#                 spool, made beforehand by another user (su nobody), both
#                 the whole path and only its parent; in a private mount
#                 namespace with a /tmp of its own
case=${1:?usage: spool_dir.sh CASE}
if [ "$case" = default_tmp ] && [ -z "${SAFETY_PRIVATE_TMP:-}" ]; then
  [ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (CI runs as root)"; exit 77; }
  unshare -m --propagation private true 2>/dev/null ||
    { echo "SKIP: cannot make a private mount namespace here (unshare -m)"; exit 77; }
  # A checkout or build under /tmp (a clone in /tmp, OBSERVE_BUILD=/tmp/...)
  # would vanish under the new /tmp: the repository's and the build's
  # directories are bound back at their own paths from the old /tmp.
  here=$(cd "$(dirname "$0")/../.." && pwd)
  build=$(cd "${OBSERVE_BUILD:-$here/build}" && pwd)
  SAFETY_PRIVATE_TMP=1 exec unshare -m --propagation private bash -c '
    set -e
    exec 9< /tmp # the old /tmp, reached through /proc/self/fd/9 below
    mount -t tmpfs -o mode=1777 tmpfs /tmp
    for d in "$1" "$2"; do
      case $d in
        /tmp/*) mkdir -p "$d" && mount --no-canonicalize --bind "/proc/self/fd/9/${d#/tmp/}" "$d" ;;
      esac
    done
    shift 2
    exec 9<&-
    exec bash "$0" "$@"' "$0" "$here" "$build" "$@"
fi
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
source "$REPO/tests/safety/lib.sh"
need_cmd curl
[ -r "$LIBOBSERVE" ] || fail "$LIBOBSERVE is not readable here (a build under /tmp is hidden by the private /tmp of default_tmp)"
make_site "$WORK/site"
nginx_start "$WORK/site"
urls=("$NGINX_URL/100b" "$NGINX_URL/50k")
me=$(id -u)
nobody=$(id -u nobody 2>/dev/null) || skip "no user nobody"
[ "$me" -eq 0 ] || skip "needs root to make another user's directory (CI runs as root)"

# refused TAG DIR PATTERN [ENV...]: curl with the layer writes nothing under
# DIR, the layer says once why (PATTERN), the host shows what it shows bare
refused() {
  local tag=$1 dir=$2 pattern=$3
  shift 3
  host_run "$tag.bare" - curl -sS "${urls[@]}"
  host_run "$tag" - env "$@" LD_PRELOAD="$LAYER_PRELOAD" OBSERVE_LOG=1 curl -sS "${urls[@]}"
  expect_same_host "$tag.bare" "$tag"
  expect_eq "$(find "$dir" -mindepth 1 | wc -l)" 0 "$tag: nothing written under $dir"
  expect_one_warning "$tag" "$pattern"
}

case $case in
other_owner)
  dir=$WORK/theirs
  mkdir -m 0755 "$dir"
  chown nobody "$dir"
  refused other_owner "$dir" "not recording: $dir is owned by uid $nobody, not by uid $me" OBSERVE_DIR="$dir"
  ;;
world_writable)
  dir=$WORK/shared
  mkdir -m 1777 "$dir"
  refused world_writable "$dir" "not recording: $dir is writable by group or others \(mode 1777\)" OBSERVE_DIR="$dir"
  # observe -d refuses it at once, with a message naming it
  rc=0
  "$OBSERVE" -q -o "$WORK/o.db" -d "$dir" -- curl -sS -o /dev/null "${urls[0]}" 2> "$WORK/observe.err" || rc=$?
  expect_eq "$rc" 2 "observe -d $dir: exit status"
  grep -q "^observe: $dir: the layer writes spools only into a directory of yours" "$WORK/observe.err" ||
    fail "observe -d $dir said: $(cat "$WORK/observe.err")"
  ok "observe -d: $(cat "$WORK/observe.err")"
  ;;
default_tmp)
  [ -n "${SAFETY_PRIVATE_TMP:-}" ] || fail "not in a private mount namespace"
  base=/tmp/observe-$me
  unset_env=(-u HOME -u XDG_STATE_HOME -u OBSERVE_DIR)
  # the whole path made by nobody
  su nobody -s /bin/sh -c "mkdir -m 0755 $base && mkdir -m 0777 $base/spool" ||
    fail "nobody could not make $base"
  refused made_by_other "$base/spool" "not recording: $base/spool is owned by uid $nobody" "${unset_env[@]}"
  # only the parent, writable by all: no spool directory made inside it
  rm -rf "$base"
  su nobody -s /bin/sh -c "mkdir -m 0777 $base" || fail "nobody could not make $base"
  refused parent_by_other "$base" "not recording: $base is owned by uid $nobody" "${unset_env[@]}"
  # the default made by the layer itself: recorded
  rm -rf "$base"
  host_run own - env "${unset_env[@]}" LD_PRELOAD="$LAYER_PRELOAD" OBSERVE_LOG=1 curl -sS "${urls[@]}"
  expect_same_host made_by_other.bare own
  expect_eq "$(stat -c '%u %a' "$base" "$base/spool" | tr '\n' ' ')" "$me 700 $me 700 " "$base and its spool directory: ours, 0700"
  expect_eq "$(find "$base/spool" -name '*.spool' | wc -l)" 1 "a spool in $base/spool"
  ;;
*) fail "unknown case $case" ;;
esac
