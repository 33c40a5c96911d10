# ab: ApacheBench (APR, OpenSSL): one URL a run: three requests on
# connections of their own, then three on one keep-alive connection (-k);
# epoll (apr_pollset) and non-blocking sockets.
ZOO_NEED=(ab) ZOO_PACKAGE=apache2-utils
zoo_version() { ab -V | head -n 1; }
zoo_run() {
  shift
  ab -q -n 3 "$2" >/dev/null && ab -q -k -n 3 "$1" >/dev/null
}
