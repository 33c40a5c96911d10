#!/usr/bin/env python3
"""An independent HAR 1.2 reader: checks a file against the HAR 1.2
specification's required fields and types (the log, creator, entries,
request, response, content, cache, timings), the rules on timings
(send, wait and receive are >= 0, the optional ones are -1 or >= 0, time is
the sum of the non-negative phases, ssl not counted: it is included in
connect) and ISO 8601 startedDateTime.

usage: check_har.py FILE EXPECTED_ENTRIES
"""
import datetime
import json
import sys


def need(obj, key, typ, where):
    if key not in obj:
        raise ValueError(f"{where}: missing '{key}'")
    if not isinstance(obj[key], typ) or isinstance(obj[key], bool) and typ is not bool:
        raise ValueError(f"{where}.{key}: {obj[key]!r} is not {typ}")
    return obj[key]


def check(path, expected):
    with open(path) as f:
        har = json.load(f)
    log = need(har, "log", dict, "")
    if need(log, "version", str, "log") != "1.2":
        raise ValueError("log.version is not 1.2")
    creator = need(log, "creator", dict, "log")
    need(creator, "name", str, "log.creator")
    need(creator, "version", str, "log.creator")
    entries = need(log, "entries", list, "log")
    if len(entries) != expected:
        raise ValueError(f"{len(entries)} entries, expected {expected}")
    for i, e in enumerate(entries):
        w = f"entries[{i}]"
        started = need(e, "startedDateTime", str, w)
        datetime.datetime.strptime(started, "%Y-%m-%dT%H:%M:%S.%fZ")
        total = need(e, "time", (int, float), w)
        req = need(e, "request", dict, w)
        for k, t in (("method", str), ("url", str), ("httpVersion", str),
                     ("cookies", list), ("headers", list),
                     ("queryString", list), ("headersSize", int),
                     ("bodySize", int)):
            need(req, k, t, w + ".request")
        resp = need(e, "response", dict, w)
        for k, t in (("status", int), ("statusText", str),
                     ("httpVersion", str), ("cookies", list),
                     ("headers", list), ("content", dict),
                     ("redirectURL", str), ("headersSize", int),
                     ("bodySize", int)):
            need(resp, k, t, w + ".response")
        need(resp["content"], "size", int, w + ".response.content")
        need(resp["content"], "mimeType", str, w + ".response.content")
        need(e, "cache", dict, w)
        tm = need(e, "timings", dict, w)
        phases = 0.0
        for k in ("send", "wait", "receive"):
            v = need(tm, k, (int, float), w + ".timings")
            if v < 0:
                raise ValueError(f"{w}.timings.{k} = {v} < 0")
            phases += v
        for k in ("blocked", "dns", "connect", "ssl"):
            if k in tm:
                v = tm[k]
                if not isinstance(v, (int, float)) or (v < 0 and v != -1):
                    raise ValueError(f"{w}.timings.{k} = {v!r}")
                if v > 0 and k != "ssl":  # ssl lies inside connect (HAR 1.2)
                    phases += v
        if abs(phases - total) > 0.01:
            raise ValueError(f"{w}: time {total} is not the sum of the phases {phases}")
        if "serverIPAddress" in e:
            need(e, "serverIPAddress", str, w)
        if "connection" in e:
            need(e, "connection", str, w)
    return len(entries)


if __name__ == "__main__":
    try:
        n = check(sys.argv[1], int(sys.argv[2]))
    except (ValueError, KeyError, json.JSONDecodeError) as err:
        print(f"check_har: {sys.argv[1]}: {err}")
        sys.exit(1)
    print(f"check_har: {sys.argv[1]}: a valid HAR 1.2 log of {n} entries")
