# chromium: headless Chromium (BoringSSL, its network service process;
# epoll, non-blocking sockets), a page with a stylesheet, a script, two
# images and three iframes (100 B, 50 KB, 1 MB).
ZOO_NEED=(chromium) ZOO_PACKAGE=chromium
ZOO_SCENARIOS="plain tls h2"
ZOO_TIMEOUT=90
zoo_version() { chromium --version 2>/dev/null; }
zoo_run() {
  shift
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-extensions --disable-component-update \
    --disable-sync --ignore-certificate-errors --user-data-dir="$PWD/profile" \
    --dump-dom "${1%/100b}/index.html" >dom.html 2>chromium.log &&
    grep -q "observe demo" dom.html
}
