#!/usr/bin/env bash
# run-fuzz-otlp.sh [SECONDS] - build the fuzz target of the OTLP exporter's
# parsers (fuzz_otlp.c with otel/response.c and otel/headers.c) with clang's
# libFuzzer, AddressSanitizer and UBSan, seed it with answers, Retry-After
# values and header lists of each form, and run it: briefly in CI (default
# 10 s), longer on demand (tests/fuzz/run-fuzz-otlp.sh 600). Exit 77
# (skipped) without clang/libFuzzer.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/fuzz.sh"
seconds=${1:-10}
command -v clang >/dev/null || skip "clang is not installed"
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$REPO/otel" "$REPO/tests/fuzz/fuzz_otlp.c" "$REPO/otel/response.c" "$REPO/otel/headers.c" \
  -o "$WORK/fuzz_otlp" 2>"$WORK/build.log" ||
  { cat "$WORK/build.log" >&2; skip "clang cannot build a libFuzzer target here"; }
ok "fuzz target built"

# seeds: the first byte picks the parser (0 answer, 1 Retry-After, 2 headers)
mkdir -p "$WORK/corpus"
seed() { printf '%b%s' "$1" "$2" > "$WORK/corpus/$3"; }
seed '\x00' '{"partialSuccess":{"rejectedSpans":"3","errorMessage":"bad \u00e9 span"}}' partial
seed '\x00' '{"partialSuccess":{"rejectedDataPoints":7}}' points
seed '\x00' '{"code":3,"message":"invalid \"x\"","details":[{"a":[1,2.5e3,true,null]}]}' status
seed '\x00' '{}' empty
seed '\x01' '120' seconds
seed '\x01' 'Sun, 06 Nov 1994 08:49:37 GMT' imf
seed '\x01' 'Sunday, 06-Nov-94 08:49:37 GMT' rfc850
seed '\x01' 'Sun Nov  6 08:49:37 1994' asctime
seed '\x02' 'api-key=secret%20value,x-tenant = t1 ,' headers
seed '\x02' 'a=%zz,=b,c' bad
fuzz_run "$WORK/fuzz_otlp" "$WORK/corpus" "$seconds"
ok "no crash, broken promise, undefined behaviour or hang in $seconds s"
