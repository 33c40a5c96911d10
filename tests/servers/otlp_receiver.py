#!/usr/bin/env python3
"""otlp_receiver.py - an OTLP/HTTP receiver for the tests, on loopback: it
keeps every request it is sent (POST /v1/traces, /v1/metrics) in DIR, the
body un-gzipped, and answers as its plan says.

usage: otlp_receiver.py DIR PORTFILE [--port N] [--plan PLAN]
                        [--partial N] [--lifetime S]

DIR gets, per request, NNNN.json (the body) and a line in DIR/log.jsonl:
{"n", "path", "status", "time" (monotonic), "headers", "spans": [spanId...]}.
N goes on from what DIR already holds, so a receiver started again on the
same DIR (and --port) goes on counting.
PLAN: comma-separated statuses for the trace requests in turn, the last one
repeated: "429,200" answers the first with 429 (Retry-After: 1), every other
with 200; "400" refuses them all (with a google.rpc.Status message).
--partial N: the first 200 to a trace request carries a partialSuccess that
rejects N spans. Metrics requests are always answered 200.
The server stops by itself after --lifetime seconds (default 300).
"""
import argparse
import gzip
import http.server
import json
import os
import threading
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("portfile")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--plan", default="200")
    ap.add_argument("--partial", type=int, default=0)
    ap.add_argument("--lifetime", type=float, default=300)
    args = ap.parse_args()
    plan = [int(s) for s in args.plan.split(",")]
    os.makedirs(args.dir, exist_ok=True)
    log_path = os.path.join(args.dir, "log.jsonl")
    state = {"n": sum(1 for _ in open(log_path)) if os.path.exists(log_path) else 0,
             "traces": 0, "partial": args.partial}
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def answer(self, status, body, extra=()):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in extra:
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            if self.headers.get("Content-Encoding") == "gzip":
                raw = gzip.decompress(raw)
            if self.path not in ("/v1/traces", "/v1/metrics"):
                self.answer(404, {"message": "no such path"})
                return
            spans = []
            if self.path == "/v1/traces":
                req = json.loads(raw)
                spans = [s["spanId"] for r in req.get("resourceSpans", [])
                         for ss in r.get("scopeSpans", []) for s in ss.get("spans", [])]
            with lock:
                n = state["n"]
                state["n"] += 1
                status, body, extra = 200, {}, []
                if self.path == "/v1/traces":
                    status = plan[min(state["traces"], len(plan) - 1)]
                    state["traces"] += 1
                    if status == 429 or status == 503:
                        extra = [("Retry-After", "1")]
                        body = {"message": "slow down"}
                    elif status >= 400:
                        body = {"code": 3, "message": "test refusal"}
                    elif state["partial"]:
                        body = {"partialSuccess": {"rejectedSpans": str(state["partial"]),
                                                   "errorMessage": "test rejection"}}
                        state["partial"] = 0
                with open(os.path.join(args.dir, "%04d.json" % n), "wb") as f:
                    f.write(raw)
                with open(log_path, "a") as f:
                    f.write(json.dumps({"n": n, "path": self.path, "status": status,
                                        "time": time.monotonic(),
                                        "headers": dict(self.headers.items()),
                                        "spans": spans}) + "\n")
            self.answer(status, body, extra)

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    srv.daemon_threads = True
    with open(args.portfile + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(args.portfile + ".tmp", args.portfile)
    threading.Timer(args.lifetime, srv.shutdown).start()
    srv.serve_forever(poll_interval=0.2)


main()
