# python-requests: Debian's python3 with python3-requests (urllib3; ssl:
# OpenSSL), a Session: keep-alive; blocking sockets, recv_into().
ZOO_NEED=(/usr/bin/python3) ZOO_PACKAGE=python3-requests
zoo_probe() { /usr/bin/python3 -c 'import requests'; }
zoo_version() {
  echo "$(/usr/bin/python3 --version), requests $(/usr/bin/python3 -c 'import requests; print(requests.__version__)')"
}
zoo_run() {
  shift
  /usr/bin/python3 "$ZOO_DIR/progs/python_client.py" requests "$ZOO_CERT" "$@"
}
