#!/usr/bin/python3
"""The tail of AFKT23 Algorithm 1's switch count against Lemma 3.1 (docs/spec/afkt23.md §C1,
docs/spec/checks.md §3.4).

Lemma 3.1 splits time into m = ceil(log2 d) epochs on which the potential phi halves; the number of switches
Z_i in epoch i satisfies Pr[Z_i >= k + 1] <= (2/3)^k (each switch lands, with probability >= 1/3, on an
expert that survives the epoch). So the total Z = sum_i Z_i is stochastically below the sum of m independent
1 + Geom(1/3) variables, i.e. m + NegBin(m, 1/3), whose survival function is drawn dashed next to the
empirical P(Z >= z) of every point; Lemma A.2's budget K = 6m + 24 ln(1/beta) (Pr[Z >= K] <= beta) is the
dotted line beta(z) = exp(-(z - 6m)/24). An empirical curve above its dashed twin would contradict the lemma.

    /usr/bin/python3 experiments/scripts/plot_switch_tail.py runs/afkt23_halving \\
        --where learner.algorithm=svt-experts --where learner.epsilon=10 -o docs/figures/afkt23_switch_tail.png

Reads final_regret.csv (per-instance diagnostics: column "switches") and summary.csv (the point's d and swept
keys) of a dpregret run. Prints, per point, the mean switch count, m, the largest z with P(Z >= z) > 0, and
the largest ratio of the empirical survival to the bound (<= 1 expected up to Monte Carlo noise). Uses
Debian's python3 with python3-matplotlib and python3-scipy.
"""
import argparse
import csv
import math
import os
import sys
from collections import OrderedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from scipy.stats import nbinom  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="a dpregret run directory (final_regret.csv, summary.csv)")
    ap.add_argument("--where", action="append", default=[], help="COLUMN=VALUE filter on summary.csv (repeatable)")
    ap.add_argument("-o", "--out", required=True, help="output image")
    a = ap.parse_args()

    points = OrderedDict()
    with open(os.path.join(a.run, "summary.csv")) as f:
        for r in csv.DictReader(f):
            if any(r.get(k) != v for k, v in (w.split("=", 1) for w in a.where)):
                continue
            points.setdefault(r["point"], r)
    if not points:
        sys.exit("plot_switch_tail: no point of %s matches %s" % (a.run, a.where))
    z = {p: [] for p in points}
    with open(os.path.join(a.run, "final_regret.csv")) as f:
        rd = csv.DictReader(f)
        if "switches" not in rd.fieldnames:
            sys.exit("plot_switch_tail: %s/final_regret.csv has no 'switches' column" % a.run)
        for r in rd:
            if r["point"] in z:
                z[r["point"]].append(int(float(r["switches"])))

    fig, ax = plt.subplots(figsize=(7, 4.5))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    print("point  d        n     mean Z   m    max z  max P_emp/P_bound (z > m)")
    for j, (p, r) in enumerate(points.items()):
        zs = sorted(z[p])
        n = len(zs)
        d = int(float(r["d"]))
        m = max(1, math.ceil(math.log2(d)))
        top = max(zs) + 1
        grid = list(range(0, max(top, 6 * m + int(24 * math.log(n))) + 1))  # the dotted line down to 1/n
        emp = [sum(1 for v in zs if v >= g) / n for g in grid]
        # Z >= z  <=>  NegBin(m, 1/3) >= z - m  (failures before the m-th success).
        bound = [1.0 if g <= m else float(nbinom.sf(g - m - 1, m, 1.0 / 3.0)) for g in grid]
        ratio = max((e / b for g, e, b in zip(grid, emp, bound) if g > m and b > 0), default=0.0)
        c = colors[j % len(colors)]
        keep = [(g, e) for g, e in zip(grid, emp) if e > 0]
        ax.step([g for g, _ in keep], [e for _, e in keep], where="post", color=c,
                label="d = %d (m = %d), n = %d, mean Z = %.2f" % (d, m, n, sum(zs) / n))
        ax.plot(grid, bound, "--", color=c, lw=1)
        k_grid = [g for g in grid if g >= 6 * m]
        ax.plot(k_grid, [math.exp(-(g - 6 * m) / 24.0) for g in k_grid], ":", color=c, lw=1)
        print("%-6s %-8d %-5d %-8.3f %-4d %-6d %.3f" % (p, d, n, sum(zs) / n, m, max(zs), ratio))
    ax.set_yscale("log")
    ax.set_xlabel("z (switches)")
    ax.set_ylabel("P(Z >= z)")
    ax.set_ylim(bottom=0.5 / max(len(v) for v in z.values()), top=1.3)
    ttl = ", ".join(a.where) if a.where else a.run
    ax.set_title("Switch-count tail vs Lemma 3.1 (dashed: m + NegBin(m, 1/3); dotted: Lemma A.2)\n" + ttl, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(a.out, dpi=120)
    print("wrote", a.out)


if __name__ == "__main__":
    main()
