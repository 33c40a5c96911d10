#!/usr/bin/env python3
"""client-server.py - the site and the analysis of experiment 2 (issue 5):
client-side versus server-side time, as in the seed paper's section 6.2.

  client-server.py site DIR N SEED
      N files f/NNNNN of lognormal sizes (mu = 7.811, sigma = 1.573 on the
      natural log of bytes, seed 002's measured web distribution), made
      sparse (truncate: no disk blocks), and DIR/sizes.tsv (path, bytes).
  client-server.py urls SITE BASE_URL COUNT SEED OUT [--unique]
      a curl config of COUNT random accesses (uniform over the files; with
      --unique each file at most once), each on a connection of its own.
  client-server.py analyse DB ACCESS_LOG SIZES OUT_DIR DELAY_MS [--check]
      our Tt (connection_metrics) against nginx's $request_time: table,
      histograms on log bins (the paper's Fig. 9), size-time scatters from
      both sides (Figs. 10 and 11), data files and a gnuplot script; with
      --check, exit 1 when what must hold does not (see check()).
"""
import math
import os
import random
import sqlite3
import subprocess
import sys

MU, SIGMA = 7.811, 1.573


def site(out, n, seed):
    rng = random.Random(seed)
    os.makedirs(os.path.join(out, "f"), exist_ok=True)
    with open(os.path.join(out, "sizes.tsv"), "w") as sizes:
        for i in range(n):
            size = max(1, int(round(math.exp(rng.gauss(MU, SIGMA)))))
            path = f"f/{i:05d}"
            with open(os.path.join(out, path), "wb") as f:
                f.truncate(size)
            sizes.write(f"/{path}\t{size}\n")


def urls(site_dir, base, count, seed, out, unique):
    paths = [line.split("\t")[0] for line in open(os.path.join(site_dir, "sizes.tsv"))]
    rng = random.Random(seed)
    picks = rng.sample(paths, count) if unique else [rng.choice(paths) for _ in range(count)]
    with open(out, "w") as f:
        for p in picks:
            f.write(f'url = "{base}{p}"\noutput = "/dev/null"\n')


def pct(v, p):
    """nearest rank, as manager stats"""
    return v[max(1, math.ceil(p / 100 * len(v))) - 1] if v else float("nan")


def summary(v):
    v = sorted(v)
    return (len(v), sum(v) / len(v) if v else float("nan"), pct(v, 50), pct(v, 90), pct(v, 99), v[-1] if v else float("nan"))


def log_hist(values, lo_exp, hi_exp, per_decade=10):
    """counts on bins 10^(k/per_decade); values <= the first edge go to the first bin"""
    nb = (hi_exp - lo_exp) * per_decade
    counts = [0] * nb
    for x in values:
        k = int(math.floor((math.log10(x) - lo_exp) * per_decade)) if x > 0 else 0
        counts[min(max(k, 0), nb - 1)] += 1
    return [(10 ** (lo_exp + k / per_decade), c) for k, c in enumerate(counts)] + [(10 ** hi_exp, 0)]


