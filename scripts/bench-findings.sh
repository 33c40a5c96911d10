#!/usr/bin/env bash
# bench-findings.sh [EXCHANGES] [RUNS] - manager findings against manager
# stats on the same databases, side by side in one run, wall time min-max
# over RUNS: one process with EXCHANGES exchanges (spoolgen: 100 per
# connection), and 200 processes of EXCHANGES/100 exchanges each (copies of
# one, made in SQL): the findings must read each in one pass per finding,
# whatever the number of servers and processes (before that, idle_close
# took 143 s on 200,000 exchanges). Defaults: 200,000 exchanges, 3 runs.
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-200000} runs=${2:-3}
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j2 --target manager slicer spoolgen >/dev/null
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
build/bin/spoolgen "$dir/one.spool" "$rows" >/dev/null
build/bin/slicer -q -o "$dir/one.db" "$dir/one.spool"
build/bin/spoolgen "$dir/base.spool" $((rows / 100)) >/dev/null
build/bin/slicer -q -o "$dir/many.db" "$dir/base.spool"
sqlite3 "$dir/many.db" "
WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 199)
INSERT INTO process(client_id, pid, ppid, start_ns, end_ns, ended, host, program, argv, spool, dropped)
SELECT client_id, pid + i, ppid, start_ns + i, end_ns, ended, host, program, argv, spool, dropped
FROM process, k WHERE process.id = 1;
INSERT INTO connection(process_id, seq, fd, family, peer_addr, peer_port, local_addr, local_port,
  t1_ns, t2_ns, t2_how, connect_error, teof_ns, tshut_ns, t7_ns, end_class, end_error,
  nonblocking, complete, tls, rtt_us, min_rtt_us, retrans, delivery_rate, protocol)
SELECT p.id, seq, fd, family, peer_addr, peer_port, local_addr, local_port, t1_ns, t2_ns, t2_how,
  connect_error, teof_ns, tshut_ns, t7_ns, end_class, end_error, nonblocking, c.complete, tls,
  rtt_us, min_rtt_us, retrans, delivery_rate, protocol
FROM connection c, process p WHERE c.process_id = 1 AND p.id > 1;
INSERT INTO exchange(connection_id, seq, t3_ns, t4_ns, t5_ns, tfb_ns, t6_ns, ds, dr, send_calls,
  recv_calls, server_first, peeked, complete, method, path, status, host)
SELECT nc.id, e.seq, t3_ns, t4_ns, t5_ns, tfb_ns, t6_ns, ds, dr, send_calls, recv_calls,
  server_first, peeked, e.complete, method, path, status, host
FROM exchange e JOIN connection oc ON oc.id = e.connection_id AND oc.process_id = 1
  JOIN connection nc ON nc.seq = oc.seq AND nc.process_id > 1;"
"${PYTHON:-python3}" - "$dir" "$runs" <<'PY'
import subprocess, sys, time
d, runs = sys.argv[1], int(sys.argv[2])
for db in ("one", "many"):
    path = f"{d}/{db}.db"
    n = subprocess.run(["sqlite3", path, "SELECT count(*) || ' exchanges in ' || "
                        "(SELECT count(*) FROM process) || ' processes' FROM exchange"],
                       capture_output=True, text=True, check=True).stdout.strip()
    for cmd in (["findings"], ["stats"]):
        t = []
        for _ in range(runs):
            start = time.monotonic()
            subprocess.run(["build/bin/manager", *cmd, path], stdout=subprocess.DEVNULL, check=True)
            t.append(time.monotonic() - start)
        print(f"bench: manager {cmd[0]:8} {n}: {min(t):.2f}-{max(t):.2f} s over {runs} runs")
PY
