#!/usr/bin/env bash
# deps.sh - install the Debian packages that the build, the demo, the tests
# and the benchmark need. Idempotent: prints nothing when all are there.
#
# Required packages missing: as root, `apt-get update` once and install them
# (then the optional ones, tolerating failure); otherwise say what to install
# and exit 1. Only optional packages missing and not root: a note, exit 0.
set -euo pipefail

required=(
  build-essential cmake pkg-config libsqlite3-dev sqlite3 libcmocka-dev # build
  nginx apache2-utils wrk curl wget python3 nodejs                     # clients, server
  gnuplot-nox procps iproute2 valgrind file time openssh-client        # tests, reports
  clang libclang-rt-14-dev                                             # the fuzz target
  tshark                                                               # accuracy: packets
  libnghttp2-dev nghttp2-client nghttp2-proxy                          # HTTP/2: HPACK, h2load, nghttpx
  libssl-dev libgnutls28-dev libnss3-dev                               # the TLS hooks' types
  default-jdk-headless                                                 # clients: Java
  postgresql-15 postgresql-client-15 libpq-dev                         # the PostgreSQL central store
  libcurl4-openssl-dev zlib1g-dev libmicrohttpd-dev                    # OTLP push, Prometheus endpoint
  prometheus                                                           # its test scrapes our endpoint
)
optional=(
  chromium       # the headless page load in the demo and the tests
  firefox-esr libnss3-tools # Firefox (NSS) over HTTPS, its profile's CA
  linux-perf     # instruction counts in scripts/bench.sh
  strace ltrace  # context figures in scripts/bench.sh
  python3-scipy  # the Mann-Whitney test checked against SciPy (tests/unit)
  openssh-server # pulling client databases over ssh:// (manager tests)
  # the client zoo (tests/clients, docs/clients.md): a client that is not
  # installed is skipped with a message naming its package
  wget2 axel aria2 lynx w3m httpie siege hey
  python3-requests libwww-perl liblwp-protocol-https-perl libio-socket-ssl-perl
  ruby php-cli php-curl
)
# npm fetches OpenTelemetry's .proto files and protobufjs for the OTLP
# export's test (tests/slicer/otlp.sh). A nodejs from NodeSource brings its
# own npm and conflicts with Debian's: asked for only when there is none.
command -v npm >/dev/null 2>&1 || optional+=(npm)

# one dpkg-query for all: "name status" lines of the installed ones
have=" $(dpkg-query -W -f='${Package} ${Status}\n' "${required[@]}" "${optional[@]}" 2>/dev/null |
  awk '/ install ok installed$/ {printf "%s ", $1}' || true) "
installed() { [[ $have == *" $1 "* ]]; }

missing_req=() missing_opt=()
for pkg in "${required[@]}"; do installed "$pkg" || missing_req+=("$pkg"); done
for pkg in "${optional[@]}"; do installed "$pkg" || missing_opt+=("$pkg"); done
[ ${#missing_req[@]} -eq 0 ] && [ ${#missing_opt[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  if [ ${#missing_req[@]} -gt 0 ]; then
    echo "deps: missing Debian packages: ${missing_req[*]}" >&2
    echo "deps: run as root, or: sudo apt-get install --no-install-recommends ${missing_req[*]} ${missing_opt[*]}" >&2
    exit 1
  fi
  echo "deps: optional packages not installed: ${missing_opt[*]} (not root: skipping)" >&2
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
all_missing=("${missing_req[@]}" "${missing_opt[@]}")
echo "deps: installing ${all_missing[*]}" >&2
apt-get update -qq
if [ ${#missing_req[@]} -gt 0 ]; then
  apt-get install -y -qq --no-install-recommends "${missing_req[@]}" >/dev/null
fi
for pkg in "${missing_opt[@]}"; do
  apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null 2>&1 ||
    echo "deps: optional package $pkg could not be installed (continuing)" >&2
done
