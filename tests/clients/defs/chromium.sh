# chromium: headless Chromium (BoringSSL, its network service process;
# epoll, non-blocking sockets), a page with a stylesheet, a script, two
# images and three iframes (100 B, 50 KB, 1 MB).
ZOO_NEED=(chromium) ZOO_PACKAGE=chromium
ZOO_SCENARIOS="plain tls h2"
ZOO_TIMEOUT=90
zoo_version() { chromium --version 2>/dev/null; }
# shellcheck source=tests/lib/chromium.sh
source "$REPO/tests/lib/chromium.sh"
zoo_run() {
  shift
  chromium "${CHROMIUM_FLAGS[@]}" --ignore-certificate-errors --user-data-dir="$PWD/profile" \
    --dump-dom "${1%/100b}/index.html" >dom.html 2>chromium.log &&
    grep -q "observe demo" dom.html
}
