#!/usr/bin/env python3
"""check_waterfall.py [--where EXPR] DB SVG [PATH...] - a waterfall drawn by
manager waterfall (gnuplot's SVG) against the database it was drawn from
(the exchanges for which the SQL expression EXPR holds, and their
connections), computed here from the rows without the manager's code:

  - the rows' labels, top to bottom, are the connections in the order of
    their T1 (a row "conn N HOST:PORT[ TLS][ PROTOCOL], END" each) with their exchanges in
    order under them ("METHOD PATH STATUS"): the rows in start order;
  - every PATH given (e.g. each request in nginx's log) labels a row;
  - each segment (DNS, connect, TLS, send, wait, receive: the boxes of
    gnuplot's plot of that name) starts where its first moment lies on the
    time axis (ms since the first event drawn) and is as long as the
    database's duration (dns_ms, te_ms, tls_ms, ts_ms, tw_ms, trecv_ms),
    within the SVG's rounding (0.01 px, read through the axis' scale).

Prints one line per check; exits 1 at the first disagreement."""
import re
import sqlite3
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
args = sys.argv[1:]
where = None
if args[0] == "--where":
    where, args = args[1], args[2:]
db = sqlite3.connect(args[0])
svg = ET.parse(args[1]).getroot()
want_paths = args[2:]
# with a filter: the exchanges it keeps, and the connections they are on
x_where = f"({where})" if where else "1"
c_where = (f"c.id IN (SELECT connection_id FROM exchange_metrics WHERE ({where}))"
           if where else "1")


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def translate(g):
    m = re.match(r"translate\(([-\d.]+),([-\d.]+)\)", g.get("transform", ""))
    return (float(m.group(1)), float(m.group(2))) if m else None


# the labels: text anchored at its end (the rows) or its middle (the times)
rows, ticks = [], []
for g in svg.iter(NS + "g"):
    pos, text = translate(g), g.find(NS + "text")
    if pos is None or text is None or text.text is None:
        continue
    if g.get("text-anchor") == "end" and g.get("font-size"):
        rows.append((pos[1], text.text))
    elif g.get("text-anchor") == "middle" and re.fullmatch(r"\s*-?[\d.]+\s*", text.text):
        ticks.append((pos[1], pos[0], float(text.text)))
# legend entries are anchored at their end too, but they name a kind
kinds = {"connection open", "idle", "DNS", "connect", "TLS", "send", "wait", "receive"}
rows = [r for r in rows if r[1] not in kinds]
rows.sort()
labels = [t for _, t in rows]

# the expected rows, from the database
expect, segs = [], []  # segs: (row, kind, start_ns, duration_ms)
conns = db.execute(
    "SELECT c.id, c.seq, coalesce(c.dns_name, c.peer_addr), c.peer_port, c.tls,"
    " coalesce(c.end_class, 'open'), c.t1_ns, c.dns_start_ns, cm.dns_ms, cm.te_ms,"
    " c.tls_start_ns, cm.tls_ms, c.protocol FROM connection c JOIN connection_metrics cm"
    " ON cm.connection_id = c.id WHERE " + c_where + " ORDER BY c.t1_ns, c.id").fetchall()
