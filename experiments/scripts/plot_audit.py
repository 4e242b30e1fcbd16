#!/usr/bin/python3
"""Plot of a `dpregret audit` or `dpregret audit-samples` directory: the empirical privacy region and the (eps, delta)
curve.

    /usr/bin/python3 experiments/scripts/plot_audit.py runs/audit-.../ [--out audit.png]

Left: each side's tail frequencies P[S >= x] and P[S <= x] of the audit statistic S over thresholds x (base
sequence D solid, neighbour D' dashed). Right: every threshold event E as the point (P_D'[E], P_D[E]) (and its
mirror (P_D[E], P_D'[E])), with the boundary of the claimed guarantee, p = e^eps p' + delta (with the gdp bound:
the Gaussian tradeoff p = Phi(Phi^-1(p') + mu)): a private learner keeps every event's true point below it. The
frequencies are descriptive (all trials); the bound in audit.json is from the evaluation share only, with
Clopper-Pearson intervals. Third panel (audit.json's "curve"): eps_lb(delta) at each delta of the grid, all at once at
the curve's confidence, against the claim's eps(delta) (mu-GDP's curve, or the claimed eps from the claimed delta
on); a point above the claim's curve is a violation of the claimed trade-off. Uses Debian's python3-matplotlib.
"""
import argparse
import csv
import json
import math
import os
import sys
from statistics import NormalDist


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", help="an audit directory (audit.json, privacy_region.csv)")
    ap.add_argument("--out", help="image file (default DIR/audit.png)")
    a = ap.parse_args()
    try:
        with open(os.path.join(a.dir, "audit.json")) as f:
            audit = json.load(f)
        with open(os.path.join(a.dir, "privacy_region.csv")) as f:
            rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(f)]
    except (OSError, ValueError) as e:
        sys.exit(f"plot_audit.py: cannot read the audit in {a.dir}: {e}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    eps = audit["claimed"]["epsilon"]
    eps = math.inf if eps == "inf" else float(eps)
    delta = float(audit["claimed"]["delta"])
    x = [r["threshold"] for r in rows]
    curve = audit.get("curve", {}).get("points", [])
    fig, axes = plt.subplots(1, 3 if curve else 2, figsize=(16 if curve else 11, 4.5))
    ax1, ax2 = axes[0], axes[1]
    ax1.plot(x, [r["base_ge"] for r in rows], "C0-", label="D: P[S >= x]")
    ax1.plot(x, [r["neighbour_ge"] for r in rows], "C0--", label="D': P[S >= x]")
    ax1.plot(x, [r["base_le"] for r in rows], "C1-", label="D: P[S <= x]")
    ax1.plot(x, [r["neighbour_le"] for r in rows], "C1--", label="D': P[S <= x]")
    ax1.set_xlabel("threshold x on the statistic S")
    ax1.set_ylabel("fraction of trials")
    ax1.set_yscale("log")
    ax1.legend(fontsize=8)
    pts = []
    for r in rows:
        pts += [(r["neighbour_ge"], r["base_ge"]), (r["base_ge"], r["neighbour_ge"]),
                (r["neighbour_le"], r["base_le"]), (r["base_le"], r["neighbour_le"])]
    ax2.scatter([p[0] for p in pts], [p[1] for p in pts], s=6, c="k", label="threshold events")
    grid = [i / 400 for i in range(401)]
    gdp = audit.get("bound", {}).get("kind") == "gdp"
    N = NormalDist()

    def gauss(mu, g):
        return 0.0 if g <= 0 else 1.0 if g >= 1 else N.cdf(N.inv_cdf(g) + mu)

    if gdp:
        mu = float(audit["claimed"]["gdp_mu"])
        ax2.plot(grid, [gauss(mu, g) for g in grid], "r-", label=f"claimed mu = {mu:.4g} (Gaussian DP)")
        ax2.plot([gauss(mu, g) for g in grid], grid, "r-")
        mlb = float(audit["mu_lb"])
        ax2.plot(grid, [gauss(mlb, g) for g in grid], "b:", label=f"mu_lb = {mlb:.3g} (evaluation share)")
    elif math.isfinite(eps):
        ax2.plot(grid, [min(1.0, math.exp(eps) * g + delta) for g in grid], "r-",
                 label=f"claimed eps = {eps:.4g}, delta = {delta:.2g}")
        ax2.plot([min(1.0, math.exp(eps) * g + delta) for g in grid], grid, "r-")
    lb = audit["epsilon_lb"]
    lb = math.inf if lb == "inf" else float(lb)
    if not gdp and math.isfinite(lb):
        ax2.plot(grid, [min(1.0, math.exp(lb) * g) for g in grid], "b:", label=f"eps_lb = {lb:.3g} (evaluation share)")
    ax2.set_xlabel("P_D'[E]")
    ax2.set_ylabel("P_D[E]")
    ax2.set_xlim(0, 1)
    ax2.set_ylim(0, 1)
    ax2.legend(fontsize=8, loc="lower right")
    if curve:
        ax3 = axes[2]
        num = lambda v: math.inf if v == "inf" else float(v)  # noqa: E731
        ds = [max(float(p["delta"]), 1e-10) for p in curve]  # delta = 0 drawn at 1e-10
        lbs = [num(p["epsilon_lb"]) for p in curve]
        claims = [num(p["claimed_epsilon"]) for p in curve]
        ax3.plot(ds, lbs, "bo-", label=f"eps_lb(delta), {100 * audit['curve']['confidence']:.3g}% for all points")
        finite = [(d, c) for d, c in zip(ds, claims) if math.isfinite(c)]
        if finite:
            ax3.plot([d for d, _ in finite], [c for _, c in finite], "r-", label=f"claim: {audit['curve']['claim']}")
        ax3.set_xscale("log")
        ax3.set_xlabel("delta (0 drawn at 1e-10)")
        ax3.set_ylabel("eps")
        ax3.set_title(f"(eps, delta) curve: {audit['curve']['verdict']}", fontsize=10)
        ax3.legend(fontsize=8)
    if "learner" in audit:
        who = audit["learner"]["algorithm"] + ("" if audit["learner"]["planted"] == "none"
                                               else f" (planted {audit['learner']['planted']})")
        trials = audit["trials_per_side"]
    else:  # dpregret audit-samples
        who = f"samples {audit['samples']['a']['source']} vs {audit['samples']['b']['source']}"
        trials = min(audit["samples"]["a"]["values"], audit["samples"]["b"]["values"])
    fig.suptitle(f"{who}: {audit['verdict']}, {trials} trials per side")
    fig.tight_layout()
    out = a.out or os.path.join(a.dir, "audit.png")
    fig.savefig(out, dpi=120)
    print(out)


if __name__ == "__main__":
    main()
