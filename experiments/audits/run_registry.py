#!/usr/bin/env python3
"""Audit every private learner of the registry and print the table of docs/AUDITS.md.

    python3 experiments/audits/run_registry.py [--trials 1000000] [--bin build/dpregret] [--out runs/audits]

Runs `dpregret audit` on each experiments/audits/*.toml (one per private learner: its neighbouring pair and the
statistic are in the file, with the reason for them) with [run] instances = --trials per side, keeps each audit
directory under --out, and prints one Markdown row per learner: the bound used (eps-delta, or gdp for learners with
Gaussian noise), claimed (eps, delta) or mu, the bound at 95% confidence and its ratio to the claim, trials per
side, wall time and trials/s. Only the standard library; any python3.
"""
import argparse
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=1000000, help="trials per side (default 1e6)")
    ap.add_argument("--bin", default=os.path.join(HERE, "..", "..", "build", "dpregret"))
    ap.add_argument("--out", default="runs/audits", help="parent of the audit directories (must not hold them yet)")
    ap.add_argument("--only", nargs="*", help="audit files to run (names without .toml)")
    a = ap.parse_args()
    if a.trials < 2:
        sys.exit("--trials must be at least 2")
    files = sorted(glob.glob(os.path.join(HERE, "*.toml")))
    if a.only:
        files = [f for f in files if os.path.basename(f)[:-5] in a.only]
    print("| audit file | learner | pair, statistic | bound | claimed eps (delta) or mu | lower bound (95%) | bound / claim | trials per side | wall s | trials/s |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|---:|")
    for f in files:
        name = os.path.basename(f)[:-5]
        out = os.path.join(a.out, name)
        r = subprocess.run([a.bin, "audit", f, "--out", out, "--quiet", "--set", f"run.instances={a.trials}"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"{name}: dpregret audit exited {r.returncode}: {r.stderr.strip()}")
        with open(os.path.join(out, "audit.json")) as fh:
            j = json.load(fh)
        gdp = j.get("bound", {}).get("kind") == "gdp"
        eps = j["claimed"]["gdp_mu"] if gdp else j["claimed"]["epsilon"]
        eps_f = float("inf") if eps == "inf" else float(eps)
        lb = j["mu_lb"] if gdp else j["epsilon_lb"]
        lb = float("inf") if lb == "inf" else float(lb)
        claim = f"mu {eps_f:.4g}" if gdp else f"{eps_f:.4g} ({j['claimed']['delta']:g})"
        nb = j["neighbours"]
        stat = j["statistic"]["observed"].split(" (")[0]
        pair = f"{nb['adversary']}, {nb['rule']} round {nb['round']}; {stat}"
        print(f"| `{name}` | {j['learner']['algorithm']} | {pair} | {'gdp' if gdp else 'eps-delta'} | {claim} | {lb:.3f} | "
              f"{lb / eps_f:.2f} | {j['trials_per_side']:.0e} | {j['timing']['wall_seconds']:.1f} | "
              f"{j['timing']['trials_per_second']:.2e} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
