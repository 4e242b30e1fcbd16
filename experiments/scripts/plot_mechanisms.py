#!/usr/bin/python3
"""Tables and figures of the prefix-sum mechanism sweeps (experiments/mechanisms/run.sh, docs/experiments/mechanisms.md).

Reads OUT/{experts,sphere}_{T,eps}[_twin]/summary.csv and OUT/noise_<mechanism>.{npy,json}; writes
OUT/regret_vs_T.png, OUT/price_vs_eps.png, OUT/noise_std.png and OUT/tables.md (also printed):
  - mean regret at T (± sem) against T per mechanism and the non-private twin;
  - the price of privacy (mean regret minus the twin's) against epsilon, and the smallest epsilon at which it is at
    most a tenth of the twin's regret ("privacy for free", log-linear interpolation between swept epsilons);
  - the measured prefix noise of each mechanism against its exact variance: sens^2 max_t Var(Z_t) (the loss of
    docs/MECHANISMS.md §3.5), the empirical variance at that t, and the mean ratio empirical / exact over t.
Debian's python3 with python3-matplotlib and python3-numpy (scripts/deps.sh installs them).

    /usr/bin/python3 experiments/scripts/plot_mechanisms.py runs/mechanisms
"""
import argparse
import csv
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

MECHANISMS = ["padded", "binary", "honaker", "blt"]
FREE = 0.1  # "privacy for free": the price of privacy at most this fraction of the twin's regret


def final_rows(path):
    """The rows of summary.csv at t = T, with the point's mechanism (learner.mechanism, or its old name tree)."""
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if int(r["t"]) == int(r["T"])]
    if not rows:
        sys.exit(f"{path}: no rows at t = T")
    for r in rows:
        r["mech"] = r.get("learner.mechanism") or r.get("learner.tree") or "padded"
    return rows


def by_mechanism(rows, key):
    """{mechanism: [(x, mean, sem)]} sorted by x = float(row[key])."""
    out = {m: [] for m in MECHANISMS}
    for r in rows:
        out[r["mech"]].append((float(r[key]), float(r["mean"]), float(r["sem"])))
    return {m: sorted(v) for m, v in out.items() if v}