starts = []
for cid, seq, host, port, tls, end, t1, dns_start, dns_ms, te_ms, tls_start, tls_ms, proto in conns:
    expect.append(f"conn {seq} {host}:{port}{' TLS' if tls else ''}{' ' + proto if proto else ''}, {end}")
    xs = db.execute(
        "SELECT seq, method, path, status, t3_ns, ts_ms, t4_ns, tw_ms, tfb_ns, trecv_ms"
        " FROM exchange_metrics WHERE connection_id = ? AND " + x_where + " ORDER BY seq",
        (cid,)).fetchall()
    setup_row = len(expect) if xs and xs[0][0] == 1 else len(expect) - 1
    for kind, start, ms in (("DNS", dns_start, dns_ms), ("connect", t1, te_ms),
                            ("TLS", tls_start, tls_ms)):
        if start is not None and ms is not None:
            segs.append((setup_row, kind, start, ms))
    starts += [s for s in (dns_start, t1) if s]
    last_t3 = None
    for xseq, method, path, status, t3, ts, t4, tw, tfb, trecv in xs:
        if path is not None:
            expect.append(" ".join(str(v) for v in (method, path, status) if v))
        else:
            expect.append(f"{host}:{port} #{xseq}")
        if t3 is not None:
            if last_t3 is not None and t3 < last_t3:
                fail(f"exchange {xseq} of connection {cid} starts before the one before it")
            last_t3 = t3
            starts.append(t3)
        for kind, start, ms in (("send", t3, ts), ("wait", t4, tw), ("receive", tfb, trecv)):
            if start is not None and ms is not None:
                segs.append((len(expect) - 1, kind, start, ms))
if labels != expect:
    fail("rows:\n  svg: %s\n  db:  %s" % (labels, expect))
print(f"ok: {len(labels)} rows in start order (connections by T1, exchanges by number)")
for p in want_paths:
    if not any(f" {p} " in f" {label} " for label in labels):
        fail(f"no row for {p}")
if want_paths:
    print(f"ok: every path of the page labels a row ({len(want_paths)})")

# the scales: rows from the labels' y, ms from the bottom axis' labels
bottom = max(y for y, _, _ in ticks)
axis = sorted((x, v) for y, x, v in ticks if abs(y - bottom) < 0.5)
(x0, v0), (x1, v1) = axis[0], axis[-1]
px_per_ms = (x1 - x0) / (v1 - v0)
row_y0, row_step = rows[0][0], (rows[-1][0] - rows[0][0]) / max(1, len(rows) - 1)
t0 = min(starts)

drawn = {}  # (row, kind) -> (start ms, length ms)
for g in svg.iter(NS + "g"):
    if not (g.get("id") or "").startswith("gnuplot_plot_"):
        continue
    title = g.find(f".//{NS}text")
    if title is None or title.text not in kinds:
        continue
    for poly in g.iter(NS + "polygon"):
        pts = [tuple(map(float, p.split(","))) for p in poly.get("points").split()]
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        row = round(((min(ys) + max(ys)) / 2 - row_y0) / row_step) if row_step else 0
        if 0 <= row < len(labels) and abs((min(ys) + max(ys)) / 2 - row_y0 - row * row_step) < row_step / 2:
            if (row, title.text) in drawn:
                fail(f"two {title.text} segments on row {row}")
            drawn[(row, title.text)] = ((min(xs) - x0) / px_per_ms + v0,
                                        (max(xs) - min(xs)) / px_per_ms)
# gnuplot's SVG puts each point on a 0.01 px grid: a length (two ends) or
# a start read through the axis' labels (two more points) is off by up to
# 0.02 px; the data files' microseconds add 1e-6 ms at each end
tol = 0.03 / px_per_ms + 1e-5
worst = 0
for row, kind, start, ms in segs:
    if (row, kind) not in drawn:
        if ms <= tol:
            continue  # nothing to see at this scale
        fail(f"row {row} ({labels[row]}): no {kind} segment ({ms} ms)")
    got_start, got_ms = drawn.pop((row, kind))
    want_start = (start - t0) / 1e6
    if abs(got_ms - ms) > tol or abs(got_start - want_start) > tol:
        fail(f"row {row} ({labels[row]}) {kind}: {got_ms:.6f} ms from {got_start:.6f},"
             f" the database {ms:.6f} ms from {want_start:.6f} (tolerance {tol:.6f})")
    worst = max(worst, abs(got_ms - ms), abs(got_start - want_start))
extra = [k for k in drawn if k[1] not in ("connection open", "idle")]
if extra:
    fail(f"segments the database does not have: {extra}")
print(f"ok: {len(segs)} segments where and as long as the database says"
      f" (largest difference {worst:.6f} ms, {1 / px_per_ms:.4f} ms a pixel)")
