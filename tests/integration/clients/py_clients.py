"""Python clients for the integration tests: urllib, http.client with
keep-alive, asyncio streams on three concurrent connections."""
import asyncio
import http.client
import sys
import urllib.parse
import urllib.request

url = sys.argv[1]
u = urllib.parse.urlsplit(url)

with urllib.request.urlopen(url + "/100b") as r:
    assert len(r.read()) == 100

c = http.client.HTTPConnection(u.hostname, u.port)
for path in ("/100b", "/50k", "/1m"):
    c.request("GET", path)
    r = c.getresponse()
    r.read()
    assert r.status == 200
c.close()


async def fetch(path, times):
    reader, writer = await asyncio.open_connection(u.hostname, u.port)
    for _ in range(times):
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {u.netloc}\r\n\r\n".encode())
        await writer.drain()
        length = 0
        while True:
            line = await reader.readline()
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
            if line in (b"\r\n", b""):
                break
        await reader.readexactly(length)
    writer.close()
    await writer.wait_closed()


async def main():
    await asyncio.gather(fetch("/100b", 2), fetch("/50k", 2), fetch("/1m", 2))

asyncio.run(main())
print("python clients done")
