#!/usr/bin/env bash
# progress.sh - on a terminal, slicing a spool that takes longer than a
# second shows a progress bar; without a terminal, nothing but the summary.
source "$(dirname "$0")/../lib/common.sh"
command -v script >/dev/null || skip "script (util-linux) is not installed"
# a big synthetic spool: 1.5 M exchanges on 15,000 connections
[ -x "$BUILD/bin/spoolgen" ] || fail "$BUILD/bin/spoolgen is not built"
"$BUILD/bin/spoolgen" "$WORK/big.spool" 1500000
script -qec "\"$SLICER\" -o \"$WORK/tty.db\" \"$WORK/big.spool\"" /dev/null > "$WORK/tty.out"
grep -q 'big.spool \[#' "$WORK/tty.out" || fail "no progress bar on a terminal: $(tr '\r' '\n' < "$WORK/tty.out" | tail -3)"
ok "a progress bar on a terminal"
"$SLICER" -o "$WORK/pipe.db" "$WORK/big.spool" 2>"$WORK/pipe.err"
! grep -q $'\r' "$WORK/pipe.err" || fail "progress output without a terminal"
expect_eq "$(wc -l < "$WORK/pipe.err")" 1 "lines on stderr without a terminal"
expect_eq "$(q "$WORK/pipe.db" "SELECT count(*) FROM exchange")" 1500000 "exchanges"
