"""pausing_client.py PORT GO N - HTTP/1.1 GETs of /100b on 2 keep-alive
connections to 127.0.0.1:PORT: N requests, then "waiting" on stdout until
the file GO exists (120 s at most), then N more, then both connections
closed and "done". For tests that look at a client's records while its
connections are open (in flight)."""
import http.client
import os
import sys
import time

port, go, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
conns = [http.client.HTTPConnection("127.0.0.1", port) for _ in range(2)]


def run(k):
    for i in range(k):
        c = conns[i % 2]
        c.request("GET", "/100b")
        r = c.getresponse()
        r.read()
        assert r.status == 200, r.status


run(n)
print("waiting", flush=True)
deadline = time.monotonic() + 120
while not os.path.exists(go) and time.monotonic() < deadline:
    time.sleep(0.05)
run(n)
for c in conns:
    c.close()
print("done", flush=True)
