# python-urllib: Debian's python3 (ssl: OpenSSL), urllib.request.urlopen:
# a connection per URL; blocking sockets, recv_into().
ZOO_NEED=(/usr/bin/python3) ZOO_PACKAGE=python3
zoo_version() { /usr/bin/python3 --version; }
zoo_run() {
  shift
  /usr/bin/python3 "$ZOO_DIR/progs/python_client.py" urllib "$ZOO_CERT" "$@"
}
