#!/usr/bin/env bash
# fsize.sh - the layer under a file size limit (ulimit -f): growing the
# spool past RLIMIT_FSIZE would raise SIGXFSZ in the host, so the spool
# never grows past it.
# 1. ulimit -f 64, curl of two URLs (51,300 bytes to stdout): exit status and output as without the
#    layer, and both exchanges recorded (the first part fits).
# 2. ulimit -f 8 (less than the spool's first part): the same, nothing
#    recorded, one warning.
# 3. ulimit -f 64, ab -k -n 2000 (needs more than 64 KiB of records): every
#    request done, one warning, the spool within the limit, every record
#    lost counted once.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
source "$REPO/tests/safety/lib.sh"
need_cmd curl
need_cmd ab
make_site "$WORK/site"
nginx_start "$WORK/site"
urls=("$NGINX_URL/100b" "$NGINX_URL/50k")

# 1
host_run curl64.bare "-f 64" curl -sS "${urls[@]}"
expect_eq "$(cat "$WORK/curl64.bare.rc")" 0 "curl under ulimit -f 64 without the layer"
host_run curl64 "-f 64" observed "$WORK/s64" curl -sS "${urls[@]}"
expect_same_host curl64.bare curl64
expect_eq "$(layer_lines curl64)" "" "curl64: nothing from the layer"
"$SLICER" -q -o "$WORK/s64.db" "$WORK/s64"
expect_eq "$(q "$WORK/s64.db" "SELECT group_concat(dr > 0, ' ') FROM exchange")" "1 1" "curl64: both exchanges recorded"

# 2
# (the bodies to /dev/null: 50 KiB of stdout would pass the limit itself)
quiet=(-sS -o /dev/null -o /dev/null -w '%{url_effective} %{http_code} %{size_download}\n')
host_run curl8.bare "-f 8" curl "${quiet[@]}" "${urls[@]}"
expect_eq "$(cat "$WORK/curl8.bare.rc")" 0 "curl under ulimit -f 8 without the layer"
host_run curl8 "-f 8" observed "$WORK/s8" curl "${quiet[@]}" "${urls[@]}"
expect_same_host curl8.bare curl8
expect_one_warning curl8 'not recording: the file size limit \(ulimit -f\) of 8192 bytes'
expect_eq "$(find "$WORK/s8" -type f 2>/dev/null | wc -l)" 0 "curl8: no spool file"

# 3
host_run ab "-f 64" observed "$WORK/sab" ab -k -n 2000 "$NGINX_URL/100b"
expect_eq "$(cat "$WORK/ab.rc")" 0 "ab's exit status under ulimit -f 64"
expect_eq "$(awk '/^Complete requests:/ { print $3 }' "$WORK/ab.out")" 2000 "ab: complete requests"
expect_one_warning ab 'would pass the file size limit \(ulimit -f\) of 65536 bytes; recording stopped'
spool=$(find "$WORK/sab" -name '*.spool')
size=$(stat -c %s "$spool")
[ "$size" -le 65536 ] || fail "the spool is $size bytes, past the limit"
ok "the spool is $size bytes, within 65536"
expect_counted_once "$spool"
rc=0
"$SLICER" -q -o "$WORK/sab.db" "$WORK/sab" 2>/dev/null || rc=$?
expect_eq "$rc" 1 "the slicer's exit status (records were lost)"
n=$(q "$WORK/sab.db" "SELECT count(*) FROM exchange WHERE dr > 100")
[ "$n" -gt 0 ] || fail "no exchange recorded"
ok "$n exchanges recorded within the limit"
