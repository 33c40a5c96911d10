#!/usr/bin/env bash
# load.sh - load beside the test suite, to check that it passes on a busy
# machine: a busy loop per CPU and ApacheBench (ab -k -c 4) against a second
# nginx of its own, all on loopback, for SECONDS (default 600) at most.
#
# usage: scripts/load.sh [SECONDS]
#   e.g. scripts/load.sh 1800 & scripts/test.sh; kill %1
# Stops everything it started when it ends or is stopped (TERM, INT).
set -euo pipefail
secs=${1:-600}
case $secs in '' | *[!0-9]*) echo "usage: scripts/load.sh [SECONDS]" >&2; exit 2 ;; esac
source "$(dirname "$0")/../tests/lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
need_cmd ab
make_site "$WORK/site"
nginx_start "$WORK/site" load-nginx
pids=()
# shellcheck disable=SC2016  # expanded when the cleanup runs
at_exit 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait'
trap 'exit 0' TERM INT
for ((i = 0; i < $(nproc); i++)); do
  timeout "$secs" sh -c 'while :; do :; done' &
  pids+=($!)
done
# ab runs of 200,000 requests one after another: bounded in time and count
# shellcheck disable=SC2016  # $1 is the inner shell's
timeout "$secs" bash -c 'for ((i = 0; i < 1000; i++)); do ab -q -k -c 4 -n 200000 "$1" > /dev/null 2>&1 || sleep 1; done' \
  _ "$NGINX_URL/100b" &
pids+=($!)
echo "load: $(nproc) busy loops and ab -k -c 4 against nginx on $NGINX_URL for at most $secs s"
wait
