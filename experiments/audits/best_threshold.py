#!/usr/bin/python3
"""The best bound any threshold test can reach with n trials per side (docs/AUDITS.md "How tight").

    /usr/bin/python3 experiments/audits/best_threshold.py --law experts-tight [--n 1e6 1e7 1e8]
    /usr/bin/python3 experiments/audits/best_threshold.py --reference runs/ref/dp_ftrl_cube [--n 1e6 1e7]

An oracle that knows the law of the statistic S on both sides, and so the best threshold event {S >= x} or
{S <= x} (either orientation), spends all n trials per side on counting it; with the expected counts k = p n it
gets the bound that `dpregret audit` reports (Clopper-Pearson at confidence 1 - alpha, alpha/2 per side):

    eps-delta: ln((CP_lower(p1 n, n, alpha/2) - delta) / CP_upper(p0 n, n, alpha/2))
    gdp:       Phi^-1(CP_lower(p1 n, n, alpha/2)) - Phi^-1(CP_upper(p0 n, n, alpha/2))

maximised over x. No audit that selects its event from data can expect more. The law is exact for the two pairs
whose release is a shifted noise (--law), else the empirical law of a reference audit's statistic.npy (dpregret
audit --save-statistic): then the tails beyond about 50 / reference size are unresolved and the figure for n
near the reference size is optimistic (the same sample picks and counts the event); the output says so.

Needs numpy and scipy: Debian's python3-numpy and python3-scipy, for /usr/bin/python3.
"""
import argparse
import json
import math
import os
import sys

import numpy as np
from scipy.stats import beta, norm


def cp_lower(k, n, a):
    k = np.asarray(k, float)
    return np.where(k <= 0, 0.0, beta.ppf(a, np.maximum(k, 1e-300), np.maximum(n - k + 1, 1e-300)))


def cp_upper(k, n, a):
    k = np.asarray(k, float)
    return np.where(k >= n, 1.0, beta.isf(a, k + 1, np.maximum(n - k, 1e-300)))