def free_from(points, twin):
    """Smallest x at which price <= FREE * twin, interpolated in log x between the swept points (None: never)."""
    prev = None
    for x, mean, _ in points:
        price = mean - twin
        if price <= FREE * twin:
            if prev is None:
                return f"<= {x:g}"
            (x0, p0) = prev
            f = (p0 - FREE * twin) / (p0 - price)
            return f"{math.exp(math.log(x0) + f * (math.log(x) - math.log(x0))):.3g}"
        prev = (x, price)
    return "above the sweep"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="the directory experiments/mechanisms/run.sh wrote")
    a = ap.parse_args()
    lines = []
    learners = [("experts", "dp-ftrl-experts, d = 32"), ("sphere", "dp-ftrl-sphere, d = 8")]

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, (name, title) in zip(axes, learners):
        rows = by_mechanism(final_rows(os.path.join(a.out, f"{name}_T", "summary.csv")), "T")
        twin = sorted((float(r["T"]), float(r["mean"])) for r in final_rows(os.path.join(a.out, f"{name}_T_twin", "summary.csv")))
        twin_at = dict(twin)
        lines.append(f"\n### {title}: mean regret at T (± sem), equal privacy at every T\n")
        lines.append("| T | " + " | ".join(rows) + " | twin |")
        lines.append("|---:|" + "---:|" * (len(rows) + 1))
        for i, (T, _) in enumerate(twin):
            cells = [f"{rows[m][i][1]:.1f} ± {rows[m][i][2]:.1f}" for m in rows]
            lines.append(f"| 2^{int(round(math.log2(T)))} | " + " | ".join(cells) + f" | {twin_at[T]:.1f} |")
        lines.append("\nprice of privacy (regret minus the twin's): " + "; ".join(
            m + " " + ", ".join(f"{p[1] - twin_at[p[0]]:.0f}" for p in rows[m]) for m in rows))
        for m, pts in rows.items():
            ax.errorbar([p[0] for p in pts], [p[1] for p in pts], yerr=[p[2] for p in pts], marker="o", ms=3,
                        capsize=2, label=m)
        ax.plot([t for t, _ in twin], [v for _, v in twin], "k--", label="non-private twin")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("T")
        ax.set_ylabel("mean regret at T")
        ax.set_title(title)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(a.out, "regret_vs_T.png"), dpi=120)

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, (name, title) in zip(axes, learners):
        rows = by_mechanism(final_rows(os.path.join(a.out, f"{name}_eps", "summary.csv")), "learner.epsilon")
        twin = float(final_rows(os.path.join(a.out, f"{name}_eps_twin", "summary.csv"))[0]["mean"])
        lines.append(f"\n### {title}, T = 2^16: price of privacy (mean regret minus the twin's {twin:.1f}) against eps\n")
        eps = [p[0] for p in next(iter(rows.values()))]
        lines.append("| eps | " + " | ".join(rows) + " |")
        lines.append("|---:|" + "---:|" * len(rows))
        for i, e in enumerate(eps):
            lines.append(f"| {e:g} | " + " | ".join(f"{rows[m][i][1] - twin:.1f}" for m in rows) + " |")
        lines.append(f"| privacy for free (price <= {FREE:g} x twin) from eps | " +
                     " | ".join(free_from(rows[m], twin) for m in rows) + " |")
        for m, pts in rows.items():
            ax.plot([p[0] for p in pts], [max(p[1] - twin, 1e-3) for p in pts], marker="o", ms=3, label=m)
        ax.axhline(FREE * twin, color="k", ls=":", label=f"{FREE:g} x twin's regret")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("epsilon (delta = 1e-5, equal for every mechanism)")
        ax.set_ylabel("regret minus the twin's, at T")
        ax.set_title(title + ", T = 2^16")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(a.out, "price_vs_eps.png"), dpi=120)

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    lines.append("\n### Prefix noise, T = 2^16, unit step/node sigma\n")
    lines.append("| mechanism | sens^2 | max_t Var(Z_t) exact | loss = sens^2 x max Var | empirical Var at that t "
                 "(± se) | mean over t of empirical / exact |")
    lines.append("|---|---:|---:|---:|---:|---:|")
    for m in MECHANISMS:
        z = np.load(os.path.join(a.out, f"noise_{m}.npy"))
        with open(os.path.join(a.out, f"noise_{m}.json")) as f:
            meta = json.load(f)
        exact = np.asarray(meta["variance"], dtype=float) * meta["node_variance"]
        emp = (z * z).mean(axis=0)
        n = z.shape[0]
        t = int(np.argmax(exact))
        ok = exact > 0
        ratio = float(np.mean(emp[ok] / exact[ok]))
        s2 = meta["sensitivity_squared"]
        lines.append(f"| {m} | {s2:.4g} | {exact[t]:.4g} | {s2 * exact[t]:.4g} | {emp[t]:.4g} ± "
                     f"{exact[t] * math.sqrt(2.0 / n):.2g} | {ratio:.4f} |")
        ts = np.unique(np.geomspace(1, len(exact) - 1, 60).astype(int))
        line, = ax.plot(np.arange(1, len(exact)), np.sqrt(s2 * exact[1:]), lw=1, label=f"{m} (exact)")
        ax.plot(ts, np.sqrt(s2 * emp[ts]), ".", color=line.get_color(), ms=3)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("t")
    ax.set_ylabel("sqrt(sens^2 Var(Z_t)): noise std at equal privacy")
    ax.set_title("prefix noise (lines exact, dots from sample prefix)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(a.out, "noise_std.png"), dpi=120)

    text = "\n".join(lines) + "\n"
    with open(os.path.join(a.out, "tables.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
