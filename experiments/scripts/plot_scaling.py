#!/usr/bin/python3
"""Scaling plot from one or more dpregret summary.csv files: regret against any column, one curve per group.

Generic over experiments: x is any column of the summary (a swept key "section.key" such as run.rounds,
adversary.d or learner.epsilon, or a built-in column such as T, d, epsilon, t), and curves are grouped
by other columns. By default the final checkpoint (t == T) of every point is used, both axes are
logarithmic, and a least-squares slope of log(mean) against log(x) is fitted per curve and shown in
the legend with its Monte Carlo standard deviation,

    sd(slope) = sqrt( sum_j w_j^2 (sem_j / mean_j)^2 ),  w_j = (log x_j - mean log x) / S_xx,

(delta method; exact for independent points, conservative-ish for points that share random numbers).
Rows whose x is empty (the key does not apply, e.g. learner.epsilon of a non-private twin) or infinite
(epsilon = inf) are drawn as horizontal dashed reference lines in the colour of their group.

    /usr/bin/python3 experiments/scripts/plot_scaling.py runs/x/summary.csv --x run.rounds \\
        --group learner.epsilon [--group adversary.d] [--where adversary.d=8] [--fit-min 4096] -o T.png
    /usr/bin/python3 experiments/scripts/plot_scaling.py runs/x/summary.csv --x learner.epsilon \\
        --group run.rounds -o eps.png

Columns (dpregret run): point, algorithm, epsilon (the guarantee the noise provides), delta, d, T, t,
instances, mean, std, sem, q05..q95, ..., then one column per swept key. Uses Debian's python3 with
python3-matplotlib only.
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


def load(paths):
    rows = []
    for p in paths:
        with open(p, newline="") as f:
            part = list(csv.DictReader(f))
        if not part:
            sys.exit(f"{p}: no rows")
        for r in part:
            r["_file"] = p
        rows += part
    return rows


def number(s):
    """float(s), +inf for 'inf', None for '' (a key that does not apply) or text."""
    if s is None or s == "":
        return None
    try:
        return float(s)
    except ValueError:
        return None


def fit_loglog(xs, ms, ses):
    """Least-squares slope of log m on log x, its MC sd and the intercept."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(m) for m in ms]
    n = len(lx)
    xb, yb = sum(lx) / n, sum(ly) / n
    sxx = sum((v - xb) ** 2 for v in lx)
    if n < 2 or sxx == 0:
        return None
    w = [(v - xb) / sxx for v in lx]
    b = sum(wi * yi for wi, yi in zip(w, ly))
    var = sum((wi * se / m) ** 2 for wi, se, m in zip(w, ses, ms))
    return b, math.sqrt(var), yb - b * xb


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("summary", nargs="+", help="summary.csv file(s) written by `dpregret run`")
    ap.add_argument("--x", required=True, help="column on the x axis (e.g. run.rounds, adversary.d, learner.epsilon, T)")
    ap.add_argument("--y", default="mean", help="column on the y axis (default mean; error bars = sem only for mean)")
    ap.add_argument("--group", action="append", default=None,
                    help="column(s) defining the curves (repeatable); default: algorithm and every other swept "
                         "column that varies")
    ap.add_argument("--color", action="append", default=None,
                    help="column(s) that set a curve's colour (repeatable); default: the group columns except the "
                         "algorithm. The remaining group columns set the marker")
    ap.add_argument("--where", action="append", default=[], metavar="COL=VALUE",
                    help="keep only rows with COL equal to VALUE (text compare; numbers compared as numbers)")
    ap.add_argument("--t", default="final", help="checkpoint: final (t == T, default), all, or a round number")
    ap.add_argument("--linx", action="store_true", help="linear x axis")
    ap.add_argument("--x-log2", action="store_true",
                    help="use log2(x) as x (e.g. --x adversary.d --x-log2: the fitted slope is the exponent b of "
                         "regret ~ (log d)^b, as in AFKT23's log^2 d / eps bounds)")
    ap.add_argument("--liny", action="store_true", help="linear y axis")
    ap.add_argument("--no-fit", action="store_true", help="no slope fit")
    ap.add_argument("--fit-min", type=float, default=-math.inf, help="fit only points with x >= this")
    ap.add_argument("--fit-max", type=float, default=math.inf, help="fit only points with x <= this")
    ap.add_argument("--ref-slope", type=float, action="append", default=[],
                    help="draw a dotted guide of this slope through the first curve's first point (repeatable)")
    ap.add_argument("--band", action="store_true", help="shade q05-q95 of the per-instance values")
    ap.add_argument("--excess", action="store_true",
                    help="plot y minus the reference row of the same colour group (the row whose x is empty or inf, "
                         "e.g. the non-private twin): the price of privacy; sem combined in quadrature")
    ap.add_argument("--ref", default=None, metavar="COL=VALUE",
                    help="plot y minus the row with COL=VALUE and otherwise the same swept keys and x (e.g. "
                         "learner.epsilon=inf: the private run's excess over its noise-free twin); those rows are "
                         "not drawn; sem combined in quadrature")
    ap.add_argument("--title", default=None)
    ap.add_argument("--ylabel", default=None)
    ap.add_argument("--slopes-csv", default=None, help="also write the fitted slopes (group, slope, sd, points)")
    ap.add_argument("--dpi", type=int, default=120, help="image resolution (default 120)")
    ap.add_argument("-o", "--out", help="output image (PNG or SVG); default scaling_<x>.png next to the first CSV")
    args = ap.parse_args()

    rows = load(args.summary)
    cols = list(rows[0].keys())
    for c in [args.x, args.y] + (args.group or []):
        if c not in cols:
            sys.exit(f"no column {c!r}; columns: {', '.join(k for k in cols if not k.startswith('_'))}")
    if args.x_log2:
        for r in rows:
            v = number(r[args.x])
            if v is not None and v > 0 and math.isfinite(v):
                r[args.x] = repr(math.log2(v))

    # checkpoint selection
    if args.x == "t" or args.t == "all":
        pass
    elif args.t == "final":
        rows = [r for r in rows if r["t"] == r["T"]]
    else:
        rows = [r for r in rows if int(r["t"]) == int(args.t)]
    # filters
    for cond in args.where:
        if "=" not in cond:
            sys.exit(f"--where {cond!r}: expected COL=VALUE")
        k, v = cond.split("=", 1)
        if k not in cols:
            sys.exit(f"--where: no column {k!r}")
        nv = number(v)
        rows = [r for r in rows if r[k] == v or (nv is not None and number(r[k]) == nv)]
    if not rows:
        sys.exit("no rows left after --t / --where")

    swept = [c for c in cols if "." in c and not c.startswith("_")]
    if args.ref:
        if "=" not in args.ref or args.y != "mean":
            sys.exit("--ref: expected COL=VALUE (and --y mean)")
        rk, rv = args.ref.split("=", 1)
        if rk not in cols:
            sys.exit(f"--ref: no column {rk!r}")
        rnv = number(rv)

        def is_ref(r):
            return r[rk] == rv or (rnv is not None and number(r[rk]) == rnv)

        def twin_key(r):
            return tuple(r[c] for c in swept if c != rk) + (r["t"],)

        twins = {twin_key(r): r for r in rows if is_ref(r)}
        kept = []
        for r in rows:
            if is_ref(r):
                continue
            ref = twins.get(twin_key(r))
            if ref is None:
                sys.exit(f"--ref: no row with {args.ref} for {dict((c, r[c]) for c in swept if c != rk)}")
            r = dict(r)
            r["mean"] = str(float(r["mean"]) - float(ref["mean"]))
            r["sem"] = str(math.hypot(float(r["sem"]), float(ref["sem"])))
            if args.liny or float(r["mean"]) > 0:
                kept.append(r)
        rows = kept
        if not rows:
            sys.exit("--ref: no positive excess left to draw on a log axis (try --liny)")
    if args.group is None:
        fixed = {cond.split("=", 1)[0] for cond in args.where}
        varying = [c for c in swept if c not in (args.x, "learner.algorithm") and c not in fixed
                   and len({r[c] for r in rows}) > 1]
        group_cols = ["algorithm"] + varying
    else:
        group_cols = args.group
    color_cols = args.color or [c for c in group_cols if c not in ("algorithm", "learner.algorithm")]
    marker_cols = ["algorithm"] + [c for c in group_cols if c not in color_cols and c not in ("algorithm",
                                                                                          "learner.algorithm")]

    def short(c):
        return c.split(".", 1)[1] if "." in c else c

    several_algos = len({r["algorithm"] for r in rows}) > 1
    name_in_group = "algorithm" in group_cols or "learner.algorithm" in group_cols

    def label_of(r):
        parts = [r["algorithm"]] if several_algos and not name_in_group else []
        for c in group_cols:
            if r[c] == "":
                continue
            parts.append(r[c] if c in ("algorithm", "learner.algorithm") else f"{short(c)}={r[c]}")
        return ", ".join(parts)

    curves = OrderedDict()   # label -> list of rows (finite x)
    refs = OrderedDict()     # label -> list of rows (x empty or inf)
    for r in rows:
        x = number(r[args.x])
        (refs if x is None or math.isinf(x) else curves).setdefault(label_of(r), []).append(r)

    def color_key(r):
        return tuple(r[c] for c in color_cols)

    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    color_of = OrderedDict()
    for r in rows:
        color_of.setdefault(color_key(r), palette[len(color_of) % len(palette)])
    marker_keys = list(OrderedDict.fromkeys(tuple(r[c] for c in marker_cols) for r in rows))
    markers = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">"]

    def sort_key(r):
        return number(r[args.x])

    ref_of = {}
    for pts in refs.values():
        for r in pts:
            ref_of.setdefault(color_key(r), r)
    if args.excess:
        if args.y != "mean":
            sys.exit("--excess needs --y mean")
        for label in list(curves):
            kept = []
            for r in curves[label]:
                ref = ref_of.get(color_key(r))
                if ref is None:
                    sys.exit(f"--excess: no reference row (x empty or inf) for {label!r}")
                r = dict(r)
                r["mean"] = str(float(r["mean"]) - float(ref["mean"]))
                r["sem"] = str(math.hypot(float(r["sem"]), float(ref["sem"])))
                if args.liny or float(r["mean"]) > 0:
                    kept.append(r)
            curves[label] = kept
        refs.clear()

    fig, ax = plt.subplots(figsize=(7.8, 5.0), dpi=args.dpi)
    all_x = []
    slopes = []
    for label, pts in curves.items():
        pts.sort(key=sort_key)
        xs = [number(r[args.x]) for r in pts]
        ys = [float(r[args.y]) for r in pts]
        ses = [float(r["sem"]) for r in pts] if args.y == "mean" else [0.0] * len(pts)
        all_x += xs
        col = color_of[color_key(pts[0])]
        mk = markers[marker_keys.index(tuple(pts[0][c] for c in marker_cols)) % len(markers)]
        text = label
        if not args.no_fit and not args.linx and not args.liny:
            sel = [(x, y, s) for x, y, s in zip(xs, ys, ses) if args.fit_min <= x <= args.fit_max and x > 0 and y > 0]
            if len(sel) >= 2:
                f = fit_loglog(*zip(*sel))
                if f:
                    b, sd, a = f
                    text += f"  (slope {b:.3f} ± {sd:.3f})"
                    slopes.append((label, b, sd, len(sel)))
                    lo, hi = min(s[0] for s in sel), max(s[0] for s in sel)
                    ax.plot([lo, hi], [math.exp(a) * lo ** b, math.exp(a) * hi ** b], "-", color=col, alpha=0.35, lw=3)
        if args.band and "q05" in pts[0]:
            ax.fill_between(xs, [float(r["q05"]) for r in pts], [float(r["q95"]) for r in pts], color=col, alpha=0.12,
                            linewidth=0)
        ax.errorbar(xs, ys, yerr=ses if args.y == "mean" else None, fmt=mk + "-", color=col, ms=4, lw=1.2, capsize=2,
                    label=text)
    if all_x:
        lo, hi = min(all_x), max(all_x)
    else:
        lo, hi = 0.5, 2.0
    for label, pts in refs.items():
        col = color_of[color_key(pts[0])]
        for r in pts:
            ax.hlines(float(r[args.y]), lo, hi, colors=col, linestyles="--", lw=1.2)
        ax.plot([], [], "--", color=col, label=f"{label} ({short(args.x)} = {pts[0][args.x] or 'n/a'})")
    if args.ref_slope and curves:
        first = next(iter(curves.values()))
        x0, y0 = number(first[0][args.x]), float(first[0][args.y])
        for s in args.ref_slope:
            ax.plot([x0, hi], [y0, y0 * (hi / x0) ** s], ":", color="gray", lw=1)
            ax.plot([], [], ":", color="gray", label=f"guide: slope {s:g}")
    if not args.linx:
        ax.set_xscale("log")
    if not args.liny:
        ax.set_yscale("log")
    ax.set_xlabel(f"log2 {args.x}" if args.x_log2 else args.x)
    what = ("excess regret over the reference" if args.excess or args.ref else "regret") if args.y == "mean" else args.y
    where = "final round T" if args.t == "final" and args.x != "t" else f"t = {args.t}"
    ax.set_ylabel(args.ylabel or f"{what} at {where} (mean ± sem)")
    inst = sorted({r["instances"] for r in rows})
    ax.set_title(args.title or f"{what} vs {args.x} ({'/'.join(inst)} instances per point)", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    out = args.out or os.path.join(os.path.dirname(os.path.abspath(args.summary[0])),
                                   f"scaling_{args.x.replace('.', '_')}.png")
    fig.savefig(out)
    for label, b, sd, n in slopes:
        print(f"slope {b:.4f} +- {sd:.4f} ({n} points)  {label}")
    if args.slopes_csv:
        with open(args.slopes_csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["group", "x", "slope", "sd", "points"])
            for label, b, sd, n in slopes:
                w.writerow([label, args.x, f"{b:.6g}", f"{sd:.3g}", n])
    print(f"scaling plot written to {out}")


if __name__ == "__main__":
    main()
