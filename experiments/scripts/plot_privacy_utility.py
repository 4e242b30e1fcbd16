#!/usr/bin/python3
"""Privacy-utility plot from a dpregret summary.csv: regret at t = T against epsilon.

For every private algorithm in the file, draws the mean regret at the final checkpoint against
epsilon (log axis) with two quantile bands (q05-q95 and q25-q75, from the per-instance final
regrets), and every non-private algorithm (epsilon = inf) as a horizontal reference line with its
own q05-q95 band. Uses Debian's python3 with python3-matplotlib (scripts/deps.sh installs it).

    /usr/bin/python3 experiments/scripts/plot_privacy_utility.py runs/quickstart/summary.csv [-o out.png]
"""
import argparse
import csv
import math
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load_final_rows(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"{path}: no rows")
    need = {"point", "algorithm", "epsilon", "T", "t", "mean", "q05", "q25", "q50", "q75", "q95", "instances"}
    missing = need - set(rows[0])
    if missing:
        sys.exit(f"{path}: missing columns {sorted(missing)}")
    # keep the final checkpoint (t == T) of every point
    return [r for r in rows if int(r["t"]) == int(r["T"])]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("summary", help="summary.csv written by `dpregret run`")
    ap.add_argument("-o", "--out", help="output image (PNG or SVG); default: privacy_utility.png next to the CSV")
    args = ap.parse_args()

    rows = load_final_rows(args.summary)
    out = args.out or os.path.join(os.path.dirname(os.path.abspath(args.summary)), "privacy_utility.png")

    private = defaultdict(list)
    reference = []
    for r in rows:
        eps = float(r["epsilon"])
        label = r["algorithm"]
        # distinguish points of one algorithm that differ in another swept key (columns "section.key")
        extra = [k for k in r if "." in k and k not in ("learner.epsilon", "learner.algorithm")]
        if extra:
            label += " (" + ", ".join(f"{k.split('.', 1)[1]}={r[k]}" for k in extra) + ")"
        if math.isinf(eps):
            reference.append((label, r))
        else:
            private[label].append((eps, r))

    fig, ax = plt.subplots(figsize=(7.5, 4.8), dpi=130)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    all_eps = [e for pts in private.values() for e, _ in pts]
    for n, (label, pts) in enumerate(sorted(private.items())):
        pts.sort(key=lambda x: x[0])
        eps = [e for e, _ in pts]
        col = colors[n % len(colors)]
        f = lambda key: [float(r[key]) for _, r in pts]  # noqa: E731
        ax.fill_between(eps, f("q05"), f("q95"), color=col, alpha=0.15, linewidth=0, label=f"{label}: q05-q95")
        ax.fill_between(eps, f("q25"), f("q75"), color=col, alpha=0.30, linewidth=0, label=f"{label}: q25-q75")
        ax.plot(eps, f("mean"), "o-", color=col, label=f"{label}: mean")
    for n, (label, r) in enumerate(reference):
        col = colors[(len(private) + n) % len(colors)]
        if all_eps:
            lo, hi = min(all_eps), max(all_eps)
            ax.hlines(float(r["mean"]), lo, hi, colors=col, linestyles="--", label=f"{label} (non-private): mean")
            ax.fill_between([lo, hi], [float(r["q05"])] * 2, [float(r["q95"])] * 2, color=col, alpha=0.12,
                            linewidth=0)
    if all_eps:
        ax.set_xscale("log")
    first = rows[0]
    ax.set_xlabel("epsilon (privacy parameter)")
    ax.set_ylabel(f"regret at T = {first['T']}")
    ax.set_title(f"Privacy-utility: regret vs epsilon ({first['instances']} instances per point, d = {first.get('d', '?')})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(out)
    print(f"privacy-utility plot written to {out}")


if __name__ == "__main__":
    main()
