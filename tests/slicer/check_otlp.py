#!/usr/bin/env python3
"""check_otlp.py - the spans of an OTLP export against the database they came
from: one CLIENT span per exchange, found under the id the documented rule
gives its identity (docs/otel.md), with the HTTP attributes its row says;
the phases of a connection's first exchange as child spans inside it; one
resource per process; error.type by the documented rule.

usage: check_otlp.py DB DECODED [--where EXPR]
DECODED is the request as check_otlp.js decoded it back from protobuf.
"""
import json
import os
import sqlite3
import sys

M = (1 << 64) - 1


def fnv1a(h, data):
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & M
    return h


def fmix64(h):
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & M
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & M
    return h ^ (h >> 33)


def identity_hash(client, pid, start, conn_seq, exch_seq, tag):
    h = fnv1a(0xCBF29CE484222325, tag.encode())
    h = fnv1a(h, client.encode() + b"\0")
    for v in (pid, start, conn_seq, exch_seq):
        h = fnv1a(h, (v & M).to_bytes(8, "little"))
    return fmix64(h)


def never_zero(hexid):
    return hexid if int(hexid, 16) else hexid[:-2] + "01"


def trace_id(client, pid, start, conn_seq):
    return never_zero("%016x%016x" % (identity_hash(client, pid, start, conn_seq, 0, "T"),
                                      identity_hash(client, pid, start, conn_seq, 0, "t")))


def span_id(client, pid, start, conn_seq, exch_seq, tag="E"):
    return never_zero("%016x" % identity_hash(client, pid, start, conn_seq, exch_seq, tag))


def attrs(obj):
    out = {}
    for a in obj.get("attributes", []):
        v = a["value"]
        out[a["key"]] = int(v["intValue"]) if "intValue" in v else v["stringValue"]
    return out


H2_ERRORS = ["NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR",
             "SETTINGS_TIMEOUT", "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM",
             "CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM",
             "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED"]


def expected_error(r):
    """docs/otel.md, "Errors"."""
    if r["status"] is not None and r["status"] >= 400:
        return str(r["status"])
    if r["stream_error"]:
        code = r["stream_error"]
        return H2_ERRORS[code] if code < len(H2_ERRORS) else "h2_error_%d" % code
    if r["end_class"] is None:
        return None
    if r["tfb_ns"] is None and r["t3_ns"] is not None:
        return r["end_class"]
    if r["seq"] == r["last_seq"] and r["end_class"] in ("reset", "timeout"):
        return r["end_class"]
    return None


