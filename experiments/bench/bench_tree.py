#!/usr/bin/python3
"""Coordinate-rounds per second of the other AS17 tree learners: dpregret vs vectorised NumPy versions.

Learners (kernels/learners/dp_ftrl_olo.hpp, dp_ftpl.hpp; docs/spec/as17.md §A1, §A2) and the workload each runs on:
  dp-ftrl-sphere   unit l2 ball, Laplace tree, eta = 1/sqrt(T)        adversary unit-vectors
  dp-ftrl-cube     [-1,1]^d, Laplace tree, eta = sqrt(d/T)            adversary cube-drift
  dp-ftpl-experts  simplex vertices, Gaussian tree, argmin of L~      adversary bernoulli
  dp-ftpl-ball     unit l2 ball, Gaussian tree, x = -L~/||L~||        adversary unit-vectors
  dp-ftpl-cube     [-1,1]^d, Gaussian tree, x = -sign(L~)             adversary cube-drift
  dp-ftrl-smooth   unit l2 ball, Gaussian binary tree on the gradients g_t = clip_L(r_t a_t) of squared losses,
                   x = -G~/max(lambda, ||G~||)  (kernels/learners/dp_ftrl_smooth.hpp; docs/spec/afkt23.md §C6)
                                                                       adversary squared-realizable
each at epsilon = 1 (delta = 1e-6 for the Gaussian ones), padded tree (dp-ftrl-smooth: its binary tree), paper
calibration, the learner's defaults otherwise. For each (learner, d, T) this runs `dpregret run` on a generated config and reads the
throughput the run measured itself (run.json "throughput"."expert_rounds_per_second": instances x d x T
over the wall time of the simulation proper, i.e. coordinate-rounds/s), once per [run] precision, then
runs a NumPy implementation of the SAME algorithm vectorised over instances x coordinates in this process
on the same machine, and reports both and their ratio.

NumPy implementation (fair: what a careful researcher would write):
  * the O(h N) tree of docs/spec/model.md §1.4 keeping the noise of the nodes currently in S_t per level (no
    regeneration), a fresh padding of r_t = k - popcount(t-1) node draws per round drawn in one shot
    (Laplace: b (G1 - G2), G ~ Gamma(r); Gaussian: one normal of sd sqrt(r) sigma), exactly the law
    dpregret uses; numpy.random.Generator (PCG64);
  * the play from L~ = L + Z (projection, argmin or sign) and the charge <l_t, x_t>, then L += l_t
    (dp-ftrl-smooth: the charge (<a_t, x_t> - b_t)^2 / 2 and G += the clipped gradient, per instance; its binary
    tree has no padding);
  * the losses are generated once per round and shared by all instances (dpregret's shared sequence).
The node scale does not change the cost, so NumPy uses the scale of the paper calibration for Laplace
(sqrt(d) k / eps sphere, k / eps cube) and sigma = 1 for the Gaussian learners.
NumPy's per-round cost does not depend on t, so for large instances x d x T it runs a prefix of the rounds
(the `numpy_rounds` column) and reports coordinate-rounds/s over what it ran.

Usage: /usr/bin/python3 experiments/bench/bench_tree.py [--binary build/dpregret] [--quick]
       [--out experiments/bench/results/tree.csv] [--threads N] [--backend cpu|cuda]
       [--precisions float,double] [--learners dp-ftrl-sphere,...] [--ds 16,1024]
"""
import argparse
import csv
import math
import os
import sys
import tempfile
import time

import numpy as np

from benchlib import run_config, write_meta

LEARNERS = {
    # name: (adversary kind, node noise, play)
    "dp-ftrl-sphere": ("unit-vectors", "laplace", "ball-proj"),
    "dp-ftrl-cube": ("cube-drift", "laplace", "cube-clip"),
    "dp-ftpl-experts": ("bernoulli", "gaussian", "argmin"),
    "dp-ftpl-ball": ("unit-vectors", "gaussian", "ball-dir"),
    "dp-ftpl-cube": ("cube-drift", "gaussian", "cube-sign"),
    "dp-ftrl-smooth": ("squared-realizable", "gaussian", "smooth"),
}


