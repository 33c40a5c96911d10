# chromium.sh - how the tests and benchmarks start headless Chromium
# (Debian's chromium).
# shellcheck shell=bash
#
# CHROMIUM_FLAGS: headless, as root (--no-sandbox), without a GPU, QUIC,
#   a first-run page, extensions, or background traffic of its own
#   (component updates, sync, safe browsing...: on this machine's closed
#   network those are connections refused at every start). Add
#   --user-data-dir=A_NEW_DIR and, to wait for the page's load event and
#   print its DOM, --dump-dom URL:
#     timeout 90 chromium "${CHROMIUM_FLAGS[@]}" --user-data-dir="$WORK/p" \
#       --dump-dom "$URL" > dom.html
# shellcheck disable=SC2034  # used by the scripts that source this file
CHROMIUM_FLAGS=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
  --disable-background-networking --disable-extensions --disable-component-update
  --disable-sync)
