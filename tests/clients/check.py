#!/usr/bin/env python3
"""Check one run of a zoo client against nginx's access log, then against
the failures expected today (tests/clients/expected.txt).

usage: check.py --client NAME --scenario plain|tls|h2|h2c --scenarios LIST
                --db DB --log LOG --bare-log LOG --port PORT
                --exit RC_BARE RC_OBSERVED --expected FILE --defs DIR
                [--same all|distinct]

LOG and the bare run's log are in the format zoo.sh gives nginx (tab
separated; 2 $remote_port, 4 $connection_requests, 5 method, 6 URI,
7 status, 11 $bytes_sent, 12 $server_port). The checks, on the connections
to PORT:
  log        every request in the log is exactly one exchange (the client's
             port and the request's number on its connection against the
             connection's local port and the exchange's number), and every
             exchange that moved bytes is a request in the log
  http       each exchange's method, path (URI up to '?') and status are
             nginx's (no status where the client read none of the answer);
             over TLS they come from the TLS library's plaintext, where the
             layer hooks it
  tls        (tls, h2) each connection is marked TLS with its version and
             handshake, and nothing is read from encrypted bytes: no label
             on a connection whose TLS library is not hooked (protocol
             unknown)
  durations  no negative te, ts, tw, tr, trecv, tt
  dr         per connection, Dr <= the bytes nginx sent on it ($bytes_sent:
             headers and bodies), plus, over TLS, the records' overhead: 2 KiB
             (the end of the handshake, session tickets, the closing alert)
             and 64 bytes per request and per 4 KiB; over h2c, 1 KiB for the
             connection's own frames (SETTINGS, WINDOW_UPDATE, GOAWAY)
  ended      every connection ended (its end_class is not unterminated) and
             its close() was seen (T7: Tt is known)
  exit       the exit status is the bare run's
  same       nginx saw the same requests (method, URI, status) as in the
             bare run; with --same distinct (a load generator that stops on
             a clock), the same kinds of request
An expectation reads "CLIENT SCENARIO.CHECK HOW reason", HOW one of always,
sometimes, records.
A check that fails and is listed is "known"; one that fails unlisted makes
the exit status 1, and so does one listed "always" that passes (the problem
is fixed: the line must go). One listed "sometimes" (a race in the client's
threads decides) may pass. One listed "records" is "always" on the default
capture and not listed on the event capture (OBSERVE_CAPTURE=events in the
environment), where it must pass.
"""
import argparse
import collections
import math
import os
import sqlite3
import sys

CHECKS = ("log", "http", "tls", "durations", "dr", "ended", "exit", "same")
SCENARIOS = ("plain", "tls", "h2", "h2c")


def read_log(path, port):
    """The access log's requests to PORT, as dicts."""
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 14:
                sys.exit(f"{path}:{n}: not the zoo's log format: {line!r}")
            if int(fields[11]) != port:
                continue
            rows.append({
                "rport": int(fields[1]), "nreq": int(fields[3]),
                "method": fields[4], "uri": fields[5],
                "path": fields[5].split("?")[0], "status": int(fields[6]),
                "sent": int(fields[10]), "protocol": fields[12],
            })
    return rows


def read_expected(path, defs):
    """{(client, scenario, check): (how, reason)}; exits on a malformed
    line."""
    known = {}
    clients = {f[:-3] for f in os.listdir(defs) if f.endswith(".sh")}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 3)
            where = f"{path}:{n}"
            if (len(parts) < 4 or "." not in parts[1] or
                    parts[2] not in ("always", "sometimes", "records")):
                sys.exit(f"{where}: want 'CLIENT SCENARIO.CHECK "
                         f"always|sometimes|records "
                         f"reason': {line!r}")
            client, (scenario, check), how, reason = (
                parts[0], parts[1].split(".", 1), parts[2], parts[3])
            if client not in clients:
                sys.exit(f"{where}: no client {client} in {defs}")
            if scenario not in SCENARIOS or check not in CHECKS:
                sys.exit(f"{where}: unknown scenario or check {parts[1]}")
            if (client, scenario, check) in known:
                sys.exit(f"{where}: {parts[1]} of {client} listed twice")
            events = os.environ.get("OBSERVE_CAPTURE") == "events"
            if how == "records" and events:
                continue
            if how == "records":
                how = "always"
            known[(client, scenario, check)] = (how, reason)
    return known


def first(problems, n=3):
    """A short account of a list of problems."""
    more = f" (+{len(problems) - n} more)" if len(problems) > n else ""
    return "; ".join(problems[:n]) + more


