# wget2: GNU Wget2 with GnuTLS and nghttp2; several threads, TCP Fast Open,
# HTTP/2 where the server offers it.
ZOO_NEED=(wget2) ZOO_PACKAGE=wget2
ZOO_SCENARIOS="plain tls h2"
zoo_version() { wget2 --version; }
zoo_run() {
  shift
  wget2 -q --ca-certificate="$ZOO_CERT" -O /dev/null "$@"
}