def losses_for(kind, d, rng):
    """One shared loss vector per round, the adversary's law (not its bits)."""
    if kind == "unit-vectors":
        def f(t):
            z = rng.standard_normal(d)
            return z / np.linalg.norm(z)
    elif kind == "cube-drift":
        corner = np.where(rng.random(d) < 0.5, -1.0, 1.0)

        def f(t):
            l = np.zeros(d)
            i = rng.integers(d)
            l[i] = -corner[i] if rng.random() < 0.55 else corner[i]
            return l
    elif kind == "squared-realizable":
        xstar = rng.standard_normal(d)
        xstar /= np.linalg.norm(xstar)

        def f(t):  # (a_t, b_t): a unit row and b_t = <a_t, x*>
            a = rng.standard_normal(d)
            a /= np.linalg.norm(a)
            return a, float(a @ xstar)
    else:
        means = np.full(d, 0.5)
        means[0] = 0.4

        def f(t):
            return (rng.random(d) < means).astype(np.float64)
    return f


def numpy_tree_learner(I, d, T, noise, play, losses_fn, rounds, rng):
    k = math.ceil(math.log2(T)) if T > 1 else 0
    if noise == "laplace":
        scale = (math.sqrt(d) if play == "ball-proj" else 1.0) * k  # paper calibration, eps = 1
    else:
        scale = 1.0
    eta = 1.0 / math.sqrt(T) if play == "ball-proj" else math.sqrt(d / T)
    lam = 32.0 + (d * T * math.log(T) * math.log(1e6) * 4.0) ** (1 / 3)  # dp-ftrl-smooth's realizable lambda
    L = np.zeros((I, d))
    levels = [None] * (k + 1)
    tree = np.zeros((I, d))
    total = np.zeros(I)
    for t in range(1, rounds + 1):
        r = k - bin(t - 1).count("1") if play != "smooth" else 0  # the binary tree: no padding
        if r == 0:
            pad = 0.0
        elif noise == "laplace":
            pad = scale * (rng.gamma(r, size=(I, d)) - rng.gamma(r, size=(I, d)))
        else:
            pad = math.sqrt(r) * scale * rng.standard_normal((I, d))
        Lt = L + tree + pad
        l = losses_fn(t)
        if play == "ball-proj":
            y = -(eta / 2) * Lt
            x = y / np.maximum(1.0, np.linalg.norm(y, axis=1, keepdims=True))
            total += x @ l
        elif play == "cube-clip":
            total += np.clip(-(eta / 2) * Lt, -1.0, 1.0) @ l
        elif play == "argmin":
            total += l[np.argmin(Lt, axis=1)]
        elif play == "ball-dir":
            n = np.linalg.norm(Lt, axis=1, keepdims=True)
            total += (-Lt / np.where(n > 0, n, 1.0)) @ l
        elif play == "smooth":
            a, b = l
            x = -Lt / np.maximum(lam, np.linalg.norm(Lt, axis=1, keepdims=True))
            res = x @ a - b
            total += 0.5 * res * res
            coef = np.clip(res, -2.0, 2.0)  # ||grad|| = |r| ||a|| clipped to L = 2
            L += coef[:, None] * a[None, :]
        else:
            total += -np.sign(Lt) @ l
        if play != "smooth":
            L += l
        if t < T:  # advance the tree to prefix t: node (i, .) completes, the levels below merge into it
            i = (t & -t).bit_length() - 1
            for j in range(i):
                if levels[j] is not None:
                    tree -= levels[j]
                    levels[j] = None
            levels[i] = (rng.laplace(0.0, scale, size=(I, d)) if noise == "laplace"
                         else rng.normal(0.0, scale, size=(I, d)))
            tree += levels[i]
    return total


GAUSSIAN_NOISES = ("gaussian", "discrete-gaussian")


def noises_for(noise, asked):
    """The values of --node-noise a learner whose default node law is `noise` accepts: every one for the Laplace
    learners (dp-ftrl-*: laplace, gaussian, discrete-laplace, discrete-gaussian), the Gaussian ones for DP-FTPL."""
    if not asked:
        return [""]
    values = asked.split(",")
    return values if noise == "laplace" else [v for v in values if v in GAUSSIAN_NOISES] or [""]


