#!/usr/bin/env bash
# bench-spool.sh - what the layer costs a short process (one connect, one
# request, exit: the spool is made at that connect), bare and with the
# layer, the spool directory on the disk's file system (under /var/tmp) and
# on tmpfs (/dev/shm). tests/safety/clients/first_connect spawns the runs
# interleaved round by round and prints min, median and max per variant.
#
# usage: scripts/bench-spool.sh [ROUNDS] [OTHER_LIBOBSERVE...]
#   ROUNDS             runs per variant (default 400)
#   OTHER_LIBOBSERVE   more libobserve.so to compare (e.g. an older build)
# The build directory is ./build, or $OBSERVE_BUILD (built here).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-400}
shift || true
build=${OBSERVE_BUILD:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j2 >/dev/null
export OBSERVE_BUILD=$build
# shellcheck source=tests/lib/common.sh
source tests/lib/common.sh
# shellcheck source=tests/lib/nginx.sh
source tests/lib/nginx.sh
make_site "$WORK/site"
nginx_start "$WORK/site" bench-nginx
libs=("$LIBOBSERVE" "$@")
for where in /var/tmp /dev/shm; do
  dir=$(mktemp -d "$where/observe-bench.XXXXXX")
  at_exit "rm -rf '$dir'"
  fs=$(findmnt -n -o FSTYPE -T "$dir" 2>/dev/null | head -n 1)
  [ -n "$fs" ] || fs=$(stat -f -c %T "$dir")
  echo "== spool directory on $fs ($where), $ROUNDS runs per variant"
  "$BUILD/bin/first_connect" bench "$ROUNDS" "$NGINX_PORT" "$dir" "${libs[@]}"
done
