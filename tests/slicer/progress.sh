#!/usr/bin/env bash
# progress.sh - on a terminal, slicing a spool that takes longer than a
# second shows a progress bar; without a terminal, nothing but the summary.
source "$(dirname "$0")/../lib/common.sh"
command -v script >/dev/null || skip "script (util-linux) is not installed"
# a big synthetic spool: 1.5 M exchanges on 15,000 connections
"$PYTHON" - "$WORK/big.spool" <<'PY'
import struct, sys
hdr = bytearray(4096)
hdr[0:8] = b"OBSSPOOL"
struct.pack_into("<IIIIiiqqqqQQ", hdr, 8, 1, 4096, 128, 1, 999998, 1,
                 1700000000000000000, 1000000000, 1700000000000000000, 0, 0, 0)
hdr[88:93] = b"bench"
recs, t = [], 1000000000
for i in range(1500000):
    if i % 100 == 0:
        r = bytearray(128)
        struct.pack_into("<IIQ", r, 0, 1, 1, i // 100 + 1)
        struct.pack_into("<5q", r, 16, t, t + 1000, 0, t + 10**9, 0)
        struct.pack_into("<HHHBB", r, 88, 2, 80, 1000, 1, 2)
        recs.append(bytes(r))
    r = bytearray(128)
    t += 1000
    struct.pack_into("<IIQ", r, 0, 2, 1, i // 100 + 1)
    struct.pack_into("<II5qQQII", r, 16, i % 100 + 1, 0, t, t + 10, t + 20,
                     t + 500, t + 600, 100, 300, 1, 1)
    recs.append(bytes(r))
with open(sys.argv[1], "wb") as f:
    f.write(hdr)
    f.write(b"".join(recs))
PY
script -qec "\"$SLICER\" -o \"$WORK/tty.db\" \"$WORK/big.spool\"" /dev/null > "$WORK/tty.out"
grep -q 'big.spool \[#' "$WORK/tty.out" || fail "no progress bar on a terminal: $(tr '\r' '\n' < "$WORK/tty.out" | tail -3)"
ok "a progress bar on a terminal"
"$SLICER" -o "$WORK/pipe.db" "$WORK/big.spool" 2>"$WORK/pipe.err"
! grep -q $'\r' "$WORK/pipe.err" || fail "progress output without a terminal"
expect_eq "$(wc -l < "$WORK/pipe.err")" 1 "lines on stderr without a terminal"
expect_eq "$(q "$WORK/pipe.db" "SELECT count(*) FROM exchange")" 1500000 "exchanges"
