"""grow.py HOST PORT N - one request on a keep-alive connection, "ready" on
stdout, then, after a line on stdin, N more requests on it (two spool records
each: enough to make the spool grow). Prints how many of the 1 + N answers
were 200 with the 100 bytes of /100b."""
import http.client
import sys

conn = http.client.HTTPConnection(sys.argv[1], int(sys.argv[2]), timeout=30)


def get():
    conn.request("GET", "/100b")
    resp = conn.getresponse()
    return resp.status == 200 and len(resp.read()) == 100


good = int(get())
print("ready", flush=True)
sys.stdin.readline()
good += sum(get() for _ in range(int(sys.argv[3])))
print(good)
