#!/usr/bin/python3
"""mwu_scipy.py DRIVER - the Mann-Whitney U test of manager/stats.c against
scipy.stats.mannwhitneyu (two-sided, its default method: exact when a
sample has at most 8 values and nothing is tied, else the normal
approximation with the tie and continuity corrections), on 400 seeded
random cases: small and large samples, shifted and not, with ties (values
rounded) and without, a sample against itself, every value the same.
Skips (77) without Debian's python3-scipy."""
import random
import subprocess
import sys

try:
    from scipy.stats import mannwhitneyu
except ImportError:
    print("SKIP: python3-scipy is not installed")
    sys.exit(77)

rng = random.Random(20261122)
cases = []
for k in range(400):
    na = rng.choice([1, 2, 3, 5, 8, 9, 12, 30, 200, 1500])
    nb = rng.choice([1, 2, 4, 7, 8, 10, 25, 100, 2000])
    if min(na, nb) <= 8:  # SciPy's exact p takes minutes beyond ~100
        na, nb = min(na, 100), min(nb, 100)
    shift = rng.choice([0, 0.1, 0.5, 2])
    a = [rng.lognormvariate(0, 1) for _ in range(na)]
    b = [rng.lognormvariate(0, 1) + shift for _ in range(nb)]
    if k % 3 == 0:  # ties: milliseconds rounded as a coarse clock would
        a = [round(x, 1) for x in a]
        b = [round(x, 1) for x in b]
    if k % 50 == 7:
        b = list(a)  # a sample against itself
    if k % 50 == 8:
        a, b = [2.5] * na, [2.5] * nb  # nothing but ties
    cases.append((a, b))

text = "".join(f"{len(a)} {len(b)}\n{' '.join(map(repr, a + b))}\n" for a, b in cases)
out = subprocess.run([sys.argv[1]], input=text, capture_output=True, text=True, check=True)
answers = out.stdout.split("\n")
exact = worst = 0
for (a, b), line in zip(cases, answers):
    u, p, is_exact = line.split()
    u, p = float(u), float(p)
    want = mannwhitneyu(a, b, alternative="two-sided")
    assert u == want.statistic, (len(a), len(b), u, want.statistic)
    err = abs(p - want.pvalue)
    assert err <= 1e-9 * max(want.pvalue, 1e-300) + 1e-13, (len(a), len(b), p, want.pvalue)
    worst = max(worst, err)
    exact += int(is_exact)
assert len(answers) - 1 == len(cases)
assert exact > 50, exact  # both methods were exercised
print(f"ok: {len(cases)} cases ({exact} exact) agree with SciPy "
      f"(largest p difference {worst:.2g})")
