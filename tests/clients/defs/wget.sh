# wget: GNU Wget 1.21 with GnuTLS; one process, the URLs on one keep-alive
# connection; select() and blocking recv(), the headers peeked first.
ZOO_NEED=(wget) ZOO_PACKAGE=wget
zoo_version() { wget --version; }
zoo_run() {
  shift
  wget -q --ca-certificate="$ZOO_CERT" -O /dev/null "$@"
}
