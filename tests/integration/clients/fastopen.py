"""TCP Fast Open with a cookie: run in a network namespace of its own whose
net.ipv4.tcp_fastopen allows a server (protocols.sh fastopen). A server of
ours with TCP_FASTOPEN; then, each on a new connection:
  1. sendto(MSG_FASTOPEN), blocking: the cookie is asked and got;
  2. sendto(MSG_FASTOPEN), non-blocking: the request goes with the SYN
     (the call returns its bytes, the connection still being made);
  3. TCP_FASTOPEN_CONNECT, connect() (returns 0 at once: the SYN waits for
     the first send), then the request.
Prints nothing; fails when the kernel did not do as above."""
import socket
import threading

TCP_FASTOPEN_CONNECT = 30
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.setsockopt(socket.IPPROTO_TCP, socket.TCP_FASTOPEN, 16)
srv.listen(16)
addr = srv.getsockname()


def serve():
    while True:
        c, _ = srv.accept()
        buf = b""
        while b"\r\n\r\n" not in buf:
            d = c.recv(4096)
            if not d:
                break
            buf += d
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
                  b"Connection: close\r\n\r\nok")
        c.close()


threading.Thread(target=serve, daemon=True).start()
req = b"GET /tfo HTTP/1.1\r\nHost: x\r\n\r\n"


def drain(s):
    s.setblocking(True)
    while s.recv(4096):
        pass
    s.close()


s = socket.socket()
assert s.sendto(req, socket.MSG_FASTOPEN, addr) == len(req)
drain(s)
s = socket.socket()
s.setblocking(False)
assert s.sendto(req, socket.MSG_FASTOPEN, addr) == len(req), "no cookie"
drain(s)
s = socket.socket()
s.setsockopt(socket.IPPROTO_TCP, TCP_FASTOPEN_CONNECT, 1)
assert s.connect_ex(addr) == 0
s.sendall(req)
drain(s)
