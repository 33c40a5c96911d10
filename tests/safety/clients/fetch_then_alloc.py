"""fetch_then_alloc.py URL MIB - fetch URL, then take MIB MiB of address
space (a zeroed bytearray: calloc, mmap'd, never touched), as a program that
maps much of its own after its first connection does. Prints the body's
length, the bytes taken, and VmPeak (kB) at the end."""
import sys
import urllib.request

body = urllib.request.urlopen(sys.argv[1]).read()
buf = bytearray(int(sys.argv[2]) << 20)
with open("/proc/self/status") as status:
    peak = next(line.split()[1] for line in status if line.startswith("VmPeak:"))
print(len(body), len(buf), peak)
