#!/usr/bin/python3
"""Plot of a `dpregret audit` or `dpregret audit-samples` directory: the empirical privacy region and the (eps, delta)
curve.

    /usr/bin/python3 experiments/scripts/plot_audit.py runs/audit-.../ [--out audit.png]

Left: each side's tail frequencies P[S >= x] and P[S <= x] of the audit statistic S over thresholds x (base
sequence D solid, neighbour D' dashed). Right: every threshold event E as the point (P_D'[E], P_D[E]) (and its
mirror (P_D[E], P_D'[E])), with the boundary of the claimed guarantee, p = e^eps p' + delta (with the gdp bound:
the Gaussian tradeoff p = Phi(Phi^-1(p') + mu)), and in green the claimed trade-off curve 1 - f(p') that audit.json's
"fdp" test uses (the learner's own noise curve where the auditor knows it, docs/AUDITS.md "The claimed trade-off
curve"): a private learner keeps every event's true point below both. The
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
            rows = [{k: float(v) if v != "" else math.nan for k, v in r.items()} for r in csv.DictReader(f)]
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
    # The claimed trade-off curve f (audit.json "fdp", privacy_region.csv's f_* columns): a test that rejects on E
    # with type-I error P_D'[E] has type-II error 1 - P_D[E] >= f(P_D'[E]), so every true point lies below 1 - f.
    claimed = sorted((r[c], 1.0 - r["f_" + c]) for r in rows for c in ("base_ge", "neighbour_ge", "base_le", "neighbour_le")
                     if not math.isnan(r.get("f_" + c, math.nan)))
    if claimed:
        fdp = audit.get("fdp", {})
        ax2.plot([p[0] for p in claimed], [p[1] for p in claimed], "g-", lw=1,
                 label=f"claimed trade-off 1 - f (f-DP test: {fdp.get('verdict', '?')})")
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
    fdp_verdict = audit.get("fdp", {}).get("verdict")
    fdp_part = f" (f-DP test: {fdp_verdict})" if fdp_verdict and fdp_verdict != "not tested" else ""
    fig.suptitle(f"{who}: {audit['verdict']}{fdp_part}, {trials} trials per side")
    fig.tight_layout()
    out = a.out or os.path.join(a.dir, "audit.png")
    fig.savefig(out, dpi=120)
    print(out)


if __name__ == "__main__":
    main()
