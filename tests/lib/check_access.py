#!/usr/bin/env python3
"""Compare a database of observed exchanges with nginx's access log.

usage: check_access.py DB ACCESS_LOG PORT [--program SUBSTR] [--allow-unanswered]
                       [--no-order] [--http]

Every request in the access log (format of tests/lib/nginx.sh) must appear
exactly once among the exchanges to PORT, matched on the client's port and
the request's number on its connection (nginx's $remote_port and
$connection_requests against connection.local_port and exchange.seq), and
every exchange that received a response must be in the log. Also checks that
each matched exchange moved bytes (Ds > 0, Dr >= the body nginx sent) and,
unless --no-order, that the times are in the order of the measurement model:
T1 <= T2 <= T3 <= T4 <= T5 <= TFB <= T6 (<= T7). With --http, the method,
the path (the request URI without its query string) and the status the
layer read must equal nginx's.
Exit status 0 when all holds; the first problems are printed otherwise.
"""
import argparse
import collections
import sqlite3
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("db")
    ap.add_argument("log")
    ap.add_argument("port", type=int)
    ap.add_argument("--program", default="")
    ap.add_argument("--allow-unanswered", action="store_true")
    ap.add_argument("--no-order", action="store_true")
    ap.add_argument("--http", action="store_true")
    ap.add_argument("--allow-abandoned", action="store_true",
                    help="the last exchange of a connection the client closed "
                    "may have read less than nginx sent (wrk at its deadline, "
                    "a browser that no longer needs a resource)")
    args = ap.parse_args()

    logged = collections.Counter()
    body, http = {}, {}
    with open(args.log) as f:
        for n, line in enumerate(f, 1):
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 10:
                print(f"{args.log}:{n}: not the test log format: {line!r}")
                return 1
            key = (int(fields[1]), int(fields[3]))
            logged[key] += 1
            body[key] = int(fields[7])
            http[key] = (fields[4], fields[5].split("?")[0], int(fields[6]))

    db = sqlite3.connect(args.db)
    rows = db.execute(
        """SELECT c.local_port, e.seq, e.ds, e.dr, c.t1_ns, c.t2_ns, e.t3_ns,
                  e.t4_ns, e.t5_ns, e.tfb_ns, e.t6_ns, c.t7_ns, p.program,
                  c.end_class, e.seq = (SELECT max(seq) FROM exchange x
                                        WHERE x.connection_id = c.id),
                  e.method, e.path, e.status
           FROM exchange e JOIN connection c ON c.id = e.connection_id
           JOIN process p ON p.id = c.process_id
           WHERE c.peer_port = ? AND p.program LIKE ?""",
        (args.port, f"%{args.program}%")).fetchall()
    seen = collections.Counter()
    problems = []
    for (lport, seq, ds, dr, *times, program, end_class, last, method, path,
         status) in rows:
        key = (lport, seq)
        seen[key] += 1
        if key not in logged:
            if dr > 0 or not args.allow_unanswered:
                problems.append(f"exchange {key} of {program} (ds={ds} dr={dr}) "
                                "is not in the access log")
            continue
        if ds <= 0:
            problems.append(f"exchange {key}: ds={ds}")
        if args.http and (method, path, status) != http[key]:
            problems.append(f"exchange {key}: method, path, status "
                            f"{(method, path, status)} != logged {http[key]}")
        abandoned = (args.allow_abandoned and last and
                     end_class in ("client_close", "exit", "unterminated"))
        if dr < body[key] and not abandoned:
            problems.append(f"exchange {key}: dr={dr} < body {body[key]}")
        if not args.no_order:
            present = [t for t in times if t is not None]
            if present != sorted(present):
                names = "t1 t2 t3 t4 t5 tfb t6 t7".split()
                problems.append(f"exchange {key}: times out of order: " +
                                " ".join(f"{n}={t}" for n, t in zip(names, times)))
    for key, count in logged.items():
        if seen[key] != count:
            problems.append(f"logged request {key} appears {seen[key]} times "
                            f"among the exchanges (logged {count} times)")
    total_logged = sum(logged.values())
    print(f"check_access: {total_logged} requests logged, {len(rows)} exchanges "
          f"to port {args.port}, {len(problems)} problems")
    for p in problems[:20]:
        print("  " + p)
    if total_logged == 0:
        print("  the access log is empty")
        return 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
