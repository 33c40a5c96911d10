# aria2c: aria2 with GnuTLS; one process, each URL a download of its own
# (-Z), several at once; epoll and non-blocking sockets.
ZOO_NEED=(aria2c) ZOO_PACKAGE=aria2
zoo_version() { aria2c --version; }
zoo_run() {
  shift
  aria2c -q -Z --ca-certificate="$ZOO_CERT" -d . "$@"
}
