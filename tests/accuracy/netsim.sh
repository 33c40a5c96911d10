#!/usr/bin/env bash
# netsim.sh - the delay relay (tests/tools/netsim.c, docs/netsim.md) measured
# by timers it does not own.
#
# The reference: a Python client and server on both sides of the relay.
# Each sender takes time.time_ns() just before send(); each receiver reads
# the kernel's receive time stamp of the segment (SO_TIMESTAMPNS, the same
# CLOCK_REALTIME, taken in the network stack before any process wakes up).
# One-way time = kernel arrival - send time; the relay's error = one-way
# time through the relay at delay d - d - the median one-way time through
# the relay at delay 0. The round trip by time.perf_counter_ns() in the
# client is printed too (it adds both processes' wake-ups).
#
# Checked:
#  1. delays 0, 5, 20, 100 ms each way: no byte arrives early (one-way >= d,
#     every delivery: a timer does not fire early, no load breaks that),
#     the relay counted every timed write, and the median of the relay's
#     error at each d is below d: the delay applied twice would put every
#     error at d or more. The wake-up of a relay that may not have real-
#     time priority is in the error: 1-25 us with it (median), even under
#     load, and up to 3 ms without it on a machine with more runnable tasks
#     than CPUs, whatever d. Printed, not asserted, the benchmark's bars ("bar:"
#     lines, scripts/bench-accuracy.sh): the relay's error within 1 ms at
#     the 99th percentile, by the external measurement AND by the relay's
#     own lateness (--late-log), each over the 330-odd deliveries of the 5,
#     20 and 100 ms runs together;
#  2. byte order and integrity: 8 MiB each way through delays (fixed, and a
#     per-chunk series that goes up and down), sha256 on both ends, and the
#     end of data passed on by half-close;
#  3. 50 concurrent connections, 256 KiB each way each, all intact;
#  4. the rate limit: 1,000,000 bytes at 2 MB/s (a 64 KiB bucket) take
#     0.42-0.75 s (never faster than the rate; from above, halfway to the
#     rate halved);
#  5. delay series from a file, per chunk and per connection: every message
#     at least its delay, the median of each delay within half the gap to
#     the nearest other delay of the series (10 ms gaps);
#  6. resets in both directions, an unreachable target, back-pressure (the
#     relay's memory stays bounded while a receiver does not read);
#  7. --help, a bad option, a non-loopback --bind.
#
# The relay runs as SCHED_FIFO 20 (--rt-prio) when this user may: the
# machine is shared, and a timer process that waits behind others for a CPU
# is late by their time slice. Without the privilege (or with ACCURACY_RT=0)
# the test runs anyway, says so, and asserts the same bounds. The Python
# ends keep the ordinary priority: their wake-ups are outside the one-way
# times (sender's clock read before send(), receiver's kernel stamp).
source "$(dirname "$0")/../lib/common.sh"
NETSIM=$BUILD/bin/netsim
[ -x "$NETSIM" ] || fail "$NETSIM is missing: build the project first"

RT_PRIO=0
if [ "${ACCURACY_RT:-1}" = 1 ] && command -v chrt > /dev/null && chrt -f 20 true 2> /dev/null; then
  RT_PRIO=20
fi
echo "relay priority: $([ "$RT_PRIO" -gt 0 ] && echo "SCHED_FIFO $RT_PRIO" || echo "ordinary (chrt not permitted, or ACCURACY_RT=0)")"

HELPER=$WORK/netsim_helper.py
cat > "$HELPER" <<'PY'
"""Both ends of the relay: a server (mode chosen by the first byte of each
connection) and the clients of the checks in netsim.sh."""
import hashlib
import json
import os
import random
import resource
import socket
import struct
import sys
import threading
import time

SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux; = SCM_TIMESTAMPNS
PING = struct.Struct("<IQ")        # seq, client send time (ns, realtime)
PONG = struct.Struct("<IQQQ")      # seq, client send, server arrival, server send


def stamped(sock):
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    return sock


def recv_exact(sock, n):
    """n bytes and the kernel arrival stamp (ns, realtime) of the last segment."""
    data, stamp = b"", None
    while len(data) < n:
        chunk, anc, _, _ = sock.recvmsg(n - len(data), 64)
        if not chunk:
            raise EOFError("closed after %d of %d bytes" % (len(data), n))
        data += chunk
        for level, kind, payload in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                sec, nsec = struct.unpack("<qq", payload[:16])
                stamp = sec * 1_000_000_000 + nsec
    if stamp is None:
        raise RuntimeError("no SO_TIMESTAMPNS stamp")
    return data, stamp