def check_log(log, exchanges):
    """(problems, summary) of the check "log"."""
    logged = collections.Counter((r["rport"], r["nreq"]) for r in log)
    seen = collections.Counter((e["lport"], e["seq"]) for e in exchanges)
    problems = []
    if not log:
        problems.append("nginx logged no request: the client did nothing")
    missing = [k for k in logged if seen[k] == 0]
    if missing:
        problems.append(f"{len(missing)} of {len(logged)} requests have no "
                        f"exchange (e.g. port {missing[0][0]} request "
                        f"{missing[0][1]})")
    twice = [k for k in logged if seen[k] > logged[k]]
    if twice:
        problems.append(f"{len(twice)} requests recorded more than once")
    extra = [e for e in exchanges if (e["lport"], e["seq"]) not in logged
             and (e["ds"] > 0 or e["dr"] > 0)]
    if extra:
        e = extra[0]
        problems.append(f"{len(extra)} exchanges are no request in the log "
                        f"(e.g. port {e['lport']} exchange {e['seq']}: "
                        f"ds={e['ds']} dr={e['dr']})")
    return problems, f"{len(log)} requests, {len(exchanges)} exchanges"


def check_http(log, exchanges):
    """(problems, summary) of the check "http"."""
    # A local port may serve two connections of a run (Linux reuses a
    # loopback port in TIME_WAIT, net.ipv4.tcp_tw_reuse=2): an exchange is
    # right when it agrees with one of the requests of its port and number.
    by_key = {}
    for r in log:
        by_key.setdefault((r["rport"], r["nreq"]), []).append(r)
    bad = []
    for e in exchanges:
        rows = by_key.get((e["lport"], e["seq"]))
        if not rows:
            continue
        got = (e["method"], e["path"], e["status"])
        # (an answer the client never read has no status to read: wrk
        # stopping with a request on the way)
        if not any(got == (r["method"], r["path"],
                           r["status"] if e["dr"] > 0 else None)
                   for r in rows):
            r = rows[0]
            bad.append(f"{r['method']} {r['path']} {r['status']} read as "
                       f"{' '.join(str(x) for x in got)}")
    return bad, f"{len(exchanges) - len(bad)} of {len(exchanges)} labelled"


def check_tls(db, port):
    """(problems, summary) of the check "tls"."""
    bad = []
    hooked = db.execute(
        """SELECT count(*) FROM connection WHERE peer_port = ? AND
           protocol IS NOT NULL""", (port,)).fetchone()[0]
    # (a connection that sent nothing cannot be known as TLS: wrk's first)
    for cid, lport, tls, version, start, end in db.execute(
            """SELECT id, local_port, tls, tls_version, tls_start_ns,
                      tls_end_ns FROM connection c WHERE peer_port = ? AND
                      (tls_start_ns IS NOT NULL OR EXISTS (SELECT 1 FROM
                       exchange e WHERE e.connection_id = c.id))""",
            (port,)):
        if tls != 1 or version not in ("1.2", "1.3") or not start or not end:
            bad.append(f"port {lport}: tls={tls} version={version}")
    # where the TLS library is not hooked (no protocol known), nothing can
    # be read: a label there would come from encrypted bytes
    labelled = db.execute(
        """SELECT count(*) FROM exchange e JOIN connection c
           ON c.id = e.connection_id WHERE c.peer_port = ? AND
           c.protocol IS NULL AND
           (e.method IS NOT NULL OR e.status IS NOT NULL)""",
        (port,)).fetchone()[0]
    if labelled:
        bad.append(f"{labelled} exchanges labelled from encrypted bytes")
    return bad, ("every connection TLS" +
                 (f", {hooked} with the TLS library's plaintext" if hooked
                  else ", record-level: nothing read from encrypted bytes"))


def check_durations(db, port):
    """(problems, summary) of the check "durations"."""
    bad = []
    for lport, seq, *values in db.execute(
            """SELECT local_port, seq, te_ms, ts_ms, tw_ms, tr_ms, trecv_ms,
                      tt_ms FROM exchange_metrics WHERE peer_port = ?""",
            (port,)):
        for name, v in zip("te ts tw tr trecv tt".split(), values):
            if v is not None and v < 0:
                bad.append(f"port {lport} exchange {seq}: {name}={v:.3f} ms")
    for lport, te, tt in db.execute(
            """SELECT local_port, te_ms, tt_ms FROM connection_metrics
               WHERE peer_port = ?""", (port,)):
        for name, v in (("te", te), ("tt", tt)):
            if v is not None and v < 0:
                bad.append(f"connection port {lport}: {name}={v:.3f} ms")
    return bad, "none negative"


def check_dr(db, port, log, scenario):
    """(problems, summary) of the check "dr"."""
    sent = collections.Counter()
    requests = collections.Counter()
    for r in log:
        sent[r["rport"]] += r["sent"]
        requests[r["rport"]] += 1
    bad = []
    total = 0
    for lport, dr in db.execute(
            """SELECT c.local_port, sum(e.dr) FROM connection c
               JOIN exchange e ON e.connection_id = c.id
               WHERE c.peer_port = ? GROUP BY c.local_port""", (port,)):
        total += dr
        bound = sent[lport]
        if scenario in ("tls", "h2"):
            bound += 2048 + 64 * (requests[lport] + math.ceil(bound / 4096))
        elif scenario == "h2c":
            bound += 1024
        if dr > bound:
            bad.append(f"port {lport}: Dr {dr} > {bound} "
                       f"(nginx sent {sent[lport]})")
    return bad, f"Dr {total}, nginx sent {sum(sent.values())}"


