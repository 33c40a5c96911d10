# httpie: the `http` command (Python, requests/urllib3, OpenSSL through
# python's ssl); one process per URL.
ZOO_NEED=(http) ZOO_PACKAGE=httpie
zoo_version() { echo "httpie $(http --version)"; }
zoo_run() {
  shift
  zoo_each http --ignore-stdin --check-status --body --verify="$ZOO_CERT" GET -- "$@" >/dev/null
}
