#!/usr/bin/env python3
"""An HTTP/1.1 server of our own for the edges of RFC 9112 (loopback only).

usage: h1edges.py PORTFILE LOGFILE [--lifetime S]

Binds 127.0.0.1 on a free port, writes the port to PORTFILE, and serves
each connection in a thread, keep-alive, until --lifetime seconds have
passed (default 120). Every request it answers is a line of LOGFILE:
"<client port>\t<number on the connection>\t<method>\t<target>\t<status>"
(the final status; for CONNECT, that of the CONNECT itself).

  PUT/POST with Expect: 100-continue
            100 Continue, then the body is read, then 201 Created
  GET /early  103 Early Hints (a Link header), then 200 with 5 bytes
  GET /chunked  200, a chunked body in three chunks and a trailer
  GET /close  HTTP/1.0 200 without Content-Length: the body ends with
            the connection
  GET /empty  the connection is closed without a word
  GET /nothing  204 No Content
  GET /ws   101 Switching Protocols to WebSocket: every message the
            client sends comes back; a close frame is answered and ends it
  CONNECT 127.0.0.1:PORT
            200, then bytes relayed both ways to that port (only to
            127.0.0.1)
  anything else  200 with 5 bytes, "hello"
"""
import argparse
import base64
import hashlib
import socket
import sys
import threading
import time

import loopback

log_lock = threading.Lock()


def log(args, port, n, method, target, status):
    with log_lock, open(args.log, "a", encoding="utf-8") as f:
        f.write(f"{port}\t{n}\t{method}\t{target}\t{status}\n")


def read_head(conn, buf):
    """(head bytes, rest) or (None, buf) at the end of the stream."""
    while b"\r\n\r\n" not in buf:
        data = conn.recv(65536)
        if not data:
            return None, buf
        buf += data
    head, rest = buf.split(b"\r\n\r\n", 1)
    return head.decode("latin-1"), rest


def read_exact(conn, buf, n):
    while len(buf) < n:
        data = conn.recv(65536)
        if not data:
            raise ConnectionError("closed in a body")
        buf += data
    return buf[:n], buf[n:]


def read_chunked(conn, buf):
    while True:
        while b"\r\n" not in buf:
            buf += conn.recv(65536)
        line, buf = buf.split(b"\r\n", 1)
        size = int(line.split(b";")[0], 16)
        if size == 0:
            while b"\r\n\r\n" not in b"\r\n" + buf:
                buf += conn.recv(65536)
            return (b"\r\n" + buf).split(b"\r\n\r\n", 1)[1]
        _, buf = read_exact(conn, buf, size + 2)


def relay(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
    except OSError:
        pass
    finally:
        try:
            b.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def websocket(conn, buf):
    """Echo every message until a close frame."""
    while True:
        while len(buf) < 2:
            data = conn.recv(65536)
            if not data:
                return
            buf += data
        b0, b1 = buf[0], buf[1]
        n, at = b1 & 0x7F, 2
        if n == 126:
            n, at = int.from_bytes(read_exact(conn, buf, 4)[0][2:4], "big"), 4
        elif n == 127:
            n, at = int.from_bytes(read_exact(conn, buf, 10)[0][2:10], "big"), 10
        mask_len = 4 if b1 & 0x80 else 0
        frame, buf = read_exact(conn, buf, at + mask_len + n)
        payload = frame[at + mask_len:]
        if mask_len:
            key = frame[at:at + 4]
            payload = bytes(c ^ key[i % 4] for i, c in enumerate(payload))
        op = b0 & 0x0F
        out = bytes([0x80 | op])
        out += bytes([len(payload)]) if len(payload) < 126 else \
            bytes([126]) + len(payload).to_bytes(2, "big")
        conn.sendall(out + payload)
        if op == 8:
            return


def serve(conn, args):
    port = conn.getpeername()[1]
    buf, n = b"", 0
    try:
        while True:
            head, buf = read_head(conn, buf)
            if head is None:
                return
            n += 1
            lines = head.split("\r\n")
            method, target, _ = lines[0].split(" ", 2)
            fields = {}
            for line in lines[1:]:
                name, _, value = line.partition(":")
                fields[name.strip().lower()] = value.strip()
            if method == "CONNECT":
                host, _, tport = target.rpartition(":")
                if host != "127.0.0.1":
                    conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
                    log(args, port, n, method, target, 403)
                    continue
                up = socket.create_connection(("127.0.0.1", int(tport)))
                conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                log(args, port, n, method, target, 200)
                if buf:
                    up.sendall(buf)
                t = threading.Thread(target=relay, args=(up, conn), daemon=True)
                t.start()
                relay(conn, up)
                t.join(args.lifetime)
                up.close()
                return
            if fields.get("expect", "").lower() == "100-continue":
                conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            if "content-length" in fields:
                _, buf = read_exact(conn, buf, int(fields["content-length"]))
            elif fields.get("transfer-encoding", "").lower().endswith("chunked"):
                buf = read_chunked(conn, buf)
            status = 200
            if method in ("PUT", "POST"):
                status = 201
                conn.sendall(b"HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n")
            elif target == "/early":
                conn.sendall(b"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n")
                time.sleep(0.01)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nearly")
            elif target == "/chunked":
                conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                             b"5\r\nhello\r\n")
                time.sleep(0.01)
                conn.sendall(b"7;x=1\r\n, world\r\n1\r\n!\r\n0\r\nX-T: 1\r\n\r\n")
            elif target == "/close":
                conn.sendall(b"HTTP/1.0 200 OK\r\n\r\nuntil the end")
                log(args, port, n, method, target, 200)
                return
            elif target == "/empty":
                log(args, port, n, method, target, 0)
                return
            elif target == "/nothing":
                status = 204
                conn.sendall(b"HTTP/1.1 204 No Content\r\n\r\n")
            elif target == "/ws":
                key = fields.get("sec-websocket-key", "")
                accept = base64.b64encode(hashlib.sha1(
                    (key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest())
                conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                             b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept +
                             b"\r\n\r\n")
                log(args, port, n, method, target, 101)
                websocket(conn, buf)
                return
            else:
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
            log(args, port, n, method, target, status)
    except (OSError, ConnectionError, ValueError):
        return
    finally:
        conn.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("portfile")
    ap.add_argument("log")
    ap.add_argument("--lifetime", type=float, default=120)
    args = ap.parse_args()
    return loopback.serve("127.0.0.1", args.portfile, args.lifetime,
                          lambda conn: serve(conn, args))

if __name__ == "__main__":
    sys.exit(main())
