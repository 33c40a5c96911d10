"""One client of the zoo in Python: fetch each URL in turn and read it all.

usage: python_client.py urllib|httpclient|requests CAFILE URL...

urllib: urllib.request.urlopen, a new connection per URL (Connection: close).
httpclient: http.client, one keep-alive connection to the first URL's server.
requests: a requests.Session (urllib3's pool), keep-alive.
Exit status 0 when every URL answered 2xx, 1 otherwise.
"""
import ssl
import sys
import urllib.parse


def fetch_urllib(cafile, urls):
    import urllib.request
    ctx = ssl.create_default_context(cafile=cafile)
    ok = True
    for url in urls:
        with urllib.request.urlopen(url, context=ctx, timeout=30) as r:
            r.read()
            ok = ok and 200 <= r.status < 300
    return ok


def fetch_httpclient(cafile, urls):
    import http.client
    first = urllib.parse.urlsplit(urls[0])
    if first.scheme == "https":
        ctx = ssl.create_default_context(cafile=cafile)
        conn = http.client.HTTPSConnection(first.hostname, first.port,
                                           timeout=30, context=ctx)
    else:
        conn = http.client.HTTPConnection(first.hostname, first.port,
                                          timeout=30)
    ok = True
    for url in urls:
        u = urllib.parse.urlsplit(url)
        conn.request("GET", u.path + ("?" + u.query if u.query else ""))
        r = conn.getresponse()
        r.read()
        ok = ok and 200 <= r.status < 300
    conn.close()
    return ok


def fetch_requests(cafile, urls):
    import requests
    ok = True
    with requests.Session() as s:
        for url in urls:
            r = s.get(url, verify=cafile, timeout=30)
            ok = ok and r.ok
    return ok


def main():
    mode, cafile, urls = sys.argv[1], sys.argv[2], sys.argv[3:]
    fetch = {"urllib": fetch_urllib, "httpclient": fetch_httpclient,
             "requests": fetch_requests}[mode]
    return 0 if fetch(cafile, urls) else 1


if __name__ == "__main__":
    sys.exit(main())
