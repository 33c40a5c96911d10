# node-http: Node.js, the http/https modules (libuv: epoll, non-blocking
# sockets; OpenSSL), a keep-alive agent, then a connection of its own.
ZOO_NEED=(node) ZOO_PACKAGE=nodejs
zoo_version() { echo "node $(node --version)"; }
zoo_run() {
  shift
  node "$ZOO_DIR/progs/node_client.js" http "$ZOO_CERT" "$@"
}
