#!/usr/bin/env python3
"""A recording TCP relay (loopback only), for tests that need the bytes a
real client and a real server exchanged.

usage: relay.py PORTFILE UPSTREAM_PORT RECORDING_PREFIX [--lifetime S]

Binds 127.0.0.1 on a free port, writes the port to PORTFILE, and relays each
connection to 127.0.0.1:UPSTREAM_PORT until --lifetime seconds have passed
(default 120). The bytes of the N-th connection (from 1) go to
RECORDING_PREFIX.N as records: one byte of direction ('>' client to server,
'<' server to client), the length (4 bytes, big-endian), the bytes; each
record is written before its bytes are passed on, so a reply is always
recorded after what it answers. RECORDING_PREFIX.N.done appears when both
sides have closed.
"""
import argparse
import os
import socket
import struct
import sys
import threading
import time


def pump(src, dst, mark, out, lock):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            with lock:
                out.write(mark + struct.pack(">I", len(data)) + data)
                out.flush()
            dst.sendall(data)
    except OSError:
        pass
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def relay(client, upstream_port, path):
    lock = threading.Lock()
    with open(path, "wb") as out:
        try:
            server = socket.create_connection(("127.0.0.1", upstream_port), 10)
        except OSError as e:
            print(f"relay: upstream port {upstream_port}: {e}", file=sys.stderr)
            client.close()
            return
        server.settimeout(None)
        up = threading.Thread(target=pump, args=(client, server, b">", out, lock))
        up.start()
        pump(server, client, b"<", out, lock)
        up.join()
        server.close()
        client.close()
    open(path + ".done", "w").close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("portfile")
    ap.add_argument("upstream_port", type=int)
    ap.add_argument("prefix")
    ap.add_argument("--lifetime", type=float, default=120)
    args = ap.parse_args()

    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(64)
    ls.settimeout(0.5)
    tmp = args.portfile + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(ls.getsockname()[1]))
    os.rename(tmp, args.portfile)
    end = time.monotonic() + args.lifetime
    n = 0
    while time.monotonic() < end:
        try:
            client, _ = ls.accept()
        except socket.timeout:
            continue
        n += 1
        threading.Thread(target=relay, daemon=True,
                         args=(client, args.upstream_port,
                               f"{args.prefix}.{n}")).start()


if __name__ == "__main__":
    main()
