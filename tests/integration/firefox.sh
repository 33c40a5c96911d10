#!/usr/bin/env bash
# firefox.sh - headless Firefox (Debian's firefox-esr: NSS and NSPR, shared
# libraries) loads a page of five resources and three iframes from a TLS
# nginx, over HTTP/2 and over HTTP/1.1, then over plain HTTP, checked
# against nginx's own log (tests/lib/check_access.py --http: one exchange
# per request nginx logged, matched on the client's port and the request's
# number on its connection, with nginx's method, path and status):
#   - every exchange with the request's host (127.0.0.1:PORT);
#   - over TLS, one exchange per HTTP/2 stream (distinct stream ids), on
#     connections marked TLS 1.3 with their protocol (h2, http/1.1);
#   - no warning from the tools (a name Firefox looks up at its start, a
#     second or more before its first connection, used to make its
#     connection's info record refused: "time out of range");
#   - every connection to nginx's ports: Firefox is given a fresh profile
#     whose NSS certificate database trusts the test's CA (certutil), and
#     prefs that turn its background networking off.
# The capture (OBSERVE_CAPTURE) is the environment's: CTest runs it both
# ways. Each load waits for the page's load event (--screenshot), bounded
# by timeout.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/nginx.sh"
need_cmd openssl
command -v firefox-esr >/dev/null 2>&1 || skip "firefox-esr is not installed (scripts/deps.sh)"
need_cmd certutil
DB=$WORK/run.db

# a CA, and a server certificate it signs for 127.0.0.1 (Firefox refuses a
# self-signed CA certificate as a server's)
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/ca.key" -out "$WORK/ca.pem" -days 2 \
  -subj "/CN=observe test CA" -addext basicConstraints=critical,CA:TRUE \
  -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null || fail "openssl: the CA"
openssl req -newkey rsa:2048 -nodes -keyout "$WORK/key.pem" -out "$WORK/srv.csr" \
  -subj /CN=127.0.0.1 2>/dev/null || fail "openssl: the request"
printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' > "$WORK/ext.cnf"
openssl x509 -req -in "$WORK/srv.csr" -CA "$WORK/ca.pem" -CAkey "$WORK/ca.key" -CAcreateserial \
  -out "$WORK/cert.pem" -days 2 -extfile "$WORK/ext.cnf" 2>/dev/null || fail "openssl: the certificate"

make_site "$WORK/site"
H1_PORT=$(free_port)
H2_PORT=$(free_port)
while [ "$H2_PORT" = "$H1_PORT" ]; do H2_PORT=$(free_port); done
export NGINX_EXTRA="listen 127.0.0.1:$H1_PORT ssl; listen 127.0.0.1:$H2_PORT ssl http2;
    ssl_certificate $WORK/cert.pem; ssl_certificate_key $WORK/key.pem;
    ssl_protocols TLSv1.2 TLSv1.3;"
nginx_start "$WORK/site"