def serve(conn):
    try:
        stamped(conn)
        mode = conn.recv(1)
        if mode == b"E":                     # echo until EOF, then half-close
            while True:
                data = conn.recv(65536)
                if not data:
                    conn.shutdown(socket.SHUT_WR)
                    break
                conn.sendall(data)
        elif mode == b"T":                   # time stamped ping-pong
            conn.sendall(b"k")
            while True:
                try:
                    data, arrived = recv_exact(conn, PING.size)
                except EOFError:
                    break
                seq, sent = PING.unpack(data)
                conn.sendall(PONG.pack(seq, sent, arrived, time.time_ns()))
        elif mode == b"R":                   # reset when told
            conn.recv(1)
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        elif mode == b"W":                   # wait for the client's reset
            conn.sendall(b"k")               # (it resets once it has this)
            try:
                while conn.recv(65536):
                    pass
                result = "eof"
            except ConnectionResetError:
                result = "reset"
            with open(os.environ["RESET_LOG"], "a") as f:
                f.write(result + "\n")
    except OSError:
        pass
    finally:
        conn.close()


def server(portfile):
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(256)
    with open(portfile + ".tmp", "w") as f:
        f.write(str(srv.getsockname()[1]))
    os.rename(portfile + ".tmp", portfile)
    srv.settimeout(0.5)
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        try:
            conn, _ = srv.accept()
        except socket.timeout:
            continue
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


def connect(port, mode):
    sock = stamped(socket.create_connection(("127.0.0.1", port), timeout=30))
    sock.sendall(mode)
    return sock


def timing(port, count, conns=1):
    """Ping-pong, one message in flight; prints one-way times up and down
    (kernel arrival - send time) and the round trip seen by the client."""
    up, down, rtt = [], [], []
    for _ in range(conns):
        sock = connect(port, b"T")
        recv_exact(sock, 1)                  # the server is there
        for seq in range(count):
            t0 = time.perf_counter_ns()
            sent = time.time_ns()
            sock.sendall(PING.pack(seq, sent))
            data, arrived = recv_exact(sock, PONG.size)
            t1 = time.perf_counter_ns()
            rseq, rsent, srv_arrived, srv_sent = PONG.unpack(data)
            assert rseq == seq and rsent == sent, "pong out of order"
            up.append((srv_arrived - sent) / 1e6)
            down.append((arrived - srv_sent) / 1e6)
            rtt.append((t1 - t0) / 1e6)
        sock.close()
    print(json.dumps({"up": up, "down": down, "rtt": rtt}))


def transfer(port, size, seed, reader_wait=0.0):
    """Send size random bytes, read the echo; (sent digest, received digest,
    bytes received, seconds from first send to last byte)."""
    payload = random.Random(seed).randbytes(size)
    sock = connect(port, b"E")
    got = hashlib.sha256()
    received = [0]
    start = time.monotonic()

    def sender():
        view = memoryview(payload)
        for off in range(0, size, 65536):
            sock.sendall(view[off:off + 65536])
        sock.shutdown(socket.SHUT_WR)

    thread = threading.Thread(target=sender)
    thread.start()
    if reader_wait:
        time.sleep(reader_wait)
    while True:
        data = sock.recv(262144)
        if not data:
            break
        got.update(data)
        received[0] += len(data)
    elapsed = time.monotonic() - start
    thread.join(30)
    sock.close()
    return hashlib.sha256(payload).hexdigest(), got.hexdigest(), received[0], elapsed


