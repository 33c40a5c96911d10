# common.sh - sourced by the integration tests and scripts: paths, a private
# work directory removed on exit, assertions, free loopback ports.
# shellcheck shell=bash
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${OBSERVE_BUILD:-$REPO/build}
LIBOBSERVE=$BUILD/lib/libobserve.so
SLICER=$BUILD/bin/slicer
OBSERVE=$BUILD/bin/observe
export REPO BUILD LIBOBSERVE SLICER OBSERVE
export LAYER_PRELOAD
# skip_if_sanitized WHY: a test that cannot run with a sanitized layer
skip_if_sanitized() {
  [ -z "${OBSERVE_SANITIZE:-}" ] || { echo "SKIP: not with sanitizers ($OBSERVE_SANITIZE): $*"; exit 77; }
}
# The interpreter itself, resolved once: a pyenv shim costs ~0.6 s a start.
PYTHON=${PYTHON:-$(python3 -c 'import sys; print(sys.executable)')}
export PYTHON

WORK=$(mktemp -d "${TMPDIR:-/tmp}/observe-test.XXXXXX")
_cleanups=()
at_exit() { _cleanups+=("$*"); }
_run_cleanups() {
  local i
  for ((i = ${#_cleanups[@]} - 1; i >= 0; i--)); do eval "${_cleanups[$i]}" || true; done
  if [ "${KEEP_WORK:-0}" = 1 ]; then echo "work dir kept: $WORK" >&2; else rm -rf "$WORK"; fi
}
trap _run_cleanups EXIT

# What LD_PRELOAD takes to load the layer: the layer itself, or, in a
# sanitized build (CMake's OBSERVE_SANITIZE writes sanitize.env), the
# AddressSanitizer runtime first. The hosts' own leaks are not reported
# there: they are not ours (the unit tests keep leak detection).
LAYER_PRELOAD=$LIBOBSERVE
if [ -f "$BUILD/sanitize.env" ]; then
  # shellcheck disable=SC1091
  source "$BUILD/sanitize.env"
  [ -n "${OBSERVE_PRELOAD_FIRST:-}" ] && LAYER_PRELOAD=$OBSERVE_PRELOAD_FIRST:$LIBOBSERVE
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  export OBSERVE_SANITIZE
  # Some hosts cannot run with the ASan runtime preloaded, with or without
  # the layer: curl, wget, wget2, aria2c and lynx hang at start in glibc's
  # locale lock (LLVM issue 49223), PHP dlopens its extensions with
  # RTLD_DEEPBIND (refused by ASan), Chromium and Firefox crash. Shims first in PATH
  # run them with the UBSan-only build of the layer instead (same code,
  # same hooks), under their own name.
  if [ -n "${OBSERVE_LAYER_NO_ASAN:-}" ]; then
    mkdir -p "$WORK/sanitize-bin"
    for _prog in curl wget wget2 aria2c lynx php chromium firefox-esr; do
      _real=$(command -v "$_prog" || true)
      [ -n "$_real" ] || continue
      cat > "$WORK/sanitize-bin/$_prog" <<SHIM
#!/bin/bash
case "\${LD_PRELOAD:-}" in
*"$OBSERVE_PRELOAD_FIRST"*)
  p=\${LD_PRELOAD//"$OBSERVE_PRELOAD_FIRST:"/}
  export LD_PRELOAD=\${p//"$LIBOBSERVE"/"$OBSERVE_LAYER_NO_ASAN"} ;;
esac
exec -a "$_prog" "$_real" "\$@"
SHIM
      chmod +x "$WORK/sanitize-bin/$_prog"
    done
    export PATH=$WORK/sanitize-bin:$PATH
  fi
fi

fail() { echo "FAIL: $*" >&2; exit 1; }
die() { echo "error: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }
skip() { echo "SKIP: $*"; exit 77; }

# expect_eq ACTUAL EXPECTED WHAT
expect_eq() { [ "$1" == "$2" ] || fail "$3: expected '$2', got '$1'"; ok "$3 = $2"; }
# expect_true "SQL-ish description" COMMAND...
expect_true() { local what=$1; shift; "$@" || fail "$what"; ok "$what"; }

need_cmd() { command -v "$1" >/dev/null 2>&1 || skip "$1 is not installed"; }

# free_port: a port free on 127.0.0.1 now, never one this test was given
# before, drawn below the ephemeral range (tests/lib/free_port.py says why).
free_port() { "$PYTHON" "$REPO/tests/lib/free_port.py" "$WORK/ports"; }

# wait_until SECONDS COMMAND...: run COMMAND every 0.05 s until it succeeds;
# status 1 if it has not after SECONDS. Tests wait for a condition, never
# for a fixed time; the deadlines are generous (60 s here), because a loaded
# machine can be slow to start a server and a deadline costs time only when
# something is wrong.
wait_until() {
  local secs=$1 end
  shift
  end=$((SECONDS + secs))
  until "$@"; do
    [ "$SECONDS" -lt "$end" ] || return 1
    sleep 0.05
  done
}

# port_open PORT: something accepts connections on 127.0.0.1:PORT
port_open() {
  "$PYTHON" -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 5).close()' "$1" 2>/dev/null
}

# wait_port PORT: until something listens on 127.0.0.1:PORT (60 s at most)
wait_port() {
  wait_until 60 port_open "$1" || fail "nothing listens on 127.0.0.1:$1 after 60 s"
}

# q DB SQL: one query, rows on stdout
q() { sqlite3 -batch "$1" "$2"; }

# preload: run a command with the layer preloaded, spools into $SPOOL
SPOOL=$WORK/spool
mkdir -m 0700 "$SPOOL"  # the layer writes only where no one else may
preload() { env LD_PRELOAD="$LAYER_PRELOAD" OBSERVE_DIR="$SPOOL" "$@"; }
# client_run NAME DB COMMAND...: COMMAND as client machine NAME (its own
# spool directory and OBSERVE_CLIENT), its spool then sliced into DB
client_run() {
  local name=$1 db=$2
  shift 2
  mkdir -p "$WORK/spool-$name"
  env LD_PRELOAD="$LAYER_PRELOAD" OBSERVE_DIR="$WORK/spool-$name" OBSERVE_CLIENT="$name" "$@" >/dev/null
  "$SLICER" -q -o "$db" "$WORK/spool-$name"
}

# make_site DIR: a small site: index.html (title "observe demo") that uses a
# stylesheet, a script and two images (PNG, SVG), and plain files of exactly
# 100 B (100b), 50 KB (50k, 51,200 B) and 1 MB (1m, 1,048,576 B).
make_site() {
  local dir=$1
  mkdir -p "$dir"
  head -c 100 /dev/zero | tr '\0' 'a' > "$dir/100b"
  head -c 51200 /dev/zero | tr '\0' 'b' > "$dir/50k"
  head -c 1048576 /dev/zero | tr '\0' 'c' > "$dir/1m"
  printf 'body { font-family: sans-serif; }\nimg { width: 64px; }\n' > "$dir/style.css"
  printf 'document.title = "observe demo";\n' > "$dir/app.js"
  "$PYTHON" - "$dir/logo.png" <<'PY'
import struct, sys, zlib
w = h = 64
rows = b"".join(b"\0" + b"".join(bytes((x * 4, y * 4, 128)) for x in range(w))
                for y in range(h))
def chunk(kind, data):
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data)))
png = (b"\x89PNG\r\n\x1a\n"
       + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
       + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))
open(sys.argv[1], "wb").write(png)
PY
  cat > "$dir/dot.svg" <<'SVG'
<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><circle cx="32" cy="32" r="30" fill="teal"/></svg>
SVG
  cat > "$dir/index.html" <<'HTML'
<!doctype html>
<html><head><meta charset="utf-8"><title>observe demo</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="style.css"><script src="app.js"></script></head>
<body><h1>observe demo</h1>
<p><img src="logo.png" alt="logo"> <img src="dot.svg" alt="dot"></p>
<p><a href="100b">100 B</a> <a href="50k">50 KB</a> <a href="1m">1 MB</a></p>
<iframe src="100b"></iframe><iframe src="50k"></iframe><iframe src="1m"></iframe>
</body></html>
HTML
}

# fault_server MODE [ARGS...]: start tests/servers/faults.py, set FAULT_PORT
fault_server() {
  local mode=$1; shift
  local portfile
  portfile=$(mktemp -u "$WORK/fault-$mode.XXXXXX")
  "$PYTHON" "$REPO/tests/servers/faults.py" "$mode" "$portfile" --lifetime 600 "$@" &
  local pid=$!
  at_exit "kill $pid 2>/dev/null"
  wait_until 60 test -s "$portfile" || fail "fault server $mode did not start in 60 s"
  FAULT_PORT=$(cat "$portfile")
  export FAULT_PORT
}
