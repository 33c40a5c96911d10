# hey: the Go load generator; Go's runtime makes its own system calls
# (netpoll: epoll, non-blocking sockets), crypto/tls, certificate unchecked;
# one URL a run, three requests on one keep-alive connection (-c 1).
ZOO_NEED=(hey) ZOO_PACKAGE=hey
zoo_version() { echo "hey $(dpkg-query -W -f='${Version}' hey 2>/dev/null), built with $(strings /usr/bin/hey | grep -m 1 -o '^go1[.0-9]*')"; }
zoo_run() {
  shift
  hey -n 3 -c 1 "$2" >hey.out && grep -q '\[200\]	3 responses' hey.out
}
