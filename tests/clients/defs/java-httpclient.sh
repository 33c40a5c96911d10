# java-httpclient: java.net.http.HttpClient (JSSE: Java's own TLS), its
# defaults: HTTP/2 where offered, a selector thread doing the I/O.
ZOO_NEED=(java javac) ZOO_PACKAGE=default-jdk-headless
ZOO_SCENARIOS="plain tls h2"
zoo_version() { java -version 2>&1 | head -n 1; }
zoo_prepare() { javac -d "$ZOO_CACHE" "$ZOO_DIR/progs/ZooClient.java"; }
zoo_run() {
  shift
  java -cp "$ZOO_CACHE" ZooClient httpclient "$ZOO_CERT" "$@"
}
