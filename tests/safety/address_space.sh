#!/usr/bin/env bash
# address_space.sh - the layer under an address space limit (ulimit -v):
# the spool takes address space as it grows, not 1 GiB up front.
# A python client fetches one URL, then takes 1 GiB of address space. The
# limit is what the bare client reached (VmPeak) plus 1 GiB plus 64 MiB:
# 1. the client fetches and takes its 1 GiB with the layer as without it
#    (same exit status, same output but for VmPeak), and its exchange is
#    recorded;
# 2. taking nothing, under the bare VmPeak plus 64 MiB: the exchange is
#    recorded (the spool's reservation fits).
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
source "$REPO/tests/safety/lib.sh"
# AddressSanitizer reserves terabytes of shadow memory: no ulimit -v fits.
skip_if_sanitized "an address-space limit and ASan's shadow memory"
make_site "$WORK/site"
nginx_start "$WORK/site"
client=$REPO/tests/safety/clients/fetch_then_alloc.py
url=$NGINX_URL/50k

# run MIB LIMIT_KB: the client taking MIB MiB, bare then with the layer,
# under ulimit -v LIMIT_KB: the same exit status (0) and output (but for
# VmPeak), nothing from the layer, the exchange recorded
run() {
  local mib=$1 limit=$2 tag=take$1
  host_run "$tag.bare" "-v $limit" "$PYTHON" "$client" "$url" "$mib"
  expect_eq "$(cat "$WORK/$tag.bare.rc")" 0 "$tag: the bare client under ulimit -v $limit"
  host_run "$tag" "-v $limit" observed "$WORK/$tag" "$PYTHON" "$client" "$url" "$mib"
  expect_eq "$(cat "$WORK/$tag.rc")" 0 "$tag: exit status with the layer"
  expect_eq "$(cut -d' ' -f1,2 "$WORK/$tag.out")" "$(cut -d' ' -f1,2 "$WORK/$tag.bare.out")" \
    "$tag: the client's output (body length, bytes taken)"
  expect_eq "$(layer_lines "$tag")" "" "$tag: nothing from the layer"
  "$SLICER" -q -o "$WORK/$tag.db" "$WORK/$tag"
  expect_eq "$(q "$WORK/$tag.db" "SELECT count(*) FROM exchange WHERE dr > 51200")" 1 "$tag: the exchange recorded"
}

# the bare client's VmPeak (kB) without a limit, taking 1 GiB and nothing
for mib in 1024 0; do
  host_run "peak$mib" - "$PYTHON" "$client" "$url" "$mib"
  expect_eq "$(cat "$WORK/peak$mib.rc")" 0 "the bare client taking $mib MiB"
done
run 1024 $(($(awk '{ print $3 }' "$WORK/peak1024.out") + 65536))
run 0 $(($(awk '{ print $3 }' "$WORK/peak0.out") + 65536))
