#!/usr/bin/env python3
"""A small TCP server of our own for fault injection (loopback only).

usage: faults.py MODE PORTFILE [--delay-ms N] [--lifetime S] [--host ADDR]

Binds --host (127.0.0.1 unless told, ::1 for IPv6; loopback only) on a free port, writes the port to PORTFILE, then serves each
connection in a thread until --lifetime seconds have passed (default 120):

  delay     read an HTTP request, wait --delay-ms (default 50), answer 200
            with a 5-byte body; keep-alive until the client closes
  midclose  read an HTTP request, promise Content-Length 100000, send 1000
            bytes of it, close
  reset     read an HTTP request, then reset the connection (SO_LINGER 0)
  banner    send "220 hello\\r\\n" first, read one line, answer
            "221 bye\\r\\n", close (an SMTP-like server that speaks first)
  silent    read an HTTP request and never answer (a stalled server); close
            when the client does
  work      a request for /N answers N bytes after --delay-ms, sending them
            at --bytes-per-s: a known time per request plus per byte
            (Tr = delay + N / rate); keep-alive
"""
import argparse
import socket
import struct
import sys
import threading
import time

import loopback


def read_request(conn, buf):
    while b"\r\n\r\n" not in buf:
        data = conn.recv(65536)
        if not data:
            return None, b""
        buf += data
    head, rest = buf.split(b"\r\n\r\n", 1)
    return head, rest


def serve(conn, args):
    try:
        if args.mode == "banner":
            conn.sendall(b"220 hello\r\n")
            line = b""
            while not line.endswith(b"\n"):
                data = conn.recv(1024)
                if not data:
                    return
                line += data
            conn.sendall(b"221 bye\r\n")
            return
        buf = b""
        while True:
            head, buf = read_request(conn, buf)
            if head is None:
                return
            if args.mode == "silent":
                while conn.recv(65536):
                    pass
                return
            if args.mode == "work":
                # no Nagle: the header alone must not wait for a delayed ACK
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                size = int(head.split(b" ")[1].lstrip(b"/").split(b"?")[0] or b"0")
                start = time.monotonic()
                time.sleep(args.delay_ms / 1000.0)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % size)
                sent, chunk = 0, 4096
                while sent < size:
                    n = min(chunk, size - sent)
                    conn.sendall(b"x" * n)
                    sent += n
                    due = start + args.delay_ms / 1000.0 + sent / args.bytes_per_s
                    pause = due - time.monotonic()
                    if pause > 0:
                        time.sleep(pause)
                continue
            if args.mode == "delay":
                time.sleep(args.delay_ms / 1000.0)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"
                             b"Content-Type: text/plain\r\n\r\nhello")
                continue
            if args.mode == "midclose":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n"
                             + b"x" * 1000)
                return
            if args.mode == "reset":
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                struct.pack("ii", 1, 0))
                return
    except OSError:
        pass
    finally:
        conn.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["delay", "midclose", "reset", "banner",
                                     "silent", "work"])
    ap.add_argument("--bytes-per-s", type=float, default=1e6)
    ap.add_argument("portfile")
    ap.add_argument("--delay-ms", type=float, default=50.0)
    ap.add_argument("--lifetime", type=float, default=120.0)
    ap.add_argument("--host", default="127.0.0.1", choices=["127.0.0.1", "::1"])
    args = ap.parse_args()

    return loopback.serve(args.host, args.portfile, args.lifetime,
                          lambda conn: serve(conn, args))


if __name__ == "__main__":
    sys.exit(main())
