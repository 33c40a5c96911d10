#!/usr/bin/env bash
# run-fuzz-tlsdec.sh [SECONDS] - build the TLS decryption's fuzz targets
# with clang's libFuzzer, AddressSanitizer and UBSan and run each for
# SECONDS (default 10; tests/fuzz/run-fuzz-tlsdec.sh 600 for a longer run):
#   fuzz_tlsdec  the decrypting record follower through the capture and the
#                replay, a stand-in cipher; seeded with TLS 1.3 and 1.2
#                conversations (a ClientHello, a ServerHello of each suite,
#                the flights, records of data each way, the secrets given
#                before and after them)
#   fuzz_keylog  the key log's line parser, seeded with lines of each kind
# Exit 77 (skipped) without clang/libFuzzer.
source "$(dirname "$0")/../lib/common.sh"
source "$REPO/tests/lib/fuzz.sh"
seconds=${1:-10}
fuzz_build fuzz_tlsdec fuzz_keylog

mkdir -p "$WORK/corpus-tlsdec" "$WORK/corpus-keylog"
"$PYTHON" - "$WORK/corpus-tlsdec" "$WORK/corpus-keylog" <<'PY'
import os, struct, sys
tls, kl = sys.argv[1], sys.argv[2]
def rec(kind, body):
    return bytes([kind]) + struct.pack(">H", len(body)) + body
def record(t, payload):
    return bytes([t, 3, 3]) + struct.pack(">H", len(payload)) + payload
def hello_c():
    body = b"\x03\x03" + bytes(range(32)) + b"\x00" + b"\x00\x02\x13\x01\x01\x00"
    return record(22, b"\x01" + struct.pack(">I", len(body))[1:] + body)
def hello_s(suite, version=0x0304):
    ext = b"\x00\x2b\x00\x02" + struct.pack(">H", version)
    body = b"\x03\x03" + bytes(32) + b"\x00" + struct.pack(">H", suite) + b"\x00" + struct.pack(">H", len(ext)) + ext
    return record(22, b"\x02" + struct.pack(">I", len(body))[1:] + body)
req = b"GET /x HTTP/1.1\r\nHost: h\r\n\r\n" + b"\x17"
resp = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi" + b"\x17"
h2 = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0]) + b"\x17"
n = 0
for suite in (0x1301, 0x1302, 0x1303):
    for keys_first in (True, False):
        for app in (req, h2):
            parts = [rec(ord(">"), hello_c()), rec(ord("<"), hello_s(suite) + record(20, b"\x01") + record(23, bytes(40))),
                     rec(ord(">"), record(20, b"\x01") + record(23, bytes(40)))]
            if keys_first:
                parts.append(rec(ord("K"), b""))
            parts += [rec(ord(">"), record(23, app + bytes(16))), rec(ord("<"), record(23, resp + bytes(16)))]
            if not keys_first:
                parts.append(rec(ord("K"), b""))
            for piece in (0, 7):
                open(os.path.join(tls, f"seed{n}"), "wb").write(bytes([piece << 1]) + b"".join(parts))
                n += 1
# TLS 1.2: a ServerHello without supported_versions, each AEAD suite; the
# ChangeCipherSpecs and Finished messages, then data (AES-GCM: an explicit
# nonce of 8 bytes before each record's ciphertext)
def hello_s12(suite):
    body = b"\x03\x03" + bytes(32) + b"\x00" + struct.pack(">H", suite) + b"\x00\x00\x00"
    return record(22, b"\x02" + struct.pack(">I", len(body))[1:] + body)
for suite in (0xc02f, 0xc030, 0xcca8):
    explicit = bytes(8) if suite != 0xcca8 else b""
    fin = record(20, b"\x01") + record(22, explicit + bytes(32))
    for keys_first in (True, False):
        parts = [rec(ord(">"), hello_c()), rec(ord("<"), hello_s12(suite)), rec(ord(">"), fin)]
        if keys_first:
            parts.append(rec(ord("K"), b""))
        parts += [rec(ord("<"), fin), rec(ord(">"), record(23, explicit + req[:-1] + bytes(16))),
                  rec(ord("<"), record(23, explicit + resp[:-1] + bytes(16)))]
        if not keys_first:
            parts.append(rec(ord("K"), b""))
        for piece in (0, 7):
            open(os.path.join(tls, f"seed{n}"), "wb").write(bytes([piece << 1]) + b"".join(parts))
            n += 1
for i, label in enumerate(("CLIENT_TRAFFIC_SECRET_0", "SERVER_TRAFFIC_SECRET_0", "EXPORTER_SECRET", "CLIENT_RANDOM")):
    line = f"{label} {'ab' * 32} {'cd' * (32 + 16 * (i % 2))}\n"
    open(os.path.join(kl, f"seed{i}"), "w").write(line + "# a comment\n" + line.replace("ab", "ef", 3))
PY
for target in fuzz_tlsdec fuzz_keylog; do
  fuzz_run "$WORK/$target" "$WORK/corpus-${target#fuzz_}" "$seconds"
done
ok "no crash, broken promise, undefined behaviour or hang in 2 x $seconds s"
