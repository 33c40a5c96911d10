#!/usr/bin/env bash
# bench/keylog.sh [PAIRS] [MIB] - what decrypting Chromium's TLS with its
# key log costs (OBSERVE_CAPTURE=events; docs/capture.md, "TLS decrypted
# with the key log"):
#   1. a TLS 1.3 nginx (BENCH_TLS=1.2: TLS 1.2) on loopback serves, over
#      h2, a page of 8 images of MIB MiB each (default 4: 32 MiB a load);
#   2. headless Chromium loads it (--dump-dom: until its load event, a new
#      profile each time) PAIRS times (default 9) each way: bare and under
#      the layer with the event capture, in pairs whose first run
#      alternates; the wall time of each whole run (Chromium's start and
#      exit included) is measured;
#   3. prints each way's median and min-max, the ratio of the medians, and,
#      from the layer's own report at each connection's end (OBSERVE_LOG=2:
#      "TLS decrypted: D of R bytes received"), the bytes decrypted over the
#      bytes received.
# Chromium's start dominates a run of a few hundred ms: the ratio is of a
# whole page load as a user runs it. All traffic is to 127.0.0.1.
# Usage: bench/keylog.sh 9 4     (about a minute)
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_NO_DEPS=1
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh
# shellcheck source=tests/lib/chromium.sh
source tests/lib/chromium.sh
pairs=${1:-9}
mib=${2:-4}
command -v chromium >/dev/null || die "chromium is not installed (scripts/deps.sh)"

make_site "$WORK/site"
{
  echo '<!doctype html><html><head><meta charset="utf-8"><title>big</title>'
  echo '<link rel="icon" href="data:,"></head><body><h1>big</h1>'
  for i in 1 2 3 4 5 6 7 8; do
    head -c $((mib << 20)) /dev/urandom > "$WORK/site/big$i.png"
    echo "<img src=\"big$i.png\">"
  done
  echo '</body></html>'
} > "$WORK/site/big.html"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/key.pem" -out "$WORK/cert.pem" \
  -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null ||
  die "openssl could not make a certificate"
H2_PORT=$(free_port)
tls=${BENCH_TLS:-1.3}
case $tls in 1.2 | 1.3) ;; *) die "BENCH_TLS: 1.2 or 1.3, not $tls" ;; esac
export NGINX_EXTRA="listen 127.0.0.1:$H2_PORT ssl http2;
    ssl_certificate $WORK/cert.pem; ssl_certificate_key $WORK/key.pem;
    ssl_protocols TLSv$tls;"
nginx_start "$WORK/site"
url=https://127.0.0.1:$H2_PORT/big.html

# load WAY: one page load (WAY bare or events), its wall ms on stdout
load() {
  local way=$1 t0 t1 run=()
  [ "$way" = events ] &&
    run=(env LD_PRELOAD="$LAYER_PRELOAD" OBSERVE_DIR="$WORK/spool" OBSERVE_CAPTURE=events OBSERVE_LOG=2)
  rm -rf "$WORK/profile"
  t0=$(date +%s%N)
  "${run[@]}" timeout 120 chromium "${CHROMIUM_FLAGS[@]}" --ignore-certificate-errors \
    --user-data-dir="$WORK/profile" --dump-dom "$url" > "$WORK/dom.html" 2>> "$WORK/$way.err" || true
  t1=$(date +%s%N)
  grep -q '<h1>big</h1>' "$WORK/dom.html" || die "chromium did not load the page ($way): $(tail -3 "$WORK/$way.err")"
  echo $(((t1 - t0) / 1000000))
}

: > "$WORK/bare.ms"
: > "$WORK/events.ms"
load bare > /dev/null # warm the page cache and Chromium's files
for ((i = 0; i < pairs; i++)); do # alternating which goes first
  if ((i % 2)); then order=(events bare); else order=(bare events); fi
  for way in "${order[@]}"; do load "$way" >> "$WORK/$way.ms"; done
  rm -rf "$WORK/spool"
done

"$PYTHON" - "$WORK" "$pairs" "$mib" "$tls" <<'PY'
import re, statistics, sys
work, pairs, mib, tls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
ms = {w: [int(l) for l in open(f"{work}/{w}.ms")] for w in ("bare", "events")}
med = {w: statistics.median(v) for w, v in ms.items()}
print(f"headless Chromium, a page of 8 x {mib} MiB over h2 (TLS {tls}), {pairs} alternating pairs")
for w in ("bare", "events"):
    print(f"  {w:7} median {med[w]:7.0f} ms   min-max {min(ms[w])}-{max(ms[w])} ms")
print(f"  wall time under the layer / bare (medians): {med['events'] / med['bare']:.3f}x")
dec = rec = n = 0
for line in open(f"{work}/events.err", errors="replace"):
    m = re.search(r"TLS decrypted: (\d+) of (\d+) bytes received", line)
    if m:
        dec += int(m[1]); rec += int(m[2]); n += 1
if rec:
    print(f"  bytes decrypted / bytes received: {dec} / {rec} = {dec / rec:.3f} "
          f"({n} connections, {pairs} loads)")
else:
    print("  no connection said what it decrypted (OBSERVE_LOG=2)")
PY
