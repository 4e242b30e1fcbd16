#!/usr/bin/env python3
"""Audit every private learner of the registry and print the table of docs/AUDITS.md.

    python3 experiments/audits/run_registry.py [--trials 1000000] [--bin build/dpregret] [--out runs/audits]

Runs `dpregret audit` on each experiments/audits/*.toml (one per private learner: its neighbouring pair and the
statistic are in the file, with the reason for them) with [run] instances = --trials per side, keeps each audit
directory under --out, and prints one Markdown row per learner: claimed (eps, delta), eps_lb at 95% confidence,
eps_lb / eps, trials per side, wall time and trials/s. Only the standard library; any python3.
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
    print("| audit file | learner | pair, statistic | claimed eps (delta) | eps_lb (95%) | eps_lb / eps | trials per side | wall s | trials/s |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for f in files:
        name = os.path.basename(f)[:-5]
        out = os.path.join(a.out, name)
        r = subprocess.run([a.bin, "audit", f, "--out", out, "--quiet", "--set", f"run.instances={a.trials}"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"{name}: dpregret audit exited {r.returncode}: {r.stderr.strip()}")
        with open(os.path.join(out, "audit.json")) as fh:
            j = json.load(fh)
        eps = j["claimed"]["epsilon"]
        eps_f = float("inf") if eps == "inf" else float(eps)
        lb = j["epsilon_lb"]
        nb = j["neighbours"]
        stat = j["statistic"]["observed"].split(" (")[0]
        pair = f"{nb['adversary']}, {nb['rule']} round {nb['round']}; {stat}"
        print(f"| `{name}` | {j['learner']['algorithm']} | {pair} | {eps_f:.4g} ({j['claimed']['delta']:g}) | {lb:.3f} | "
              f"{lb / eps_f:.2f} | {j['trials_per_side']:.0e} | {j['timing']['wall_seconds']:.1f} | "
              f"{j['timing']['trials_per_second']:.2e} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
