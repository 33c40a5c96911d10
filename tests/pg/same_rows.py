#!/usr/bin/env python3
"""same_rows.py SQLITE_DB TABLE... - every row of each table or view in the
SQLite central database and in the PostgreSQL store (psql with the
environment's PGHOST/PGUSER/PGDATABASE/PGPASSWORD) must be the same, as a
multiset: every column but the ids (numbered by each engine as it merges),
numbers compared as the doubles they are (PostgreSQL prints the shortest
text that reads back as the same double). Prints the counts; exit 1 and the
first differences when they differ."""
import collections
import sqlite3
import subprocess
import sys


def canon(v):
    """A value as text both engines agree on."""
    if v is None:
        return "\\N"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() and abs(v) < 2**53 else repr(v)
    return v


def canon_pg(s):
    if s == "\\N":
        return s
    try:
        return str(int(s))
    except ValueError:
        pass
    try:
        return canon(float(s))
    except ValueError:
        return s


def main():
    db = sqlite3.connect(sys.argv[1])
    bad = 0
    for table in sys.argv[2:]:
        cols = [r[1] for r in db.execute(f"SELECT * FROM pragma_table_info('{table}')")
                if r[1] != "id" and not r[1].endswith("_id")]
        sql = f"SELECT {', '.join(cols)} FROM {table}"
        lite = collections.Counter(tuple(canon(v) for v in r) for r in db.execute(sql))
        out = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-F", "\x1f", "-R", "\x1e",
                              "-P", "null=\\N", "-v", "ON_ERROR_STOP=1", "-c", sql],
                             check=True, capture_output=True, text=True).stdout
        pg = collections.Counter(tuple(canon_pg(v) for v in r.split("\x1f"))
                                 for r in out.rstrip("\n").split("\x1e") if r)
        n = sum(lite.values())
        if lite != pg or n == 0:
            bad += 1
            print(f"{table}: SQLite {n} rows, PostgreSQL {sum(pg.values())}")
            for row in list((lite - pg).keys())[:3]:
                print("  only in SQLite:    ", dict(zip(cols, row)))
            for row in list((pg - lite).keys())[:3]:
                print("  only in PostgreSQL:", dict(zip(cols, row)))
        else:
            print(f"{table}: {n} rows, the same in both ({len(cols)} columns)")
    sys.exit(1 if bad else 0)


main()
