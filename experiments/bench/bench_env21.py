#!/usr/bin/python3
"""Instance-rounds per second of `private-bandit-fw` (ENV21 Alg. 1, kernels/learners/private_bandit_fw.hpp):
dpregret vs a vectorised NumPy implementation of the same algorithm.

For each decision set (simplex, k-subsets with k = n/4, spanning trees of the complete graph K_m) and dimension n
(coordinates or edges) this runs `dpregret run` on a generated config (epsilon = 1, Laplace padded tree,
calibration = sensitivity, bco-linear losses) with `--quiet --backend cpu` and reads the throughput the run
measured itself (run.json "throughput"."instance_rounds_per_second"). It then runs a NumPy implementation of the
same algorithm, vectorised over the I instances, in this process on the same machine, and reports both and their
ratio.

NumPy per round, for all I instances at once (what a careful researcher would write):
  u = P z / ||P z||, z ~ N(0, I_n) (P: subtract the mean: the simplex, k-subsets and K_m's spanning trees, one
  block); x = x~ + zeta u; f = <a_t, x> - b_t (shared row); g += (n_eff/zeta) clip(f) u;
  one Frank-Wolfe step: v = LO(y + eta s~) -- simplex: argmin per row; k-subsets: numpy.argpartition per row;
  spanning trees: scipy.sparse.csgraph.minimum_spanning_tree per instance (Kruskal/Prim in C; no vectorised MST
  exists); exact line search; at the end of a batch x~ = y, S += g, s~ = S + Z_R with Z_R the tree's noise
  (Laplace node draws cached per level, popcount(R) nodes per prefix).
numpy.random.Generator (PCG64). NumPy's per-round cost does not depend on t, so it runs a prefix of the rounds
(the `numpy_rounds` column) and reports instance-rounds/s over what it ran.

Usage: /usr/bin/python3 experiments/bench/bench_env21.py [--binary build/dpregret] [--quick]
       [--out experiments/bench/results/env21.csv] [--threads N]
"""
import argparse
import csv
import math
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import run_config, write_meta  # noqa: E402


def complete_edges(m):
    return [(a, b) for a in range(m) for b in range(a + 1, m)]


def lo_factory(setname, n, k=None, nodes=None):
    if setname == "simplex":
        def lo(v):
            x = np.zeros_like(v)
            x[np.arange(v.shape[0]), v.argmin(1)] = 1.0
            return x
        return lo
    if setname == "k-subsets":
        def lo(v):
            x = np.zeros_like(v)
            idx = np.argpartition(v, k - 1, axis=1)[:, :k]
            np.put_along_axis(x, idx, 1.0, axis=1)
            return x
        return lo
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import minimum_spanning_tree
    edges = complete_edges(nodes)
    rows = np.array([a for a, _ in edges])
    cols = np.array([b for _, b in edges])
    pos = {e: i for i, e in enumerate(edges)}

    def lo(v):
        x = np.zeros_like(v)
        shift = v.min(1, keepdims=True) - 1.0  # csgraph ignores zero weights: make every weight positive
        for i in range(v.shape[0]):
            g = csr_matrix((v[i] - shift[i], (rows, cols)), shape=(nodes, nodes))
            t = minimum_spanning_tree(g).tocoo()
            for a, b in zip(t.row, t.col):
                x[i, pos[(min(a, b), max(a, b))]] = 1.0
        return x
    return lo