# the profile: the CA trusted for TLS servers; no update, telemetry, safe
# browsing, captive portal, remote settings, prefetch, DNS over HTTPS
PROF=$WORK/profile
mkdir -p "$PROF" "$WORK/home"
certutil -N -d "sql:$PROF" --empty-password || fail "certutil: the database"
certutil -A -d "sql:$PROF" -t "C,," -n observe-test-ca -i "$WORK/ca.pem" || fail "certutil: the CA"
cat > "$PROF/user.js" <<'JS'
user_pref("app.update.enabled", false);
user_pref("app.update.auto", false);
user_pref("app.normandy.enabled", false);
user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("browser.startup.homepage_override.mstone", "ignore");
user_pref("browser.aboutwelcome.enabled", false);
user_pref("browser.newtabpage.enabled", false);
user_pref("browser.safebrowsing.malware.enabled", false);
user_pref("browser.safebrowsing.phishing.enabled", false);
user_pref("browser.safebrowsing.downloads.enabled", false);
user_pref("browser.safebrowsing.provider.mozilla.updateURL", "");
user_pref("browser.search.update", false);
user_pref("datareporting.healthreport.uploadEnabled", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("extensions.update.enabled", false);
user_pref("extensions.blocklist.enabled", false);
user_pref("network.captive-portal-service.enabled", false);
user_pref("network.connectivity-service.enabled", false);
user_pref("network.dns.disablePrefetch", true);
user_pref("network.http.speculative-parallel-limit", 0);
user_pref("network.prefetch-next", false);
user_pref("network.proxy.type", 0);
user_pref("network.trr.mode", 5);
user_pref("security.OCSP.enabled", 0);
user_pref("services.settings.server", "http://127.0.0.1:1/");
user_pref("startup.homepage_welcome_url", "");
user_pref("toolkit.telemetry.enabled", false);
user_pref("toolkit.telemetry.unified", false);
JS

# load URL: Firefox loads the page (its load event: the screenshot), under
# observe; the tools' words in $WORK/observe.err
load() {
  local url=$1
  rm -f "$DB" "$WORK/shot.png"
  : > "$NGINX_LOG"
  HOME=$WORK/home MOZ_CRASHREPORTER_DISABLE=1 "$OBSERVE" -q -o "$DB" -- \
    timeout 50 firefox-esr --headless --no-remote --profile "$PROF" \
    --screenshot "$WORK/shot.png" "$url" > "$WORK/firefox.out" 2> "$WORK/observe.err" ||
    fail "firefox or observe failed on $url: $(tail -5 "$WORK/observe.err")"
  [ -s "$WORK/shot.png" ] || fail "firefox did not load $url: $(tail -5 "$WORK/observe.err")"
  nginx_settle
  [ "$(wc -l < "$NGINX_LOG")" -eq 8 ] || fail "nginx logged $(wc -l < "$NGINX_LOG") requests, not the page's 8"
  ! grep -E '^(observe|slicer)' "$WORK/observe.err" || fail "the tools warned (above)"
  ok "$url: 8 requests, no word from the tools"
}

# check PORT PROTOCOL: the exchanges are nginx's requests; each with its
# host; every connection to PORT, TLS 1.3 with PROTOCOL where it carried
# any (NULL: plain HTTP)
check() {
  local port=$1 proto=$2
  "$PYTHON" "$REPO/tests/lib/check_access.py" "$DB" "$NGINX_LOG" "$port" --http ||
    fail "the database does not match nginx's log (port $port)"
  expect_eq "$(q "$DB" "SELECT count(*) FROM exchange_metrics WHERE host = '127.0.0.1:$port' AND method = 'GET' AND status = 200")" 8 \
    "port $port: 8 exchanges, each GET, 200, host 127.0.0.1:$port"
  expect_eq "$(q "$DB" "SELECT count(*) FROM connection WHERE NOT (peer_addr = '127.0.0.1' AND peer_port = $port)")" 0 \
    "port $port: no connection elsewhere"
  if [ "$proto" = NULL ]; then
    expect_eq "$(q "$DB" "SELECT count(*) FROM connection WHERE tls")" 0 "port $port: no connection TLS"
  else
    expect_eq "$(q "$DB" "SELECT group_concat(DISTINCT coalesce(tls_version, 'NULL') || ' ' || coalesce(protocol, 'NULL')) FROM connection c WHERE tls AND EXISTS (SELECT 1 FROM exchange e WHERE e.connection_id = c.id)")" \
      "1.3 $proto" "port $port: its connections with exchanges TLS 1.3, $proto"
  fi
}

load "https://127.0.0.1:$H2_PORT/index.html"
check "$H2_PORT" h2
expect_eq "$(q "$DB" "SELECT count(DISTINCT stream) || ' ' || count(DISTINCT connection_id) FROM exchange_metrics WHERE stream > 0")" \
  "8 1" "one exchange per HTTP/2 stream, on one connection"
load "https://127.0.0.1:$H1_PORT/index.html"
check "$H1_PORT" http/1.1
expect_eq "$(q "$DB" "SELECT count(*) FROM exchange_metrics WHERE stream > 0")" 0 "no stream over HTTP/1.1"
load "$NGINX_URL/index.html"
check "$NGINX_PORT" NULL
