#!/usr/bin/env python3
"""docs/clients.md says what the zoo finds: its table has one row per client
of tests/clients/defs, and in each scenario column a cell that starts with
a check mark exactly when expected.txt lists no failure for that client and
scenario, and "–" where the client does not run the scenario.

usage: docs_check.py DOC DEFS_DIR EXPECTED
Exit status 0 when all agree; each disagreement is printed otherwise.
"""
import os
import re
import sys

SCENARIOS = ("plain", "tls", "h2", "h2c")


def scenarios_of(path):
    """The scenarios a definition runs (ZOO_SCENARIOS, default plain tls)."""
    with open(path) as f:
        m = re.search(r'^ZOO_SCENARIOS="([^"]*)"', f.read(), re.M)
    return set((m.group(1) if m else "plain tls").split())


def main():
    doc, defs, expected = sys.argv[1:4]
    clients = {f[:-3]: scenarios_of(os.path.join(defs, f))
               for f in os.listdir(defs) if f.endswith(".sh")}
    failing = set()
    with open(expected) as f:
        for line in f:
            parts = line.split()
            if parts and not parts[0].startswith("#"):
                failing.add((parts[0], parts[1].split(".")[0]))
    rows = {}
    with open(doc) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if line.startswith("| ") and cells[0] in clients:
                if cells[0] in rows:
                    print(f"{doc}: {cells[0]} has two rows")
                rows[cells[0]] = cells[-len(SCENARIOS):]
    problems = [f"{doc}: no row for {c}" for c in sorted(clients)
                if c not in rows]
    for client, cells in sorted(rows.items()):
        for scenario, cell in zip(SCENARIOS, cells):
            if scenario not in clients[client]:
                want = "–"
                good = cell == want
            elif (client, scenario) in failing:
                want = "the problems' letters"
                good = not cell.startswith("✓") and cell != "–"
            else:
                want = "✓"
                good = cell.startswith("✓")
            if not good:
                problems.append(f"{doc}: {client} {scenario}: '{cell}', "
                                f"expected.txt says {want}")
    for p in problems:
        print(p)
    print(f"docs_check: {len(rows)} clients in {doc}, {len(problems)} "
          "disagreements")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
