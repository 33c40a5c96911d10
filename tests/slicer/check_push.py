#!/usr/bin/env python3
"""check_push.py - what an OTLP receiver of ours (tests/servers/otlp_receiver.py)
took, against what the database holds.

usage: check_push.py match RECV_DIR EXPORT.json   exit 0 when the span ids of
           the trace requests answered 200 are, as a multiset, those of
           EXPORT.json (slicer export --format otlp): none lost, none twice
       check_push.py merge RECV_DIR DECODED_PREFIX OUT   the decoded trace
           bodies (DECODED_PREFIX.NNNN.json) as one request, a resourceSpans
           per resource, for check_otlp.py
"""
import collections
import json
import os
import sys


def log(recv):
    path = os.path.join(recv, "log.jsonl")
    return [json.loads(line) for line in open(path)] if os.path.exists(path) else []


def match(recv, export):
    got = collections.Counter(s for r in log(recv)
                              if r["path"] == "/v1/traces" and r["status"] == 200
                              for s in r["spans"])
    req = json.load(open(export))
    want = collections.Counter(s["spanId"] for r in req["resourceSpans"]
                               for ss in r["scopeSpans"] for s in ss["spans"])
    twice = [s for s, n in got.items() if n > 1]
    if twice:
        print("sent twice: %d spans, e.g. %s" % (len(twice), twice[:3]))
        return 2
    if got != want:
        print("received %d spans, the database has %d (%d missing, %d unknown)"
              % (sum(got.values()), sum(want.values()), len(want - got), len(got - want)))
        return 1
    print("push: the receiver has each of the %d spans once" % sum(want.values()))
    return 0


def merge(recv, prefix, out):
    resources = {}
    for r in log(recv):
        if r["path"] != "/v1/traces" or r["status"] != 200:
            continue
        req = json.load(open("%s.%04d.json" % (prefix, r["n"])))
        for rs in req["resourceSpans"]:
            key = json.dumps(rs["resource"], sort_keys=True)
            into = resources.setdefault(key, {"resource": rs["resource"], "scopeSpans": [
                {"scope": rs["scopeSpans"][0]["scope"], "spans": []}]})
            for ss in rs["scopeSpans"]:
                into["scopeSpans"][0]["spans"].extend(ss["spans"])
    json.dump({"resourceSpans": list(resources.values())}, open(out, "w"))
    return 0


if sys.argv[1] == "match":
    sys.exit(match(sys.argv[2], sys.argv[3]))
sys.exit(merge(sys.argv[2], sys.argv[3], sys.argv[4]))