def check_ended(db, port):
    """(problems, summary) of the check "ended"."""
    rows = db.execute(
        """SELECT coalesce(end_class, 'NULL'), count(*),
                  sum(t7_ns IS NULL) FROM connection
           WHERE peer_port = ? GROUP BY 1""", (port,)).fetchall()
    bad = [f"{n} connections {cls}" for cls, n, _ in rows
           if cls in ("unterminated", "NULL")]
    bad += [f"{unclosed} connections {cls} without their close() (no Tt)"
            for cls, _, unclosed in rows
            if cls not in ("unterminated", "NULL") and unclosed]
    return bad, (", ".join(f"{n} {cls}" for cls, n, _ in rows) or
                 "no connection")


def check_same(log, bare, distinct):
    """(problems, summary) of the check "same"."""
    def requests(rows):
        counts = collections.Counter((r["method"], r["uri"], r["status"])
                                     for r in rows)
        return set(counts) if distinct else counts
    b, o = requests(bare), requests(log)
    if b == o:
        return [], f"{len(log)} requests" + (", the same kinds" if distinct
                                               else "")
    if distinct:
        return [f"bare {sorted(b)} != observed {sorted(o)}"], ""
    return [f"bare {sorted(b.elements())} != observed {sorted(o.elements())}"
            ], ""


def print_exchanges(exchanges, limit=24):
    """The exchanges, one a line, for whoever reads the test's output."""
    print("   program          lport seq  method path     status      ds"
          "        dr    tw_ms  end")
    for e in exchanges[:limit]:
        tw = "-" if e["tw"] is None else f"{e['tw']:.3f}"
        print(f"   {os.path.basename(e['program'] or '?')[:16]:16} "
              f"{e['lport']:5} {e['seq']:3}  {str(e['method']):6} "
              f"{str(e['path'])[:8]:8} {str(e['status']):6} {e['ds']:7} "
              f"{e['dr']:9} {tw:>8}  {e['end']}")
    if len(exchanges) > limit:
        print(f"   ... {len(exchanges) - limit} more")


def main():
    """Run the checks, print them with their verdicts; 1 if any is not as
    expected."""
    ap = argparse.ArgumentParser()
    for name in ("client", "scenario", "scenarios", "db", "log", "bare_log",
                 "expected", "defs"):
        ap.add_argument("--" + name.replace("_", "-"), required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--exit", type=int, nargs=2, required=True)
    ap.add_argument("--same", choices=("all", "distinct"), default="all")
    args = ap.parse_args()

    known = read_expected(args.expected, args.defs)
    mine = {k: v for k, v in known.items() if k[0] == args.client}
    stale = [f"{s}.{c}" for (_, s, c) in mine if s not in args.scenarios.split()]
    if stale:
        sys.exit(f"{args.expected}: {args.client} runs no scenario of "
                 f"{', '.join(stale)}")

    log = read_log(args.log, args.port)
    bare = read_log(args.bare_log, args.port)
    db = sqlite3.connect(args.db)
    exchanges = [dict(zip(("lport", "seq", "ds", "dr", "method", "path",
                           "status", "tw", "program", "end"), row))
                 for row in db.execute(
        """SELECT local_port, seq, ds, dr, method, path, status, tw_ms,
                  program, end_class FROM exchange_metrics
           WHERE peer_port = ? ORDER BY t3_ns""", (args.port,))]
    tls = args.scenario in ("tls", "h2")

    results = [("log",) + check_log(log, exchanges)]
    if tls:
        results.append(("tls",) + check_tls(db, args.port))
    results.append(("http",) + check_http(log, exchanges))
    results.append(("durations",) + check_durations(db, args.port))
    results.append(("dr",) + check_dr(db, args.port, log, args.scenario))
    results.append(("ended",) + check_ended(db, args.port))
    rc_bare, rc_observed = args.exit
    results.append(("exit", [] if rc_bare == rc_observed else
                    [f"exit {rc_observed} under the layer, {rc_bare} bare"],
                    f"exit {rc_observed}"))
    results.append(("same",) + check_same(log, bare, args.same == "distinct"))

    print_exchanges(exchanges)
    status = 0
    ran = {check for check, _, _ in results}
    for (_, scenario, check) in mine:
        if scenario == args.scenario and check not in ran:
            print(f"   {scenario}.{check}: listed in {args.expected} but "
                  "no such check runs in this scenario")
            status = 1
    for check, problems, summary in results:
        how, reason = mine.get((args.client, args.scenario, check),
                               (None, None))
        if problems and reason:
            verdict, text = "known", f"{first(problems)} [{how}: {reason}]"
        elif problems:
            verdict, text, status = "FAIL", first(problems), 1
        elif how == "always":
            verdict, status = "FIXED", 1
            text = (f"{summary}; expected to fail ({reason}): remove the "
                    f"line from {args.expected}")
        elif how == "sometimes":
            verdict, text = "ok", f"{summary} [fails sometimes: {reason}]"
        else:
            verdict, text = "ok", summary
        print(f"   {args.scenario + '.' + check:15} {verdict:6} {text}")
    return status


if __name__ == "__main__":
    sys.exit(main())