def run_dpregret(binary, learner, kind, noise, d, T, instances, threads, backend, precision, workdir, node_noise=""):
    gaussian = (node_noise or noise) in GAUSSIAN_NOISES
    toml = (f"[run]\nseed = 1\ninstances = {instances}\nrounds = {T}\ncheckpoints = 4\nprecision = \"{precision}\"\n"
            f"[adversary]\nkind = \"{kind}\"\nd = {d}\n"
            f"[learner]\nalgorithm = \"{learner}\"\nepsilon = 1.0\n" + ("delta = 1e-6\n" if gaussian else "")
            + (f"noise = \"{node_noise}\"\n" if node_noise else ""))
    return run_config(binary, toml, f"{learner}_{d}_{T}_{precision}_{node_noise}", workdir, threads, backend)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default="build/dpregret")
    ap.add_argument("--threads", type=int, default=0, help="dpregret --threads (0 = all cores)")
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--quick", action="store_true", help="small sizes only (smoke test)")
    ap.add_argument("--budget", type=float, default=4e8, help="coordinate-rounds per dpregret run")
    ap.add_argument("--numpy-budget", type=float, default=6e7, help="coordinate-rounds per NumPy run")
    ap.add_argument("--precisions", default="float,double", help="dpregret [run] precision values to time")
    ap.add_argument("--learners", default=",".join(LEARNERS))
    ap.add_argument("--ds", default=None, help="comma-separated d values (default 16,1024)")
    ap.add_argument("--T", type=int, default=4096)
    ap.add_argument("--node-noise", default="",
                    help="comma-separated values of the learners' noise key to time, e.g. laplace,discrete-laplace "
                         "(the continuous sampler against lattice noise, docs/spec/model.md §1.8) or "
                         "gaussian,discrete-gaussian (§1.11; DP-FTPL takes only these two); default: the learner's "
                         "default")
    ap.add_argument("--out", default="experiments/bench/results/tree.csv")
    args = ap.parse_args()

    ds = [int(x) for x in args.ds.split(",")] if args.ds else ([16] if args.quick else [16, 1024])
    T = 256 if args.quick else args.T
    budget = args.budget / 20 if args.quick else args.budget
    np_budget = args.numpy_budget / 20 if args.quick else args.numpy_budget
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for learner in args.learners.split(","):
            if learner not in LEARNERS:
                sys.exit(f"bench_tree.py: unknown learner '{learner}' (one of {', '.join(LEARNERS)})")
            kind, noise, play = LEARNERS[learner]
            for d in ds:
                inst = max(4, min(100000, int(budget / (d * T))))
                I = max(1, min(inst, int(np_budget / (d * T)) or 1, 4096))
                rounds = max(1, min(T, int(np_budget / (I * d))))
                rng = np.random.default_rng(1)
                start = time.perf_counter()
                numpy_tree_learner(I, d, T, noise, play, losses_for(kind, d, rng), rounds, rng)
                numpy_rate = I * rounds * d / (time.perf_counter() - start)
                node_noises = noises_for(noise, args.node_noise)
                for precision, node_noise in [(p, n) for p in args.precisions.split(",") for n in node_noises]:
                    rj = run_dpregret(args.binary, learner, kind, noise, d, T, inst, args.threads, args.backend,
                                      precision, work, node_noise)
                    ours = rj["throughput"]["expert_rounds_per_second"]
                    row = dict(learner=learner, adversary=kind, d=d, T=T, precision=precision,
                               node_noise=node_noise or "default", instances=inst,
                               dpregret_coord_rounds_per_s=f"{ours:.4g}",
                               dpregret_wall_s=f"{rj['wall_seconds']:.3f}",
                               launch_policy=rj["points"][0].get("launch_policy", ""),
                               numpy_instances=I, numpy_rounds=rounds,
                               numpy_f64_coord_rounds_per_s=f"{numpy_rate:.4g}",
                               vs_numpy=f"{ours / numpy_rate:.1f}", backend=rj["backend"], threads=rj["threads"])
                    rows.append(row)
                    print(", ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    write_meta(args.out, T=T)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    sys.exit(main())
