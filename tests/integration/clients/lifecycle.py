"""Clients whose process life is the point: kill, fork, threads, close-all.

usage: lifecycle.py CASE HOST PORT
"""
import http.client
import os
import shutil
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
elif case == "sendcut":
    # a server of its own (a thread; the layer follows connect()s only)
    # that answers one request and then reads nothing more: the upload
    # after it fills the socket buffers, and the send blocks until the
    # process is killed
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def serve():
        s, _ = srv.accept()
        got = b""
        while b"\r\n\r\n" not in got:
            got += s.recv(4096)
        s.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        time.sleep(120)

    threading.Thread(target=serve, daemon=True).start()
    c = socket.create_connection(srv.getsockname())
    c.sendall(b"GET /first HTTP/1.1\r\nHost: x\r\n\r\n")
    got = b""
    while not got.endswith(b"ok"):
        got += c.recv(4096)
    print("sending", c.getsockname()[1], flush=True)
    c.sendall(b"POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: 50000000\r\n\r\n" + b"a" * 50000000)
    print("the upload returned", flush=True)
elif case == "fork":
    requests(2)
    pid = os.fork()
    if pid == 0:
        requests(3)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert status == 0
    print(os.getpid())
elif case == "dnsfork":
    # HOST looked up once, 1.2 s before any connection; then a child
    # connects to its address, and after it the parent: neither looks it
    # up again (a numeric address is no lookup)
    addr = socket.getaddrinfo(host, port, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]
    time.sleep(1.2)

    def get():
        s = socket.create_connection((addr, port))
        s.sendall(b"GET /100b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        while s.recv(65536):
            pass
        s.close()

    pid = os.fork()
    if pid == 0:
        get()
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert status == 0
    get()
    print(os.getpid())
elif case == "threads":
    ts = [threading.Thread(target=requests, args=(5,)) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    # one connection used from two threads: one sends, the other receives.
    # The sender waits until the reader has the whole previous answer, so
    # the requests are never sent back to back (that would be one burst):
    # SHARED_N exchanges, whatever the scheduling.
    shared_n = int(os.environ.get("SHARED_N", "10"))

    def shared(address, request, answer):
        """request(i): the bytes of request i; answer(buf): the first
        answer at the start of buf and the bytes after it, or None while
        it is not all there. The answers, in order."""
        s = socket.create_connection(address)
        answered = threading.Semaphore(0)
        got = []

        def reader():
            buf = b""
            for _ in range(shared_n):
                while (a := answer(buf)) is None:
                    data = s.recv(65536)
                    if not data:
                        return
                    buf += data
                got.append(a[0])
                buf = a[1]
                answered.release()

        rt = threading.Thread(target=reader)
        rt.start()
        for i in range(shared_n):
            s.sendall(request(i))
            if not answered.acquire(timeout=60):
                break
        rt.join(60)
        s.close()
        return got

    def http_answer(buf):
        if b"\r\n\r\n" not in buf:
            return None
        head, rest = buf.split(b"\r\n\r\n", 1)
        length = int([h for h in head.split(b"\r\n") if h.lower()
                      .startswith(b"content-length:")][0].split(b":")[1])
        if len(rest) < length:
            return None
        return head.split(b"\r\n")[0], rest[length:]

    got = shared((host, port),
                 lambda i: f"GET /100b HTTP/1.1\r\nHost: {host}\r\n\r\n"
                 .encode(), http_answer)
    assert got == [b"HTTP/1.1 200 OK"] * shared_n, got
    # the same on a connection of another protocol (lines, no HTTP; its
    # server a thread of this process, on an accepted socket the layer
    # does not track): "PING i" answered by "PONG i"
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def serve():
        c, _ = srv.accept()
        for line in c.makefile("rb"):
            c.sendall(b"PONG " + line[5:])
        c.close()

    st = threading.Thread(target=serve)
    st.start()
    got = shared(srv.getsockname(), lambda i: b"PING %d\n" % i,
                 lambda buf: tuple(buf.split(b"\n", 1)) if b"\n" in buf
                 else None)
    st.join(60)
    assert got == [b"PONG %d" % i for i in range(shared_n)], got
    print("other_port", srv.getsockname()[1], flush=True)
elif case == "closeall":
    # usage: lifecycle.py closeall HOST PORT FILE [range|from|loop]
    # A connection is left open (one exchange done) when every fd from 3 up
    # is closed, with os.closerange (close_range), closefrom or a loop of
    # close(); new fds then reuse the old numbers.
    import ctypes
    variant = sys.argv[5] if len(sys.argv) > 5 else "range"
    libc = ctypes.CDLL(None, use_errno=True)
    requests(1)
    held = http.client.HTTPConnection(host, port)
    held.request("GET", "/100b")
    held.getresponse().read()
    os.open(os.devnull, os.O_RDONLY)  # a plain file among the closed fds
    if variant == "range":
        os.closerange(3, 65536)
    elif variant == "from":
        libc.closefrom(3)
    elif variant == "loop":
        for fd in range(3, 1024):
            try:
                os.close(fd)
            except OSError:
                pass
    else:
        sys.exit("unknown variant " + variant)
    held.sock.detach()  # its fd is gone: Python must not close it again
    held.sock = None
    # the layer must not have written into fds it does not own: a file
    # opened now (on the lowest free number, a closed socket's) and written
    # by us holds exactly what we wrote, although connections come and go
    f = open(sys.argv[4], "w")
    requests(2)
    f.write("mine\n")
    f.flush()
    requests(1)
    f.write("still mine\n")
    f.close()
    print(os.getpid(), flush=True)
elif case == "exec":
    # one request, then the same process becomes curl, which makes another
    requests(1)
    print(os.getpid(), flush=True)
    # (curl found on PATH: a sanitized test run puts a shim there)
    os.execv(shutil.which("curl"), ["curl", "-sf", "-o", "/dev/null",
                                    f"http://{host}:{port}/50k"])
elif case == "dup":
    # usage: lifecycle.py dup HOST PORT FILE - a connection used through
    # dup()s of its fd, ended by dup2() of a file onto its last fd; the fd
    # numbers then carry a file and new connections, none inheriting state.
    import fcntl

    def raw_request(fd, path="/100b"):
        os.write(fd, f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        buf = b""
        while b"\r\n\r\n" not in buf:
            data = os.read(fd, 65536)
            assert data, "EOF in headers"
            buf += data
        head, body = buf.split(b"\r\n\r\n", 1)
        length = int([h for h in head.split(b"\r\n")
                      if h.lower().startswith(b"content-length:")][0].split(b":")[1])
        while len(body) < length:
            data = os.read(fd, 65536)
            assert data, "EOF in body"
            body += data
        assert head.startswith(b"HTTP/1.1 200"), head

    a = socket.create_connection((host, port))
    afd = a.detach()
    raw_request(afd)                 # A 1
    d = os.dup(afd)
    raw_request(d)                   # A 2, through the dup
    os.close(afd)                    # A stays open through d
    raw_request(d)                   # A 3
    f = os.open(sys.argv[4], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(f, d)                    # closes A; d is now the file
    os.write(d, f"GET /100b HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    os.close(d)
    os.close(f)
    b = socket.create_connection((host, port))  # B reuses a low fd number
    raw_request(b.fileno())          # B 1
    c = socket.create_connection((host, port))
    e = fcntl.fcntl(c.fileno(), fcntl.F_DUPFD_CLOEXEC, 100)
    c.close()                        # C stays open through e
    raw_request(e)                   # C 1
    raw_request(e)                   # C 2
    os.close(e)
    b.close()
    print(os.getpid(), flush=True)
else:
    sys.exit("unknown case " + case)
