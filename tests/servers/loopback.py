"""loopback.py - what the test servers of our own share: a listening
socket on a loopback address and a free port, the port written to a file
(whole, by a rename), and each connection handled in a thread until the
server's lifetime has passed."""
import os
import socket
import threading
import time


def serve(host, portfile, lifetime, handle):
    """Listen on host (127.0.0.1 or ::1), write the port to portfile, and
    call handle(conn) in a thread per connection for lifetime seconds."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    srv = socket.socket(family, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((host, 0))
    srv.listen(64)
    srv.settimeout(0.5)
    with open(portfile + ".tmp", "w", encoding="utf-8") as f:
        f.write(str(srv.getsockname()[1]))
    os.rename(portfile + ".tmp", portfile)
    deadline = time.monotonic() + lifetime
    while time.monotonic() < deadline:
        try:
            conn, _ = srv.accept()
        except socket.timeout:
            continue
        threading.Thread(target=handle, args=(conn,), daemon=True).start()
    return 0