def analyse(db_path, log_path, sizes_path, out, delay_ms, check):
    sizes = dict(line.rstrip("\n").split("\t") for line in open(sizes_path))
    db = sqlite3.connect(db_path)
    # one exchange per connection here: Tt, Dr and the path of each
    ours = db.execute(
        "SELECT c.tt_ms, e.dr, e.path, e.status, e.tw_ms, (e.tfb_ns - e.t3_ns) / 1e6, "
        "c.te_ms, c.t1_ns "
        "FROM connection_metrics c JOIN exchange_metrics e USING (connection_id) "
        "ORDER BY c.t1_ns").fetchall()
    n_conn = db.execute("SELECT count(*) FROM connection").fetchone()[0]
    # nginx: $request_uri, $status, $body_bytes_sent, $request_time (s), $msec
    server = []
    for line in open(log_path):
        f = line.rstrip("\n").split("\t")
        server.append((f[5], int(f[6]), int(f[7]), float(f[8]) * 1000, float(f[9])))
    tt = [r[0] for r in ours if r[0] is not None]
    st = [s[3] for s in server]
    os.makedirs(out, exist_ok=True)

    # pair each request with its log line: by path, in order of time
    by_path = {}
    for s in sorted(server, key=lambda s: s[4]):
        by_path.setdefault(s[0], []).append(s)
    pairs = []
    for r in ours:
        if r[2] in by_path and by_path[r[2]]:
            pairs.append((r, by_path[r[2]].pop(0)))

    rows = [("observe: Tt (client, connect to close)", summary(tt)),
            ("nginx: $request_time (server)", summary(st))]
    diff = (1 - (sum(st) / len(st)) / (sum(tt) / len(tt))) * 100 if tt and st else float("nan")
    with open(os.path.join(out, "client-server.md"), "w") as md:
        md.write("| view | n | mean ms | p50 ms | p90 ms | p99 ms | max ms |\n|---|---|---|---|---|---|---|\n")
        for name, (n, mean, p50, p90, p99, mx) in rows:
            md.write(f"| {name} | {n} | {mean:.1f} | {p50:.1f} | {p90:.1f} | {p99:.1f} | {mx:.1f} |\n")
        md.write(f"\nThe server's mean is {100 - diff:.0f}% of the client's "
                 f"(the paper: 418 ms against 815 ms, 51%).\n")
        under = sum(1 for r, s in pairs if s[3] < 1.0)
        md.write(f"\n{len(pairs)} requests paired by path; nginx logged {under} of them "
                 f"({100 * under / max(1, len(pairs)):.0f}%) under 1 ms "
                 f"(it stops its clock when the last byte is in its socket buffer).\n")
    for name, (n, mean, p50, p90, p99, mx) in rows:
        print(f"{name:42s} n={n:6d} mean={mean:9.1f} p50={p50:9.1f} p90={p90:9.1f} p99={p99:9.1f} max={mx:9.1f} ms")
    print(f"the server's mean is {100 - diff:.0f}% of the client's (the paper: 418 of 815 ms, 51%)")

    # Fig. 9: both histograms on 10 bins per decade
    lo = -1
    hi = max(1, int(math.ceil(math.log10(max(tt + st + [1])))))
    with open(os.path.join(out, "fig9.dat"), "w") as f:
        for (x, a), (_, b) in zip(log_hist(tt, lo, hi), log_hist(st, lo, hi)):
            f.write(f"{x:.6g} {a} {b}\n")
    # Figs. 10 and 11: size against time from each side
    with open(os.path.join(out, "fig10.dat"), "w") as f:
        for r in ours:
            if r[0] and r[1]:
                f.write(f"{r[1]} {r[0]:.3f}\n")
    with open(os.path.join(out, "fig11.dat"), "w") as f:
        for s in server:
            f.write(f"{s[2]} {max(s[3], 0.5):.3f}\n")
    gp = os.path.join(out, "client-server.gp")
    with open(gp, "w") as g:
        g.write(f"""set terminal pngcairo size 1000,600 font 'Sans,11' noenhanced
set grid
set output '{out}/fig9.png'
set title 'Time per request: the client (observe: Tt) against the server (nginx: $request_time), {len(tt)} requests'
set logscale x
set xlabel 'time, ms (log scale; bins a tenth of a decade; server times under 0.1 ms in the first bin)'
set ylabel 'requests per bin'
set yrange [0:*]
plot '{out}/fig9.dat' using 1:2 with steps lw 2 title 'observe: Tt, connect() to close()', \\
     '' using 1:3 with steps lw 2 title 'nginx: $request_time'
set output '{out}/fig10.png'
set title 'Client side (observe): response size against Tt'
set logscale xy
set yrange [*:*]
set xlabel 'Dr, bytes received, headers included (log scale)'
set ylabel 'Tt, ms (log scale)'
plot '{out}/fig10.dat' using 1:2 with points pt 7 ps 0.3 title 'observe: Tt'
set output '{out}/fig11.png'
set title 'Server side (nginx): body size against $request_time (0 ms drawn at 0.5 ms)'
set xlabel 'body bytes sent (log scale)'
set ylabel '$request_time, ms (log scale)'
plot '{out}/fig11.dat' using 1:2 with points pt 7 ps 0.3 lc 2 title 'nginx: $request_time'
""")
    subprocess.run(["gnuplot", gp], check=True)
    return check_all(ours, server, pairs, sizes, n_conn, delay_ms) if check else 0


def check_all(ours, server, pairs, sizes, n_conn, delay_ms):
    """What must hold, whatever the machine's speed:
    - every access is in both views once: as many connections, exchanges
      and log lines as accesses, every one paired by path;
    - Dr is the file plus its headers (more than the size, by < 1 KB) and
      the server sent the whole file (status 200, body = size);
    - the client waits at least the relay's round trip from its request
      to the first byte of the answer: TFB - T3 >= up + down delay (T3, the
      entry of the send: the request cannot leave before it; Tw = TFB - T4
      can be shorter when the client lost the CPU inside its send, after
      the data went out, and T4 came late: counted and printed);
    - Tt is never below the server's own time (Tt >= $request_time - 1 ms:
      the log has ms resolution)."""
    bad = []
    short_tw = 0
    if not (len(ours) == len(server) == n_conn == len(pairs)):
        bad.append(f"counts: {len(ours)} exchanges, {n_conn} connections, {len(server)} log lines, {len(pairs)} paired")
    for r, s in pairs:
        tt, dr, path, status, tw, first_byte = r[0], r[1], r[2], r[3], r[4], r[5]
        size = int(sizes[path])
        if s[1] != 200 or s[2] != size:
            bad.append(f"{path}: nginx sent status {s[1]}, {s[2]} of {size} bytes")
        if not (size < dr < size + 1024) or status != 200:
            bad.append(f"{path}: Dr {dr} for a {size}-byte file (status {status})")
        if first_byte is None or first_byte < 2 * delay_ms - 0.05:
            bad.append(f"{path}: TFB - T3 = {first_byte} ms, below the relay's round trip {2 * delay_ms} ms")
        if tw is not None and tw < 2 * delay_ms:
            short_tw += 1
        if tt is None or tt < s[3] - 1.0:
            bad.append(f"{path}: Tt {tt} ms below nginx's {s[3]} ms")
    for b in bad[:10]:
        print("FAIL:", b)
    if bad:
        print(f"FAIL: {len(bad)} problems")
        return 1
    print(f"ok: {len(pairs)} accesses in both views, Dr = file + headers, TFB - T3 >= the relay's round trip, "
          f"Tt >= the server's time ({short_tw} with Tw < the round trip: the client lost the CPU inside its send)")
    return 0


def main(argv):
    if len(argv) >= 5 and argv[1] == "site":
        site(argv[2], int(argv[3]), int(argv[4]))
    elif len(argv) >= 7 and argv[1] == "urls":
        urls(argv[2], argv[3], int(argv[4]), int(argv[5]), argv[6], "--unique" in argv)
    elif len(argv) >= 7 and argv[1] == "analyse":
        return analyse(argv[2], argv[3], argv[4], argv[5], float(argv[6]), "--check" in argv)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
