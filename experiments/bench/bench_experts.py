#!/usr/bin/python3
"""Expert-rounds per second of `hedge` and `dp-ftrl-experts`: dpregret vs a vectorised NumPy version.

For each (algorithm, d, T) this runs `dpregret run` on a generated config (Bernoulli adversary, the
algorithm's default parameters, epsilon = 1 for the private learner) and reads the throughput the run
itself measured (run.json: expert_rounds_per_second, wall time of the simulation proper), then runs a
NumPy implementation of the SAME algorithm, vectorised over instances x experts, in this process on
the same machine, and reports both and their ratio.

NumPy implementation (fair: what a careful researcher would write):
  * Hedge: L (I x d) cumulative losses; per round a max-subtracted softmax, the expected loss, L += l.
  * DP-FTRL experts (AS17 Alg. 1 + 2, padded tree, Laplace nodes): the O(h N) tree of ALGORITHMS.md
    §1.4 keeping the noise of the nodes currently in S_t per level (no regeneration needed), and the
    padding as b (G1 - G2), G ~ Gamma(r) (the same identity dpregret uses), numpy.random.Generator
    (PCG64) for all draws.
NumPy per-round cost does not depend on t, so for large d*T it runs a prefix of the rounds (stated in
the `numpy_rounds` column) and reports expert-rounds/s over what it ran.

Usage: /usr/bin/python3 experiments/bench/bench_experts.py [--binary build/dpregret] [--quick]
       [--out experiments/bench/results/experts.csv] [--threads N] [--backend cpu|cuda]
"""
import argparse
import csv
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np


def numpy_hedge(I, d, T, eta, losses_fn, rounds):
    L = np.zeros((I, d))
    total = np.zeros(I)
    for t in range(1, rounds + 1):
        l = losses_fn(t)  # (d,)
        v = -eta * L
        v -= v.max(axis=1, keepdims=True)
        w = np.exp(v)
        total += (w @ l) / w.sum(axis=1)
        L += l
    return total


def numpy_dp_ftrl(I, d, T, eta, lam, losses_fn, rounds, rng):
    k = math.ceil(math.log2(T)) if T > 1 else 0
    L = np.zeros((I, d))
    levels = [None] * (k + 1)  # noise of node (j, .) currently in S_t, per level
    tree = np.zeros((I, d))  # sum of levels in S_{t-1}
    total = np.zeros(I)
    for t in range(1, rounds + 1):
        prev = t - 1
        r = k - bin(prev).count("1")
        pad = lam * (rng.gamma(r, size=(I, d)) - rng.gamma(r, size=(I, d))) if r > 0 else 0.0
        v = -eta * (L + tree + pad)
        v -= v.max(axis=1, keepdims=True)
        w = np.exp(v)
        l = losses_fn(t)
        total += (w @ l) / w.sum(axis=1)
        L += l
        if t < T:  # advance the tree to prefix t: node (i, .) completes, levels below merge into it
            i = (t & -t).bit_length() - 1
            for j in range(i):
                if levels[j] is not None:
                    tree -= levels[j]
                    levels[j] = None
            levels[i] = rng.laplace(0.0, lam, size=(I, d))
            tree += levels[i]
    return total


def run_dpregret(binary, algorithm, d, T, instances, threads, backend, workdir):
    cfg = os.path.join(workdir, f"{algorithm}_{d}_{T}.toml")
    with open(cfg, "w") as f:
        f.write(f"[run]\nseed = 1\ninstances = {instances}\nrounds = {T}\ncheckpoints = 4\n"
                f"[adversary]\nkind = \"bernoulli\"\nd = {d}\n"
                f"[learner]\nalgorithm = \"{algorithm}\"\n")
        if algorithm != "hedge":
            f.write("epsilon = 1.0\n")
    out = os.path.join(workdir, f"out_{algorithm}_{d}_{T}")
    cmd = [binary, "run", cfg, "--out", out, "--backend", backend, "--quiet"]
    if threads:
        cmd += ["--threads", str(threads)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "run.json")) as f:
        rj = json.load(f)
    return rj


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default="build/dpregret")
    ap.add_argument("--threads", type=int, default=0, help="dpregret --threads (0 = all cores)")
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--quick", action="store_true", help="small sizes only (smoke test)")
    ap.add_argument("--budget", type=float, default=1e9, help="expert-rounds per dpregret run of hedge "
                    "(dp-ftrl-experts gets a tenth: its noise costs ~10-30x the learner)")
    ap.add_argument("--numpy-budget", type=float, default=1.5e8, help="expert-rounds per NumPy run")
    ap.add_argument("--out", default="experiments/bench/results/experts.csv")
    args = ap.parse_args()

    ds = [8, 64] if args.quick else [8, 64, 1024, 16384]
    Ts = [1024] if args.quick else [1024, 16384]
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for algorithm in ["hedge", "dp-ftrl-experts"]:
            for d in ds:
                for T in Ts:
                    budget = args.budget if algorithm == "hedge" else args.budget / 10
                    # at least 4 instances so that every CPU thread has work (instances are the unit of
                    # parallelism of the CPU executor)
                    inst = max(4, min(100000, int(budget / (d * T))))
                    rj = run_dpregret(args.binary, algorithm, d, T, inst, args.threads, args.backend, work)
                    ours = rj["throughput"]["expert_rounds_per_second"]
                    # NumPy: same algorithm and defaults, instances x rounds within its budget
                    I = max(1, min(inst, int(args.numpy_budget / (d * T)) or 1, 4096))
                    rounds = max(1, min(T, int(args.numpy_budget / (I * d))))
                    rng = np.random.default_rng(1)
                    p_best = 0.4
                    means = np.full(d, 0.5)
                    means[0] = p_best
                    losses_fn = lambda t: (rng.random(d) < means).astype(np.float64)  # noqa: E731
                    k = math.ceil(math.log2(T))
                    start = time.perf_counter()
                    if algorithm == "hedge":
                        numpy_hedge(I, d, T, math.sqrt(8 * math.log(d) / T), losses_fn, rounds)
                    else:
                        numpy_dp_ftrl(I, d, T, math.sqrt(math.log(d) / (2 * T)), d * k / 1.0, losses_fn, rounds, rng)
                    secs = time.perf_counter() - start
                    theirs = I * rounds * d / secs
                    row = dict(algorithm=algorithm, d=d, T=T, instances=inst,
                               dpregret_expert_rounds_per_s=f"{ours:.4g}",
                               dpregret_wall_s=f"{rj['wall_seconds']:.3f}",
                               numpy_instances=I, numpy_rounds=rounds,
                               numpy_expert_rounds_per_s=f"{theirs:.4g}", speedup=f"{ours / theirs:.1f}",
                               backend=rj["backend"], threads=rj["threads"])
                    rows.append(row)
                    print(", ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    meta = dict(machine=platform.node(), cpu=platform.processor() or platform.machine(), cores=os.cpu_count(),
                numpy=np.__version__, python=platform.python_version(), date=time.strftime("%Y-%m-%d"))
    with open(os.path.splitext(args.out)[0] + ".meta.json", "w") as f:
        json.dump(meta, f, indent=2)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    sys.exit(main())
