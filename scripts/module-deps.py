#!/usr/bin/env python3
"""module-deps.py - the module graph of the tools and the core, and a check that it has
no cycle: no module calls back into one that depends on it, none into a
command's main.

A module is a source file and its header of the same name (common/store.c
and common/store.h are common/store). Two graphs are checked:
  - includes: module A includes B's header (#include "b.h": looked up
    beside A, then in common/, core/ and otel/);
  - symbols (with --objects BUILD): A's object file uses a function or
    variable that B's object defines (nm), which also catches a call made
    through a declaration written by hand.

usage: module-deps.py [--objects BUILD] [--list] [ROOT]
       module-deps.py --self-test
Exit status 0 when both graphs are acyclic, 1 (the cycles named) if not.
"""
import os
import re
import subprocess
import sys
import tempfile

# libobserve/ joins once its capture is the core's (core/capture.c): its
# record-building state machine still has cycles (exchange <-> h2 ...).
DIRS = ("common", "core", "otel", "slicer", "manager", "launcher")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def include_graph(root):
    """{module: set(module)} from the #include lines under root."""
    graph = {}
    for d in DIRS:
        base = os.path.join(root, d)
        if not os.path.isdir(base):
            continue
        for name in sorted(os.listdir(base)):
            stem, ext = os.path.splitext(name)
            if ext not in (".c", ".h"):
                continue
            module = f"{d}/{stem}"
            deps = graph.setdefault(module, set())
            with open(os.path.join(base, name), encoding="utf-8") as f:
                text = f.read()
            for inc in INCLUDE.findall(text):
                for where in (d, "common", "core", "otel"):
                    if os.path.exists(os.path.join(root, where, inc)):
                        target = f"{where}/{os.path.splitext(inc)[0]}"
                        if target != module:
                            deps.add(target)
                        break
    return graph


def source_of(build, root, obj):
    """The module of an object file in build (CMake keeps the source's path
    below CMakeFiles/TARGET.dir, "__" for ".."), or None when its source is
    gone (an object of an older build)."""
    rel = os.path.relpath(obj, build).split(os.sep)
    if "CMakeFiles" not in rel:
        return None
    i = rel.index("CMakeFiles")
    src = [".." if p == "__" else p for p in rel[:i] + rel[i + 2:]]
    path = os.path.normpath(os.path.join(root, *src))[:-2]  # drop .o
    if not os.path.exists(path):
        return None
    return os.path.splitext(os.path.relpath(path, root))[0]


def symbol_graph(build, root):
    """{module: set(module)} from nm of the tools' object files in build."""
    defined, used = {}, {}
    for d in DIRS:
        for top, _, files in os.walk(os.path.join(build, d)):
            for name in files:
                if not name.endswith(".c.o"):
                    continue
                module = source_of(build, root, os.path.join(top, name))
                if module is None or module.split("/")[0] not in DIRS:
                    continue
                out = subprocess.run(["nm", os.path.join(top, name)],
                                     capture_output=True, text=True,
                                     check=True).stdout
                for line in out.splitlines():
                    parts = line.split()
                    if len(parts) == 2 and parts[0] == "U":
                        used.setdefault(module, set()).add(parts[1])
                    elif len(parts) == 3 and parts[1] in "TDBR":
                        defined.setdefault(parts[2], set()).add(module)
                used.setdefault(module, set())
    graph = {}
    for module, symbols in used.items():
        deps = graph.setdefault(module, set())
        for s in symbols:
            deps.update(m for m in defined.get(s, ()) if m != module)
    return graph


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan),
    and the modules that depend on a main."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    for v, deps in sorted(graph.items()):
        for w in sorted(deps):
            if w.endswith("/main"):
                out.append([v, w])
    return out


def check(name, graph, show):
    if show:
        print(f"{name}:")
        for v in sorted(graph):
            print(f"  {v} -> {', '.join(sorted(graph[v])) or '-'}")
    bad = cycles(graph)
    for c in bad:
        print(f"module-deps: {name}: a cycle or a call into a main: "
              f"{' <-> '.join(c)}", file=sys.stderr)
    if not bad:
        print(f"ok: {name}: {len(graph)} modules, no cycle")
    return not bad


def self_test():
    """A tree with a cycle and a call into main is refused, one without
    is accepted."""
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "manager"))
        os.makedirs(os.path.join(root, "common"))

        def put(path, text):
            with open(os.path.join(root, path), "w", encoding="utf-8") as f:
                f.write(text)

        put("common/store.h", "")
        put("common/store.c", '#include "store.h"\n')
        put("manager/a.h", '#include "store.h"\n')
        put("manager/a.c", '#include "a.h"\n#include "b.h"\n')
        put("manager/b.h", "")
        put("manager/b.c", '#include "b.h"\n')
        put("manager/main.c", '#include "a.h"\n')
        g = include_graph(root)
        assert g["manager/a"] == {"common/store", "manager/b"}, g
        assert not cycles(g), cycles(g)
        put("manager/b.c", '#include "b.h"\n#include "a.h"\n')
        assert cycles(include_graph(root)) == [["manager/a", "manager/b"]]
        put("manager/b.c", '#include "b.h"\n')
        put("manager/main.h", "")
        put("common/store.c", '#include "store.h"\n#include "main.h"\n')
        assert cycles(include_graph(root)) == []  # main.h is not found
        put("manager/c.c", '#include "main.h"\n')
        assert ["manager/c", "manager/main"] in cycles(include_graph(root))
    print("ok: self-test: a cycle and a call into main are found")
    return True


def main(argv):
    args = argv[1:]
    if args == ["--self-test"]:
        return 0 if self_test() else 1
    show = "--list" in args
    args = [a for a in args if a != "--list"]
    build = None
    if "--objects" in args:
        i = args.index("--objects")
        build = args[i + 1]
        del args[i:i + 2]
    root = args[0] if args else os.path.join(os.path.dirname(__file__), "..")
    ok = check("includes", include_graph(root), show)
    if build:
        ok = check("symbols", symbol_graph(build, root), show) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