def numpy_pbfw(setname, n, T, I, rounds, rng, k=None, nodes=None, eps=1.0):
    """Runs `rounds` rounds of private-bandit-fw for I instances; returns the seconds taken."""
    D = math.sqrt(2.0) if setname == "simplex" else (math.sqrt(2.0 * min(k, n - k)) if setname == "k-subsets"
                                                      else math.sqrt(2.0 * (nodes - 1)))
    neff = n - 1
    R_ = math.ceil(math.sqrt(T))
    B = -(-T // R_)
    nb = -(-T // B)
    eta = D / (T ** 0.75 * math.sqrt(neff))
    zeta = D * math.sqrt(neff) / T ** 0.25
    C = D + zeta
    d2 = 2.0 * neff / zeta * C
    d1 = math.sqrt(n) * d2
    hp = math.ceil(math.log2(nb)) if nb > 1 else 0
    lam = d1 * hp / eps
    lo = lo_factory(setname, n, k, nodes)
    mu = rng.uniform(-1, 1, n)
    x0 = lo(mu[None, :])[0]
    y = lo(np.zeros((I, n)))
    sn = np.zeros((I, n))
    S = np.zeros((I, n))
    g = np.zeros((I, n))
    levels = np.zeros((max(hp, 1) + 2, I, n))
    xc = y.copy()
    start = time.perf_counter()
    for t in range(1, rounds + 1):
        a = (mu + rng.uniform(-1, 1, n)) / (2.0 * math.sqrt(n))
        b = a @ x0
        z = rng.standard_normal((I, n))
        z -= z.mean(1, keepdims=True)
        u = z / np.linalg.norm(z, axis=1, keepdims=True)
        x = xc + zeta * u
        f = np.clip(x @ a - b, -C, C)
        g += (neff / zeta * f)[:, None] * u
        grad = y + eta * sn
        v = lo(grad)
        dy = y - v
        gap = (dy * grad).sum(1)
        dd = (dy * dy).sum(1)
        gamma = np.clip(np.where(dd > 0, gap / np.where(dd > 0, dd, 1.0), 0.0), 0.0, 1.0)
        y -= gamma[:, None] * dy
        if t % B == 0:
            R = t // B
            xc = y.copy()
            S += g
            g[:] = 0.0
            c = (R & -R).bit_length() - 1  # the node completing at R: level ctz(R)
            levels[c] = rng.laplace(0.0, lam, (I, n))
            noise = sum(levels[j] for j in range(levels.shape[0]) if (R >> j) & 1)
            sn = S + noise
    return time.perf_counter() - start


def dpregret_rate(binary, setname, n, T, I, threads, workdir, k=None, nodes=None):
    adv = f'kind = "bco-linear"\nset = "{setname}"\n'
    if setname == "spanning-tree":
        adv += f"nodes = {nodes}\n"
    else:
        adv += f"d = {n}\n" + (f"k = {k}\n" if k else "")
    toml = (f"[run]\nseed = 1\ninstances = {I}\nrounds = {T}\ncheckpoints = 2\n[adversary]\n{adv}"
            f'[learner]\nalgorithm = "private-bandit-fw"\nepsilon = 1.0\ncalibration = "sensitivity"\n')
    rj = run_config(binary, toml, f"{setname}_{n}", workdir, threads)
    return rj["throughput"]["instance_rounds_per_second"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default="build/dpregret")
    ap.add_argument("--out", default="experiments/bench/results/env21.csv")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="smaller T and fewer NumPy rounds")
    args = ap.parse_args()
    cases = [("simplex", 64, None, None), ("simplex", 1024, None, None), ("k-subsets", 64, 16, None),
             ("k-subsets", 1024, 256, None), ("spanning-tree", 66, None, 12), ("spanning-tree", 990, None, 45)]
    T = 4096 if args.quick else 16384
    rng = np.random.default_rng(1)
    rows = []
    with tempfile.TemporaryDirectory() as wd:
        for setname, n, k, nodes in cases:
            I = 100 if n <= 128 else 20
            dp = dpregret_rate(args.binary, setname, n, T, I, args.threads, wd, k, nodes)
            nr = 64 if args.quick else 256
            if setname == "spanning-tree":
                nr = 16 if args.quick else 32
            secs = numpy_pbfw(setname, n, T, I, nr, rng, k, nodes)
            npr = I * nr / secs
            rows.append(dict(set=setname, n=n, k=k or "", nodes=nodes or "", T=T, instances=I,
                             dpregret_instance_rounds_per_s=f"{dp:.4g}", numpy_instance_rounds_per_s=f"{npr:.4g}",
                             numpy_rounds=nr, ratio=f"{dp / npr:.3g}"))
            print(rows[-1], flush=True)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    write_meta(args.out, binary=args.binary, T=T)


if __name__ == "__main__":
    main()
