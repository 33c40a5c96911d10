# java-urlconnection: java.net.HttpURLConnection (JSSE), blocking sockets,
# its keep-alive cache.
ZOO_NEED=(java javac) ZOO_PACKAGE=default-jdk-headless
zoo_version() { java -version 2>&1 | head -n 1; }
zoo_prepare() { javac -d "$ZOO_CACHE" "$ZOO_DIR/progs/ZooClient.java"; }
zoo_run() {
  shift
  java -cp "$ZOO_CACHE" ZooClient urlconnection "$ZOO_CERT" "$@"
}
