# node-fetch: Node.js, the global fetch() (undici over libuv; OpenSSL),
# its own keep-alive pool.
ZOO_NEED=(node) ZOO_PACKAGE=nodejs
zoo_version() { echo "node $(node --version)"; }
zoo_run() {
  shift
  NODE_EXTRA_CA_CERTS=$ZOO_CERT node "$ZOO_DIR/progs/node_client.js" fetch "$ZOO_CERT" "$@"
}
