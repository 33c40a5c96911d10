#!/usr/bin/env bash
# run-fuzz.sh [SECONDS] - build the spool fuzz target with clang's libFuzzer,
# AddressSanitizer and UBSan, seed it with real spools (curl under the layer)
# and run it: briefly in CI (default 20 s), longer on demand
# (tests/fuzz/run-fuzz.sh 600). Exit 77 (skipped) without clang/libFuzzer.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/fuzz.sh"
seconds=${1:-20}
command -v clang >/dev/null || skip "clang is not installed"
sqlite_flags=$(pkg-config --cflags --libs sqlite3)
# shellcheck disable=SC2086
core=("$REPO"/core/*.c)
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$REPO/common" -I"$REPO/core" "$REPO/tests/fuzz/fuzz_spool.c" "$REPO/common/spool_reader.c" \
  "$REPO/common/schema.c" "$REPO/common/store.c" "$REPO/common/replays.c" "$REPO/common/files.c" \
  "$REPO/common/text.c" "${core[@]}" $sqlite_flags -o "$WORK/fuzz_spool" 2>"$WORK/build.log" ||
  { cat "$WORK/build.log" >&2; skip "clang cannot build a libFuzzer target here"; }
ok "fuzz target built"

# seeds: real spools (records, and events), cut short too, and an empty file
mkdir -p "$WORK/corpus"
"$PYTHON" -m http.server --bind 127.0.0.1 0 --directory "$WORK" >"$WORK/http.log" 2>&1 &
server=$!
at_exit "kill $server 2>/dev/null"
wait_until 60 grep -q 'port [0-9]' "$WORK/http.log" || fail "seed server did not start in 60 s"
port=$(grep -o 'port [0-9]*' "$WORK/http.log" | awk '{print $2}' | head -n 1)
preload curl -s -o /dev/null -o /dev/null "http://127.0.0.1:$port/" "http://127.0.0.1:$port/corpus"
# and a spool of events (OBSERVE_CAPTURE=events): the replay through the core
OBSERVE_CAPTURE=events preload curl -s -o /dev/null -o /dev/null "http://127.0.0.1:$port/" "http://127.0.0.1:$port/corpus"
i=0
for f in "$SPOOL"/*.spool; do
  i=$((i + 1))
  # only the part with data: the zero tail of a grown file adds nothing
  head -c $((4096 + 128 * 32)) "$f" > "$WORK/corpus/seed$i"
  head -c $((4096 + 128 * 2 + 50)) "$f" > "$WORK/corpus/cut$i"
done
: > "$WORK/corpus/empty"
fuzz_run "$WORK/fuzz_spool" "$WORK/corpus" "$seconds"
ok "no crash, leak, undefined behaviour or hang in $seconds s"
