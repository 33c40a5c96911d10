# h2load: nghttp2's load generator (libev, OpenSSL); HTTP/1.1 (--h1) in the
# plain and tls scenarios, HTTP/2 over TLS in h2, over TCP (prior
# knowledge) in h2c; one connection, one request at a time, the three URLs
# in turn, six requests.
ZOO_NEED=(h2load) ZOO_PACKAGE=nghttp2-client
ZOO_SCENARIOS="plain tls h2 h2c"
zoo_version() { h2load --version; }
zoo_run() {
  local scenario=$1 proto=(); shift
  case $scenario in plain | tls) proto=(--h1) ;; esac
  h2load "${proto[@]}" -n 6 -c 1 -m 1 "$@" >h2load.out && grep -q '6 succeeded' h2load.out
}
