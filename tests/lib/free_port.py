"""free_port.py [--ipv6] PORTS_FILE: a port free on 127.0.0.1 now, never one
listed in PORTS_FILE (the ports this test was given: two listeners of one
test must not get the same one), then appended to it. Drawn at random below
the kernel's ephemeral range (ip_local_port_range): a port from that range,
free when asked, can become a client's local port before the server binds
it (ab and wrk beside the test make thousands of connections). With
--ipv6: free on ::1 too when IPv6 loopback works; prints "PORT 1", or
"PORT 0" where there is no IPv6 loopback."""
import errno
import os
import random
import socket
import sys


def ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_on(family, host, port):
    s = socket.socket(family)
    try:
        s.bind((host, port))
        return True
    except OSError as e:
        if e.errno in (errno.EADDRINUSE, errno.EACCES):
            return False
        raise
    finally:
        s.close()


def main():
    ipv6 = sys.argv[1] == "--ipv6"
    path = sys.argv[-1]
    taken = set(open(path).read().split()) if os.path.exists(path) else set()
    low = max(ephemeral_low(), 12000)
    have6 = ipv6
    for _ in range(500):
        port = random.randrange(10000, low)
        if str(port) in taken or not free_on(socket.AF_INET, "127.0.0.1", port):
            continue
        if have6:
            try:
                if not free_on(socket.AF_INET6, "::1", port):
                    continue
            except OSError:
                have6 = False  # no IPv6 loopback here
        with open(path, "a") as f:
            f.write(f"{port}\n")
        print(f"{port} {int(have6)}" if ipv6 else port)
        return 0
    raise SystemExit("no free port")


if __name__ == "__main__":
    sys.exit(main())
