#!/usr/bin/python3
"""Log-log slope of a learner diagnostic against a swept key, one fit per group: the n-exponents of a quantity the
run records per instance (final_regret.csv's diagnostic columns), e.g. the size of the released tree noise.

For every point of the run, the diagnostic's mean over instances m_j and its standard error s_j; per group, the
least-squares slope of log m_j against log x_j with its delta-method standard deviation

    sd(slope) = sqrt( sum_j w_j^2 (s_j / m_j)^2 ),  w_j = (log x_j - mean log x) / S_xx,

as experiments/scripts/plot_scaling.py does for the regret.

    /usr/bin/python3 experiments/scripts/fit_diagnostic.py runs/env21_noise_n --x adversary.d --y max_noise_l2 \\
        --group learner.noise --group learner.calibration [--fit-min 16]

Prints a Markdown table: group, the values m_j, the slope and its sd. Uses Debian's python3 only.
"""
import argparse
import csv
import json
import math
import os
from collections import OrderedDict, defaultdict


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="a dpregret run directory (run.json, final_regret.csv)")
    ap.add_argument("--x", required=True, help="swept key on the x axis, e.g. adversary.d")
    ap.add_argument("--y", required=True, help="diagnostic column of final_regret.csv, e.g. max_noise_l2")
    ap.add_argument("--group", action="append", default=[], help="swept key that separates the fits (repeatable)")
    ap.add_argument("--fit-min", type=float, default=-math.inf, help="fit only points with x >= this")
    a = ap.parse_args()

    with open(os.path.join(a.run, "run.json")) as f:
        points = {p["point"]: p for p in json.load(f)["points"]}
    values = defaultdict(list)
    with open(os.path.join(a.run, "final_regret.csv")) as f:
        for row in csv.DictReader(f):
            if row.get(a.y, "") == "":
                continue
            values[int(row["point"])].append(float(row[a.y]))
    if not values:
        raise SystemExit(f"no column {a.y!r} with values in {a.run}/final_regret.csv")

    groups = OrderedDict()
    for idx in sorted(values):
        sw = points[idx]["swept"]
        if a.x not in sw:
            raise SystemExit(f"{a.x!r} is not a swept key of point {idx} (swept: {', '.join(sw)})")
        v = values[idx]
        n = len(v)
        mean = sum(v) / n
        sem = math.sqrt(sum((u - mean) ** 2 for u in v) / (n - 1) / n) if n > 1 else float("nan")
        key = tuple(sw.get(g, "") for g in a.group)
        groups.setdefault(key, []).append((float(sw[a.x]), mean, sem))

    print(f"| {' | '.join(a.group) or 'all'} | {a.y} by {a.x} | slope | sd |")
    print(f"|{'---|' * max(1, len(a.group))}---|---:|---:|")
    for key, pts in groups.items():
        pts.sort()
        fit = [p for p in pts if p[0] >= a.fit_min and p[1] > 0]
        lx = [math.log(p[0]) for p in fit]
        ly = [math.log(p[1]) for p in fit]
        mx = sum(lx) / len(lx)
        sxx = sum((u - mx) ** 2 for u in lx)
        slope = sum((u - mx) * (w - sum(ly) / len(ly)) for u, w in zip(lx, ly)) / sxx
        sd = math.sqrt(sum(((u - mx) / sxx) ** 2 * (p[2] / p[1]) ** 2 for u, p in zip(lx, fit)))
        vals = ", ".join(f"{p[0]:g}: {p[1]:.3g}" for p in pts)
        print(f"| {' | '.join(key) or 'all'} | {vals} | {slope:.3f} | {sd:.3f} |")


if __name__ == "__main__":
    main()