def main():
    db_path, decoded = sys.argv[1], sys.argv[2]
    where = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--where" else "1"
    db = sqlite3.connect(db_path)
    db.row_factory = sqlite3.Row
    rows = db.execute(
        "SELECT m.*, p.start_ns AS process_start_ns, c.seq AS connection_seq,"
        " c.dns_start_ns, c.dns_end_ns, c.tls_start_ns, c.tls_end_ns,"
        " (SELECT max(seq) FROM exchange x WHERE x.connection_id = c.id) AS last_seq,"
        " p.id AS process_id"
        " FROM (SELECT * FROM exchange_metrics WHERE (%s)) m"
        " JOIN connection c ON c.id = m.connection_id"
        " JOIN process p ON p.id = c.process_id" % where).fetchall()
    request = json.load(open(decoded))

    resources = request["resourceSpans"]
    assert len(resources) == len({r["process_id"] for r in rows}), \
        "one resourceSpans per process: %d for %d" % (
            len(resources), len({r["process_id"] for r in rows}))
    spans = {}
    for res in resources:
        ra = attrs(res["resource"])
        assert set(ra) <= {"service.name", "host.name", "process.pid",
                           "process.executable.path"}, ra
        (scope,) = res["scopeSpans"]
        assert scope["scope"] == {"name": "observe", "version": "0.1.0"}, scope["scope"]
        for s in scope["spans"]:
            assert s["spanId"] not in spans, "span id twice: " + s["spanId"]
            s["resource"] = ra
            spans[s["spanId"]] = s

    client_spans = [s for s in spans.values() if s["kind"] == 3]
    assert len(client_spans) == len(rows), \
        "%d CLIENT spans for %d exchanges" % (len(client_spans), len(rows))
    phases = {"D": "DNS lookup", "C": "socket connect", "S": "TLS client handshake"}
    seen = {name: 0 for name in phases.values()}
    for r in rows:
        ident = (r["client"], r["pid"], r["process_start_ns"], r["connection_seq"])
        sid = span_id(*ident, r["seq"])
        s = spans.get(sid)
        assert s, "no span %s for exchange %d/%d" % (sid, r["connection_id"], r["seq"])
        assert s["traceId"] == trace_id(*ident), "the connection's trace"
        assert "parentSpanId" not in s, "an exchange's span is a root"
        a = attrs(s)
        what = "exchange %d/%d: %s" % (r["connection_id"], r["seq"], a)
        ra = s["resource"]
        assert ra["service.name"] == os.path.basename(r["program"]), ra
        assert ra["host.name"] == r["client"] and ra["process.pid"] == r["pid"], ra
        # the HTTP conventions' attributes, from the row
        if r["method"]:
            assert a["http.request.method"] == r["method"], what
            assert s["name"] == r["method"], what
        else:
            assert s["name"] == "HTTP" and "http.request.method" not in a, what
        if r["status"]:
            assert a["http.response.status_code"] == r["status"], what
        assert a["network.peer.address"] == r["peer_addr"], what
        assert a["network.peer.port"] == r["peer_port"], what
        assert a["http.request.size"] == r["ds"] and a["http.response.size"] == r["dr"], what
        if r["protocol"] in ("http/1.1", "h2", "h2c"):
            assert a["network.protocol.name"] == "http", what
            assert a["network.protocol.version"] == ("1.1" if r["protocol"] == "http/1.1" else "2"), what
        if r["host"] and r["path"]:
            scheme = "https" if r["tls"] else "http"
            assert a["url.full"] == "%s://%s%s" % (scheme, r["host"], r["path"]), what
            assert a["server.address"] == r["host"].rsplit(":", 1)[0], what
            assert a["server.port"] == int(r["host"].rsplit(":", 1)[1]), what
        if "url.full" in a:
            assert "?" not in a["url.full"] and "@" not in a["url.full"], what
        err = expected_error(r)
        assert a.get("error.type") == err, "%s: error.type %r expected" % (what, err)
        assert (s.get("status", {}).get("code") == 2) == (err is not None), what
        # times: the span covers the exchange, and on its connection's
        # first exchange the phases it carries
        times = [r[c] for c in ("t3_ns", "t4_ns", "t5_ns", "tfb_ns", "t6_ns")]
        if r["seq"] == 1:
            times += [r[c] for c in ("dns_start_ns", "dns_end_ns", "t1_ns", "t2_ns",
                                     "tls_start_ns", "tls_end_ns")]
        times = [t for t in times if t is not None]
        start, end = int(s["startTimeUnixNano"]), int(s["endTimeUnixNano"])
        assert (start, end) == (min(times), max(times)), what
        if r["t6_ns"] is not None:
            assert end == r["t6_ns"], what
        events = {e["name"]: int(e["timeUnixNano"]) for e in s.get("events", [])}
        if r["t4_ns"] is not None:
            assert events["request sent"] == r["t4_ns"], what
        if r["tfb_ns"] is not None:
            assert events["first byte received"] == r["tfb_ns"], what
        assert events.get("interim response") == r["interim_ns"], what
        assert all(start <= t <= end for t in events.values()), what
        # the phase children: there when the row has their times, inside
        for tag, name in phases.items():
            child = spans.get(span_id(*ident, r["seq"], tag))
            lo, hi = {"D": ("dns_start_ns", "dns_end_ns"), "C": ("t1_ns", "t2_ns"),
                      "S": ("tls_start_ns", "tls_end_ns")}[tag]
            want = (r["seq"] == 1 and r[lo] is not None and r[hi] is not None
                    and r[hi] >= r[lo])
            assert bool(child) == want, "%s: %s %s" % (what, name, "missing" if want else "unexpected")
            if not child:
                continue
            assert child["name"] == name and child["kind"] == 1, child
            assert child["parentSpanId"] == sid and child["traceId"] == s["traceId"], child
            cs, ce = int(child["startTimeUnixNano"]), int(child["endTimeUnixNano"])
            assert (cs, ce) == (r[lo], r[hi]), child
            assert start <= cs <= ce <= end, "%s: %s outside its parent" % (what, name)
            seen[name] += 1
    assert len(spans) == len(rows) + sum(seen.values()), "no other span"
    print("otlp: %d exchanges, each its span with its attributes and times; phases %s"
          % (len(rows), seen))
    json.dump(seen, open(decoded + ".phases", "w"))


main()
