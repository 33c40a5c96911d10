"""Clients whose process life is the point: kill, fork, threads, close-all.

usage: lifecycle.py CASE HOST PORT
"""
import http.client
import os
import socket
import sys
import threading
import time

case, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])


def requests(n, path="/100b"):
    c = http.client.HTTPConnection(host, port)
    for _ in range(n):
        c.request("GET", path)
        r = c.getresponse()
        r.read()
        assert r.status == 200
    c.close()


if case == "kill":
    # 20 keep-alive requests, then wait to be killed with the connection open
    c = http.client.HTTPConnection(host, port)
    for _ in range(20):
        c.request("GET", "/100b")
        c.getresponse().read()
    print("ready", flush=True)
    time.sleep(60)
elif case == "fork":
    requests(2)
    pid = os.fork()
    if pid == 0:
        requests(3)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert status == 0
    print(os.getpid())
elif case == "threads":
    ts = [threading.Thread(target=requests, args=(5,)) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    # one connection used from two threads: one sends, the other receives
    s = socket.create_connection((host, port))
    got = []

    def reader():
        buf = b""
        while buf.count(b"HTTP/1.1 200") < 5 or not buf.endswith(b"a" * 100):
            data = s.recv(65536)
            if not data:
                break
            buf += data
        got.append(buf)

    rt = threading.Thread(target=reader)
    rt.start()
    for _ in range(5):
        s.sendall(f"GET /100b HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        time.sleep(0.05)  # one request at a time: five exchanges
    rt.join(10)
    s.close()
    assert got and got[0].count(b"HTTP/1.1 200") == 5
elif case == "closeall":
    requests(1)
    os.closerange(3, 65536)
    requests(2)
    # the layer must not have written into fds it does not own: a file
    # opened now and written by us holds exactly what we wrote
    with open(sys.argv[4], "w") as f:
        f.write("mine\n")
    requests(1)
elif case == "exec":
    # one request, then the same process becomes curl, which makes another
    requests(1)
    print(os.getpid(), flush=True)
    os.execv("/usr/bin/curl", ["curl", "-sf", "-o", "/dev/null",
                               f"http://{host}:{port}/50k"])
else:
    sys.exit("unknown case " + case)
