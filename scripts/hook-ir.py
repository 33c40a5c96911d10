#!/usr/bin/env python3
"""hook-ir.py CALLGRIND_FILE OBJECT [HOOKS]: the instructions spent inside
OBJECT's hooks (an LD_PRELOAD library: libobserve.so, or the probe), read
from callgrind's own file. HOOKS (a regular expression): only the hooks of
those names, and nothing nested in their real calls (the TLS hooks' own
part: SSL_(write|read)); every call of one of those names out of OBJECT is
then taken for a real call.

Inside the hooks = the inclusive cost of every call into OBJECT from
outside it, less the cost of the real calls the hooks make: a call from a
function of OBJECT (write, or write_slow, its out-of-line part) to a
function of another object of the same name (write in libc). Calls the
layer makes for itself (clock_gettime, getsockopt for SO_TYPE, memset)
stay in. Layer work nested inside a real call (libc's fclose calling the
close hook) is counted once: it is in the outer call, and the inner call
into OBJECT is under a real call that is taken out.

(callgrind_annotate's per-function list is no ground for this: one
function whose inlined parts carry different spellings of a file name
(LTO) is split into entries, and which of them carries the object's name
depends on the directory the library was built in.)
"""
import re
import sys


def main():
    path, obj = sys.argv[1], sys.argv[2]
    only = re.compile(sys.argv[3]) if len(sys.argv) > 3 else None
    names = {}  # (kind, id) -> name

    def name(kind, s):
        m = re.match(r"\((\d+)\)(?: (.*))?$", s)
        if not m:
            return s
        key = (kind, m.group(1))
        if m.group(2) is not None:
            names[key] = m.group(2)
        return names.get(key, "")

    def base(fn):
        fn = fn.split("'")[0]
        fn = re.sub(r"@.*$", "", fn)
        fn = re.sub(r"\.(lto_priv|part|constprop|isra|cold)\.\d+.*$", "", fn)
        return fn

    def real_of(caller, callee):
        c = base(caller)
        for suffix in ("_slow",):
            if c.endswith(suffix):
                c = c[: -len(suffix)]
        return base(callee) == c

    ob = cob = None
    fn = cfn = None
    pending = None  # (callee ob, callee fn) of the calls= line just read
    into = out_real = 0
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            if pending is not None:
                if line[0] in "0123456789+-*":
                    cost = int(line.split()[-1])
                    c_ob, c_fn = pending
                    in_obj = obj in (ob or "")
                    callee_in = obj in (c_ob or "")
                    if callee_in and not in_obj:
                        if not only or only.fullmatch(base(c_fn)):
                            into += cost
                    elif in_obj and not callee_in:
                        # with HOOKS, every call of one of them out of
                        # OBJECT is a real one (hooks_tls.c makes it from
                        # a helper: openssl_write)
                        if (only.fullmatch(base(c_fn)) if only
                                else real_of(fn, c_fn)):
                            out_real += cost
                pending = None
                continue
            if line.startswith("ob="):
                ob = name("ob", line[3:])
            elif line.startswith("fn="):
                fn = name("fn", line[3:])
                cob = cfn = None
            elif line.startswith("cob="):
                cob = name("ob", line[4:])
            elif line.startswith("cfn="):
                cfn = name("fn", line[4:])
            elif line.startswith("calls="):
                pending = (cob if cob is not None else ob, cfn)
                cob = None
            elif line.startswith(("fl=", "fi=", "fe=")):
                name("fl", line[3:])
            elif line.startswith(("cfi=", "cfl=")):
                name("fl", line[4:])
    print(into - out_real)


if __name__ == "__main__":
    main()
