# w3m: the text browser (OpenSSL); one process per URL (-dump_source), its
# own HTTP/1.0 code, blocking sockets.
ZOO_NEED=(w3m) ZOO_PACKAGE=w3m
zoo_version() { w3m -version; }
zoo_run() {
  shift
  zoo_each w3m -o ssl_ca_file="$ZOO_CERT" -o ssl_verify_server=1 -dump_source -- "$@" >/dev/null
}
