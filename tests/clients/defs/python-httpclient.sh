# python-httpclient: Debian's python3 (ssl: OpenSSL), http.client: one
# keep-alive connection; blocking sockets, recv_into().
ZOO_NEED=(/usr/bin/python3) ZOO_PACKAGE=python3
zoo_version() { /usr/bin/python3 --version; }
zoo_run() {
  shift
  /usr/bin/python3 "$ZOO_DIR/progs/python_client.py" httpclient "$ZOO_CERT" "$@"
}