def integrity(port, size, conns, reader_wait=0.0):
    results = [None] * conns

    def one(i):
        try:
            results[i] = transfer(port, size, 1000 + i, reader_wait)
        except Exception as e:               # reported below
            results[i] = ("error", repr(e), 0, 0)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(conns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    bad = [i for i, r in enumerate(results)
           if r is None or r[0] != r[1] or r[2] != size]
    print(json.dumps({"conns": conns, "size": size, "bad": bad,
                      "first_bad": results[bad[0]] if bad else None,
                      "seconds": [r[3] for r in results if r]}))


def reset(port):
    """The server resets: the client must see ECONNRESET."""
    sock = connect(port, b"R")
    sock.sendall(b"x")
    try:
        data = sock.recv(10)
        print("no reset: recv gave %r" % data)
    except ConnectionResetError:
        print("reset")


def client_reset(port):
    sock = connect(port, b"W")
    assert sock.recv(1) == b"k", "no answer from the server"
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def refused(port):
    """The relay cannot reach its target: the client gets a reset (during
    its connect, when the reset comes first, or at its first read)."""
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        data = sock.recv(10)
        print("eof" if data == b"" else "data")
    except ConnectionResetError:
        print("reset")


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "server":
        server(args[0])
    elif cmd == "timing":
        timing(int(args[0]), int(args[1]), int(args[2]) if len(args) > 2 else 1)
    elif cmd == "integrity":
        integrity(int(args[0]), int(args[1]), int(args[2]),
                  float(args[3]) if len(args) > 3 else 0.0)
    elif cmd == "reset":
        reset(int(args[0]))
    elif cmd == "client_reset":
        client_reset(int(args[0]))
    elif cmd == "refused":
        refused(int(args[0]))
    else:
        sys.exit("unknown command " + cmd)
PY

export RESET_LOG=$WORK/resets.log
: > "$RESET_LOG"
"$PYTHON" "$HELPER" server "$WORK/server.port" &
at_exit "kill $! 2>/dev/null"
wait_until 60 test -s "$WORK/server.port" || fail "the test server did not start in 60 s"
SERVER_PORT=$(cat "$WORK/server.port")

# start_relay NAME ARG...: netsim to the test server with ARGs; sets
# RELAY_PORT and RELAY_PID, its summary goes to $WORK/NAME.stats.
start_relay() {
  local name=$1
  shift
  rm -f "$WORK/$name.port"   # (the redirection below truncates it later)
  "$NETSIM" --target "127.0.0.1:$SERVER_PORT" --rt-prio "$RT_PRIO" \
    --lifetime 600 --stats "$WORK/$name.stats" "$@" \
    > "$WORK/$name.port" 2> "$WORK/$name.err" &
  RELAY_PID=$!
  at_exit "kill $RELAY_PID 2>/dev/null"
  wait_until 60 test -s "$WORK/$name.port" ||
    fail "netsim $*: no port printed in 60 s ($(cat "$WORK/$name.err"))"
  RELAY_PORT=$(head -n 1 "$WORK/$name.port")
}

# stop_relay NAME: SIGTERM, wait, check the summary line; prints it.
stop_relay() {
  local name=$1
  kill -TERM "$RELAY_PID"
  wait "$RELAY_PID" || fail "netsim ($name) exited with status $?"
  [ -s "$WORK/$name.stats" ] || fail "netsim ($name) wrote no --stats file"
  grep -q '^netsim: connections=' "$WORK/$name.err" ||
    fail "netsim ($name) printed no summary on stderr"
  cat "$WORK/$name.stats"
}

# stat NAME KEY: a field of the relay's summary line
stat() { tr ' ' '\n' < "$WORK/$1.stats" | sed -n "s/^$2=//p"; }

# ---- 1. delays against the external timer ----
# An early delivery, a write the relay did not count, or a median error of
# d or more fails; the p99 bars are printed. (This machine has spells
# of a second or two in which even a SCHED_FIFO process is kept off the CPU
# for ~2 ms at a time: the relay's read lag - data waiting in its socket -
# shows it, as well as the external timer. They move the tail, the bars.)
declare -A COUNT=([0]=200 [5]=100 [20]=50 [100]=15)
for d in 0 5 20 100; do
  start_relay "delay$d" --delay "$d" --late-log "$WORK/late$d.log"
  "$PYTHON" "$HELPER" timing "$RELAY_PORT" "${COUNT[$d]}" > "$WORK/timing$d.json" ||
    fail "timing client at $d ms"
  stop_relay "delay$d"
done
"$PYTHON" - "$WORK" <<'PY' || fail "the relay delivered early, did not count its writes, or its median error is d or more"
import json, math, sys
work = sys.argv[1]
def rank(values, p):
    v = sorted(values)
    return v[max(0, math.ceil(p * len(v) / 100) - 1)]
def stats_of(name):
    line = open(f"{work}/{name}.stats").read().split()
    return dict(kv.split("=", 1) for kv in line[1:])
base = json.load(open(f"{work}/timing0.json"))
b_up, b_down = rank(base["up"], 50), rank(base["down"], 50)
b_rtt = rank(base["rtt"], 50)
print(f"through the relay at 0 ms: one-way up {b_up * 1000:.0f} us, down {b_down * 1000:.0f} us, "
      f"client round trip {b_rtt * 1000:.0f} us (medians)")
errors, ok = [], True
for d in (5, 20, 100):
    t = json.load(open(f"{work}/timing{d}.json"))
    up = [x - d - b_up for x in t["up"]]
    down = [x - d - b_down for x in t["down"]]
    rtt = [x - 2 * d - b_rtt for x in t["rtt"]]
    early = [x for x in t["up"] + t["down"] if x < d]
    s = stats_of(f"delay{d}")
    p50 = rank(up + down, 50)
    print(f"{d:3d} ms each way, {len(up)} round trips: error up p50 {rank(up, 50) * 1000:+.0f} "
          f"p99 {rank(up, 99) * 1000:+.0f} us, down p50 {rank(down, 50) * 1000:+.0f} "
          f"p99 {rank(down, 99) * 1000:+.0f} us; min one-way {min(t['up'] + t['down']):.3f} ms; "
          f"round trip - {2 * d} ms - base: p50 {rank(rtt, 50) * 1000:+.0f} p99 {rank(rtt, 99) * 1000:+.0f} us; "
          f"relay lateness p50 {s['late_p50_us']} p99 {s['late_p99_us']} max {s['late_max_us']} us "
          f"({s['late_n']} writes)")
    if early:
        print(f"FAIL: {len(early)} messages arrived before {d} ms: {early[:5]}")
        ok = False
    if int(s["late_n"]) < 2 * len(up):
        print(f"FAIL: the relay counted {s['late_n']} timed writes, expected >= {2 * len(up)}")
        ok = False
    if p50 >= d:
        print(f"FAIL: median error {p50:.3f} ms at {d} ms: as if applied twice")
        ok = False
    if int(s["lag_p99_us"]) > 1000:
        print(f"  (the relay's read lag p99 was {s['lag_p99_us']} us at {d} ms: it was kept off the CPU)")
    errors += up + down
# the relay's own lateness, every timed write of the three runs
late = [int(x) / 1e6 for d in (5, 20, 100) for x in open(f"{work}/late{d}.log")]
print(f"relay's own: lateness over {len(late)} writes: p50 {rank(late, 50) * 1000:.0f} us, "
      f"p99 {rank(late, 99) * 1000:.0f} us, max {max(late) * 1000:.0f} us, "
      f"{sum(x > 1 for x in late)} over 1 ms")
p99 = rank([abs(e) for e in errors], 99)
print(f"external: |error| p99 over {len(errors)} one-way deliveries = {p99 * 1000:.0f} us "
      f"(median {rank(errors, 50) * 1000:+.0f} us, max {max(errors) * 1000:+.0f} us)")
print(f"bar: netsim: relay's own lateness p99 (5, 20, 100 ms): {rank(late, 99) * 1000:.0f} us "
      f"(n={len(late)}); bar <= 1000 us: {'met' if rank(late, 99) <= 1.0 else 'MISSED'}")
print(f"bar: netsim: external |error| p99 (5, 20, 100 ms): {p99 * 1000:.0f} us "
      f"(n={len(errors)}); bar <= 1000 us: {'met' if p99 <= 1.0 else 'MISSED'}")
sys.exit(0 if ok else 1)
PY
ok "delays 5, 20, 100 ms: never early, every timed write counted, median error below d"

# ---- 2. integrity and order through delays, half-close at the end ----
check_integrity() {
  local what=$1 json
  shift
  json=$("$PYTHON" "$HELPER" integrity "$@") || fail "$what: client failed"
  "$PYTHON" - "$json" "$what" <<'PY' || fail "$2: data damaged or lost"
import json, sys
r = json.loads(sys.argv[1])
print(f"{sys.argv[2]}: {r['conns']} x {r['size']} bytes each way, "
      f"slowest {max(r['seconds']):.2f} s, bad: {r['bad']} {r['first_bad'] or ''}")
sys.exit(1 if r["bad"] else 0)
PY
}
start_relay fixed --up 3 --down 7
check_integrity "8 MiB, up 3 ms down 7 ms" "$RELAY_PORT" $((8 << 20)) 1
stop_relay fixed
"$PYTHON" -c '
import random
r = random.Random(4)
print("# per-chunk delays that go up and down (ms)")
for _ in range(997): print(round(r.uniform(0, 12), 3))' > "$WORK/jitter.txt"
start_relay jitter --up-series "$WORK/jitter.txt" --down-series "$WORK/jitter.txt"
check_integrity "8 MiB, per-chunk delays 0-12 ms" "$RELAY_PORT" $((8 << 20)) 1
stop_relay jitter
[ "$(stat jitter chunks_up)" -gt 10 ] || fail "the series run forwarded too few chunks up"
ok "8 MiB each way intact and in order through fixed and varying delays"

# ---- 3. 50 concurrent connections ----
start_relay many --delay 2
check_integrity "50 connections, 2 ms" "$RELAY_PORT" $((256 << 10)) 50
stop_relay many
expect_eq "$(stat many connections)" 50 "connections counted by the relay"
echo "relay under 50 connections: lateness p50 $(stat many late_p50_us) p99 $(stat many late_p99_us) max $(stat many late_max_us) us, blocked writes $(stat many blocked)"

# ---- 4. rate limit ----
start_relay rate --rate 2M --burst 64Ki
json=$("$PYTHON" "$HELPER" integrity "$RELAY_PORT" 1000000 1) || fail "rate client"
stop_relay rate
"$PYTHON" - "$json" <<'PY' || fail "1,000,000 bytes at 2 MB/s did not take 0.42-0.75 s"
import json, sys
r = json.loads(sys.argv[1])
t = r["seconds"][0]
expected = (1000000 - 65536) / 2e6   # the bucket starts full
print(f"1,000,000 bytes echoed at 2 MB/s each way: {t:.3f} s (expected {expected:.3f} s from the rate)")
print(f"bar: netsim: 1,000,000 B at 2 MB/s: {t:.3f} s; bar within 10% of {expected:.3f} s: "
      f"{'met' if abs(t - expected) <= 0.1 * expected else 'MISSED'}")
# never faster than the rate (less 0.05 s: the clock reads around the
# transfer); from above, halfway to the rate halved (1 s). The bucket holds
# 64 KiB, 32 ms at the rate, so that a relay woken late (by milliseconds
# without real-time priority on a loaded machine) catches up: with 4 KiB
# the same load made it 0.91 s.
sys.exit(0 if not r["bad"] and expected - 0.05 <= t <= 0.75 else 1)
PY
ok "rate limit: 1,000,000 bytes at 2 MB/s in 0.42-0.75 s"

# ---- 5. delay series from a file ----
# Each message must take at least its delay; the median of each delay's
# messages must lie within half the gap to the nearest other delay of the
# series (the series are 10 ms apart: 5 ms), which tells them apart on a
# loaded machine; every error within 1 ms is the benchmark's bar.
printf '# one delay per chunk, in turn\n2\n32\n\n12 # ms\n22\n' > "$WORK/series.txt"
start_relay series --up-series "$WORK/series.txt" --down 0
"$PYTHON" "$HELPER" timing "$RELAY_PORT" 24 > "$WORK/series.json" || fail "series client"
stop_relay series
"$PYTHON" - "$WORK" <<'PY' || fail "per-chunk series not applied in turn"
import json, statistics, sys
work = sys.argv[1]
series = [2, 32, 12, 22]
base = sorted(json.load(open(f"{work}/timing0.json"))["up"])[100]
up = json.load(open(f"{work}/series.json"))["up"]
# the mode byte took series[0]; ping i is the chunk i + 1
asked = [series[(i + 1) % 4] for i in range(len(up))]
err = [u - a - base for u, a in zip(up, asked)]
median = {a: statistics.median(e for e, b in zip(err, asked) if b == a) for a in series}
print("per chunk: asked", asked[:8], "...; measured", [round(x, 2) for x in up[:8]],
      "...; median error by delay (ms):", {a: round(m, 3) for a, m in median.items()},
      "; |error| max %.0f us" % (max(map(abs, err)) * 1000))
print(f"bar: netsim: per-chunk series |error| max: {max(map(abs, err)) * 1000:.0f} us; "
      f"bar <= 1000 us: {'met' if max(map(abs, err)) <= 1.0 else 'MISSED'}")
early = [(a, round(u, 3)) for u, a in zip(up, asked) if u < a]
if early:
    print("FAIL: messages before their delay:", early[:5])
sys.exit(0 if not early and all(m <= 5.0 for m in median.values()) else 1)
PY
printf '3\n13\n' > "$WORK/perconn.txt"
start_relay perconn --up-series "$WORK/perconn.txt" --series-per connection --down 1
"$PYTHON" "$HELPER" timing "$RELAY_PORT" 5 4 > "$WORK/perconn.json" || fail "per-connection client"
stop_relay perconn
"$PYTHON" - "$WORK" <<'PY' || fail "per-connection series not applied in turn"
import json, sys
work = sys.argv[1]
base = sorted(json.load(open(f"{work}/timing0.json"))["up"])[100]
up = json.load(open(f"{work}/perconn.json"))["up"]
per = [sorted(up[k * 5:(k + 1) * 5])[2] for k in range(4)]
asked = [3, 13, 3, 13]
print("per connection: asked", asked, "measured (medians)", [round(x, 2) for x in per])
worst = max(abs(m - a - base) for m, a in zip(per, asked))
print(f"bar: netsim: per-connection series, |median error| max: {worst * 1000:.0f} us; "
      f"bar <= 1000 us: {'met' if worst <= 1.0 else 'MISSED'}")
early = [round(u, 3) for k, a in enumerate(asked) for u in up[k * 5:(k + 1) * 5] if u < a]
if early:
    print("FAIL: messages before their delay:", early[:5])
# halfway to the other delay of the series (10 ms apart)
sys.exit(0 if not early and all(a <= m <= a + 5.0 for m, a in zip(per, asked)) else 1)
PY
ok "delay series: per chunk and per connection, in turn"

# ---- 6. resets, an unreachable target, back-pressure ----
start_relay resets --delay 5
expect_eq "$("$PYTHON" "$HELPER" reset "$RELAY_PORT")" reset "server reset seen by the client through the relay"
"$PYTHON" "$HELPER" client_reset "$RELAY_PORT"
wait_until 60 test -s "$RESET_LOG" || fail "the server saw no end of the reset connection in 60 s"
expect_eq "$(cat "$RESET_LOG")" reset "client reset seen by the server through the relay"
check_integrity "after resets" "$RELAY_PORT" 100000 1
stop_relay resets
[ "$(stat resets resets)" -ge 2 ] || fail "the relay counted $(stat resets resets) resets, expected 2"

dead_port=$(free_port)
"$NETSIM" --target "127.0.0.1:$dead_port" --lifetime 600 --stats "$WORK/refused.stats" \
  > "$WORK/refused.port" 2> "$WORK/refused.err" &
RELAY_PID=$!
at_exit "kill $RELAY_PID 2>/dev/null"
wait_until 60 test -s "$WORK/refused.port" || fail "netsim did not start in 60 s: $(cat "$WORK/refused.err")"
got=$("$PYTHON" "$HELPER" refused "$(cat "$WORK/refused.port")")
stop_relay refused
expect_eq "$got" reset "client of an unreachable target gets a reset"
expect_eq "$(stat refused connect_failed)" 1 "connect failures counted"

start_relay pressure --delay 1 --queue-max 256Ki
check_integrity "32 MiB, receiver starts reading after 1 s" "$RELAY_PORT" $((32 << 20)) 1 1.0
hwm=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$RELAY_PID/status")
stop_relay pressure
echo "relay peak memory with --queue-max 256Ki while 32 MiB passed a stalled receiver: $hwm kB"
[ "$hwm" -lt 16384 ] || fail "relay memory not bounded by back-pressure: VmHWM $hwm kB"
ok "resets both ways, unreachable target, back-pressure"

# ---- 7. command line ----
"$NETSIM" --help | grep -q -- '--series-per' || fail "--help does not describe the options"
if "$NETSIM" --bogus 2> /dev/null; then fail "a bad option was accepted"; fi
if "$NETSIM" --target 127.0.0.1:1 --bind 0.0.0.0 2> "$WORK/bind.err"; then
  fail "a non-loopback --bind was accepted"
fi
grep -q loopback "$WORK/bind.err" || fail "no reason given for a bad --bind"
ok "command line"
