#!/usr/bin/python3
"""Instance-rounds per second of `dp-mab` (AS17 Alg. 4 + Alg. 5): dpregret vs a vectorised NumPy version.

For each number of arms d (default 2, 16, 256) and horizon T this runs `dpregret run` on a generated config
(Bernoulli arms, dp-mab at epsilon = 1 with Thm 4.1's default B~, eta, gamma) and reads the throughput the
run measured itself (run.json "throughput"."instance_rounds_per_second": instance-rounds over the wall time
of the simulation proper), then runs a NumPy implementation of the SAME algorithm, vectorised over
instances, in this process on the same machine, and reports both and their ratio.

NumPy implementation (fair: what a careful researcher would write; docs/spec/as17.md §A4,
kernels/learners/dp_mab.hpp):
  per round, for all I instances at once:
    v = -eta Lhat; v -= max; w = exp(v); p = (1 - gamma) w / sum w + gamma / d     (I x d)
    charge <l_t, p_t> (pseudo-regret) as p @ l
    i_t by inverse CDF: cumsum(p) vs one uniform per instance
    c~ = l_t(i_t) + Lap(1/eps);  Lhat[i, i_t] += c~ / p_t(i_t)
  numpy.random.Generator (PCG64) for the uniforms and the Laplace draws. Losses are generated once per round
  and shared by all instances, as dpregret's shared sequence is.
NumPy per-round cost does not depend on t, so for large I*d*T it runs a prefix of the rounds (stated in the
`numpy_rounds` column) and reports instance-rounds/s over what it ran.

Usage: /usr/bin/python3 experiments/bench/bench_bandits.py [--binary build/dpregret] [--quick]
       [--out experiments/bench/results/bandits_mab.csv] [--threads N] [--backend cpu|cuda]
"""
import argparse
import csv
import math
import os
import sys
import tempfile
import time

import numpy as np

from benchlib import run_config


def thm41_params(d, T, eps):
    """lambda, B~, eta, gamma of Thm 4.1 (docs/spec/as17.md §A4), gamma capped at 1 as dpregret does."""
    lam = 1.0 / eps
    btilde = 1.0 + lam * math.log(d * T * T)
    eta = math.sqrt(math.log(d) / (3.0 * d * T * btilde * btilde))
    gamma = min(1.0, eta * d * btilde)
    return lam, btilde, eta, gamma


def numpy_dp_mab(I, d, T, eps, losses_fn, rounds, rng):
    lam, _, eta, gamma = thm41_params(d, T, eps)
    Lhat = np.zeros((I, d))
    charged = np.zeros(I)
    realised = np.zeros(I)
    rows = np.arange(I)
    for t in range(1, rounds + 1):
        l = losses_fn(t)  # (d,)
        v = -eta * Lhat
        v -= v.max(axis=1, keepdims=True)
        w = np.exp(v)
        p = (1.0 - gamma) * w / w.sum(axis=1, keepdims=True) + gamma / d
        charged += p @ l
        u = rng.random(I)
        arm = np.minimum((np.cumsum(p, axis=1) < u[:, None]).sum(axis=1), d - 1)
        obs = l[arm]
        realised += obs
        fed = obs + rng.laplace(0.0, lam, I)
        Lhat[rows, arm] += fed / p[rows, arm]
    return charged, realised


def run_dpregret(binary, d, T, eps, instances, threads, backend, workdir):
    toml = (f"[run]\nseed = 1\ninstances = {instances}\nrounds = {T}\ncheckpoints = 4\n"
            f"[adversary]\nkind = \"bernoulli\"\nd = {d}\np = 0.9\ngap = 0.8\n"
            f"[learner]\nalgorithm = \"dp-mab\"\nepsilon = {eps}\n")
    return run_config(binary, toml, f"dp_mab_{d}_{T}", workdir, threads, backend)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default="build/dpregret")
    ap.add_argument("--threads", type=int, default=0, help="dpregret --threads (0 = all cores)")
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--quick", action="store_true", help="small sizes only (smoke test)")
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--T", type=int, default=16384)
    ap.add_argument("--budget", type=float, default=2e8, help="arm-rounds (instances x T x d) per dpregret run")
    ap.add_argument("--numpy-budget", type=float, default=1e8, help="arm-rounds per NumPy run")
    ap.add_argument("--out", default="experiments/bench/results/bandits_mab.csv")
    args = ap.parse_args()

    ds = [2, 16] if args.quick else [2, 16, 256]
    T = 1024 if args.quick else args.T
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for d in ds:
            inst = max(64, min(200000, int(args.budget / (d * T))))
            rj = run_dpregret(args.binary, d, T, args.eps, inst, args.threads, args.backend, work)
            ours = rj["throughput"]["instance_rounds_per_second"]
            # NumPy: same algorithm and parameters; instances x rounds within its budget.
            I = max(1, min(inst, 8192, int(args.numpy_budget / (d * T)) or 1))
            I = max(I, min(inst, 1024))  # enough instances to amortise the per-call overhead
            rounds = max(1, min(T, int(args.numpy_budget / (I * d))))
            means = np.full(d, 0.9)
            means[0] = 0.1
            loss_rng = np.random.default_rng(2)
            losses_fn = lambda t: (loss_rng.random(d) < means).astype(np.float64)  # noqa: E731
            rng = np.random.default_rng(1)
            start = time.perf_counter()
            numpy_dp_mab(I, d, T, args.eps, losses_fn, rounds, rng)
            secs = time.perf_counter() - start
            theirs = I * rounds / secs
            row = dict(algorithm="dp-mab", d=d, T=T, epsilon=args.eps, instances=inst,
                       dpregret_instance_rounds_per_s=f"{ours:.4g}",
                       dpregret_arm_rounds_per_s=f"{ours * d:.4g}",
                       dpregret_sim_s=f"{rj['throughput']['simulation_seconds']:.3f}",
                       numpy_instances=I, numpy_rounds=rounds,
                       numpy_instance_rounds_per_s=f"{theirs:.4g}", speedup=f"{ours / theirs:.2f}",
                       backend=rj["backend"], threads=rj["threads"], device=rj["device"],
                       git_commit=rj.get("dpregret", {}).get("git_commit", ""),
                       numpy=np.__version__, cores=os.cpu_count(), load_avg_1m=f"{os.getloadavg()[0]:.2f}",
                       date=time.strftime("%Y-%m-%d"))
            rows.append(row)
            print(", ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    sys.exit(main())