def bound(p1, p0, n, kind, delta, alpha):
    lo, up = cp_lower(p1 * n, n, alpha / 2), cp_upper(p0 * n, n, alpha / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "gdp":
            v = norm.ppf(lo) - norm.ppf(up)
        else:
            v = np.log((lo - delta) / up)
    v = np.where(np.isfinite(v), v, 0.0)
    return float(np.max(np.maximum(v, 0.0)))


def laplace_tail(x, b):
    """P[X >= x], X ~ Laplace(b)."""
    x = np.asarray(x, float)
    return np.where(x >= 0, 0.5 * np.exp(-x / b), 1 - 0.5 * np.exp(x / b))


def laplace_difference_tail(x, b):
    """P[W >= x], W = X1 - X2 with X1, X2 ~ Laplace(b) independent: density (1 + |w|/b) e^{-|w|/b} / (4b)."""
    x = np.asarray(x, float)
    return np.where(x >= 0, np.exp(-x / b) * (2 + x / b) / 4, 1 - np.exp(x / b) * (2 - x / b) / 4)


def shifted(tail_a, tail_b, xs):
    """Tail probabilities of continuous S: (P_a[S >= x], P_b[S >= x], P_a[S <= x], P_b[S <= x])."""
    ga, gb = tail_a(xs), tail_b(xs)
    return ga, gb, 1 - ga, 1 - gb


def cube_tight(xs, eta=math.sqrt(0.5), b=2.0):
    """S = clip(-eta (l_1 + B), -1, 1), B ~ Laplace(b), l_1 = 1 (base) or -1 (neighbour), thresholds in [-1, 1]:
    P[S >= x] = P[B <= -x/eta - l_1], P[S <= x] = P[B >= -x/eta - l_1] (the clipped atoms at -1 and 1 included)."""
    le = [laplace_tail(-xs / eta - l1, b) for l1 in (1.0, -1.0)]
    return 1 - le[0], 1 - le[1], le[0], le[1]


# The exactly known pairs: S's tail probabilities on the two sides over a threshold grid, and the claim.
LAWS = {
    # dp_ftrl_experts_tight.toml: S = x_2(0), a monotone function of l_1(1) - l_1(0) + (b_1 - b_0), the two leaf
    # draws Laplace(2); the flip moves the difference from +1 to -1. eps = 1.
    "experts-tight": (lambda: shifted(lambda x: laplace_difference_tail(x - 1, 2.0),
                                      lambda x: laplace_difference_tail(x + 1, 2.0), np.linspace(-60, 60, 24001)),
                      1.0, 0.0, "eps-delta"),
    # dp_ftrl_cube_tight.toml: eta = sqrt(d / T) = sqrt(1/2), leaf Laplace(2), l_1 = 1 negated. eps = 1.
    "cube-tight": (lambda: cube_tight(np.linspace(-1, 1, 20001)), 1.0, 0.0, "eps-delta"),
}


def best_over(tails, ns, kind, delta, alpha):
    ge_a, ge_b, le_a, le_b = tails
    rows = []
    for n in ns:
        best = 0.0
        for p1, p0 in ((ge_a, ge_b), (ge_b, ge_a), (le_a, le_b), (le_b, le_a)):
            best = max(best, bound(p1, p0, n, kind, delta, alpha))
        rows.append((n, best))
    return rows


def from_law(name, ns, alpha):
    tails, claim, delta, kind = LAWS[name]
    return claim, kind, best_over(tails(), ns, kind, delta, alpha), "exact law"


def from_reference(d, ns, alpha, kind_arg):
    with open(os.path.join(d, "audit.json")) as fh:
        j = json.load(fh)
    s = np.load(os.path.join(d, "statistic.npy"))
    a, b = np.sort(s[0]), np.sort(s[1])
    kind = kind_arg or j.get("bound", {}).get("kind", "eps-delta")
    claim = j["claimed"]["gdp_mu"] if kind == "gdp" else j["claimed"]["epsilon"]
    claim = float("inf") if claim in ("inf", None) else float(claim)
    delta = float(j["claimed"]["delta"])
    xs = np.unique(np.concatenate([a, b]))
    if len(xs) > 4000:  # every distinct value is too many; pooled quantiles reach the reference's tails
        q = np.concatenate([np.geomspace(1.0 / len(xs), 0.5, 2000), 1 - np.geomspace(1.0 / len(xs), 0.5, 2000)])
        xs = np.unique(np.quantile(np.concatenate([a, b]), np.clip(q, 0, 1)))
    tails = ((len(a) - np.searchsorted(a, xs, "left")) / len(a), (len(b) - np.searchsorted(b, xs, "left")) / len(b),
             np.searchsorted(a, xs, "right") / len(a), np.searchsorted(b, xs, "right") / len(b))
    rows = best_over(tails, ns, kind, delta, alpha)
    return claim, kind, rows, f"empirical law of {len(a)} + {len(b)} reference trials"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--law", choices=sorted(LAWS), help="an exactly known pair")
    g.add_argument("--reference", help="an audit directory written with --save-statistic")
    ap.add_argument("--n", nargs="+", type=float, default=[1e6, 1e7, 1e8], help="trials per side")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--bound", choices=["eps-delta", "gdp"], help="with --reference: default the audit's own")
    a = ap.parse_args()
    if not (0 < a.alpha < 1):
        sys.exit("--alpha must be in (0, 1)")
    ns = [int(n) for n in a.n]
    if a.law:
        claim, kind, rows, src = from_law(a.law, ns, a.alpha)
    else:
        claim, kind, rows, src = from_reference(a.reference, ns, a.alpha, a.bound)
    name = "mu" if kind == "gdp" else "eps"
    print(f"# best {kind} bound of a threshold test ({src}); claimed {name} = {claim:.6g}")
    for n, best in rows:
        ratio = best / claim if claim > 0 and math.isfinite(claim) else float("nan")
        print(f"n = {n:.0e}: best {name}_lb = {best:.4f} ({ratio:.4f} of the claim)")


if __name__ == "__main__":
    main()
