# lynx: the text browser (GnuTLS); one process per URL (-source), blocking
# sockets, the response read with recv().
ZOO_NEED=(lynx) ZOO_PACKAGE=lynx
zoo_version() { lynx -version; }
zoo_run() {
  shift
  SSL_CERT_FILE=$ZOO_CERT zoo_each lynx -source -- "$@" >/dev/null
}
