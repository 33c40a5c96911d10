# curl: libcurl with OpenSSL; one process, the URLs on one keep-alive
# connection; poll() and non-blocking send()/recv(). HTTP/2 over TLS by
# ALPN (h2); over TCP by prior knowledge (h2c) a process per URL: curl
# 7.88 fails to reuse a prior-knowledge connection ("Error in the HTTP2
# framing layer" on the second URL, bare too).
ZOO_NEED=(curl) ZOO_PACKAGE=curl
ZOO_SCENARIOS="plain tls h2 h2c"
zoo_version() { curl --version; }
zoo_run() {
  local scenario=$1 version=--http1.1
  shift
  case $scenario in
    h2) version=--http2 ;;
    h2c) zoo_each curl -sS -f --http2-prior-knowledge -o /dev/null -- "$@"; return ;;
  esac
  curl -sS -f "$version" --cacert "$ZOO_CERT" -o /dev/null -o /dev/null -o /dev/null "$@"
}
