#!/usr/bin/python3
"""Expert-rounds per second of `hedge` and `dp-ftrl-experts`: dpregret vs NumPy and JAX versions.

For each (algorithm, d, T) this runs `dpregret run` on a generated config (Bernoulli adversary, the
algorithm's default parameters, epsilon = 1 for the private learner), once per [run] precision, and reads
the throughput the run itself measured (run.json: expert_rounds_per_second, wall time of the simulation
proper), then runs a NumPy implementation of the SAME algorithm, vectorised over instances x experts, in
this process on the same machine, and a JAX one (jax_peer.py: jit, lax.scan over rounds, float32, in a
virtual environment with JAX from PyPI that this script creates at experiments/bench/.venv-jax on first
use), and reports all three and the ratios.

NumPy implementation (fair: what a careful researcher would write):
  * Hedge: L (I x d) cumulative losses; per round a max-subtracted softmax, the expected loss, L += l.
  * DP-FTRL experts (AS17 Alg. 1 + 2, padded tree, Laplace nodes): the O(h N) tree of
    docs/spec/model.md §1.4 keeping the noise of the nodes currently in S_t per level (no regeneration needed), and the
    padding as b (G1 - G2), G ~ Gamma(r) (the same identity dpregret uses), numpy.random.Generator
    (PCG64) for all draws.
NumPy per-round cost does not depend on t, so for large d*T it runs a prefix of the rounds (stated in
the `numpy_rounds` column) and reports expert-rounds/s over what it ran.

Usage: /usr/bin/python3 experiments/bench/bench_experts.py [--binary build/dpregret] [--quick]
       [--out experiments/bench/results/experts.csv] [--threads N] [--backend cpu|cuda]
       [--precisions float,double] [--no-jax] [--algorithms hedge,dp-ftrl-experts] [--ds 16,1024]
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from benchlib import run_config, write_meta


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


def run_dpregret(binary, algorithm, d, T, instances, threads, backend, precision, workdir):
    toml = (f"[run]\nseed = 1\ninstances = {instances}\nrounds = {T}\ncheckpoints = 4\nprecision = \"{precision}\"\n"
            f"[adversary]\nkind = \"bernoulli\"\nd = {d}\n"
            f"[learner]\nalgorithm = \"{algorithm}\"\n" + ("" if algorithm == "hedge" else "epsilon = 1.0\n"))
    return run_config(binary, toml, f"{algorithm}_{d}_{T}_{precision}", workdir, threads, backend)


JAX_VENV = os.environ.get("DPR_JAX_VENV", os.path.join(os.path.dirname(os.path.abspath(__file__)), ".venv-jax"))


def find_python312():
    """An interpreter >= 3.12 (JAX >= 0.11 needs it): pyenv's, else one on PATH."""
    cands = []
    try:
        root = subprocess.run(["pyenv", "root"], capture_output=True, text=True, check=True).stdout.strip()
        vdir = os.path.join(root, "versions")
        for v in sorted(os.listdir(vdir), reverse=True):
            parts = v.split(".")
            if len(parts) >= 2 and parts[0] == "3" and parts[1].isdigit() and int(parts[1]) >= 12:
                cands.append(os.path.join(vdir, v, "bin", "python"))
    except (OSError, subprocess.CalledProcessError):
        pass
    cands += ["python3.13", "python3.12"]
    for c in cands:
        try:
            subprocess.run([c, "-c", "import sys; assert sys.version_info >= (3, 12)"], check=True,
                           capture_output=True)
            return c
        except (OSError, subprocess.CalledProcessError):
            continue
    return None


def jax_python():
    """The virtual environment's interpreter with JAX (CPU) installed from PyPI; created on first use.
    Returns (path, None) or (None, why)."""
    py = os.path.join(JAX_VENV, "bin", "python")
    if not os.path.exists(py):
        base = find_python312()
        if base is None:
            return None, "no Python >= 3.12 found (pyenv or PATH)"
        print(f"creating {JAX_VENV} with {base} and installing jax from PyPI ...", flush=True)
        try:
            subprocess.run([base, "-m", "venv", JAX_VENV], check=True)
            subprocess.run([py, "-m", "pip", "install", "-q", "jax>=0.11"], check=True)
        except subprocess.CalledProcessError as e:
            return None, f"could not create the JAX environment: {e}"
    return py, None


def run_jax(py, algorithm, d, T, instances, rounds, eta, lam):
    cmd = [py, os.path.join(os.path.dirname(os.path.abspath(__file__)), "jax_peer.py"), "--algorithm", algorithm,
           "--d", str(d), "--T", str(T), "--instances", str(instances), "--rounds", str(rounds), "--eta", repr(eta),
           "--lam", repr(lam)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"jax_peer failed: {r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default="build/dpregret")
    ap.add_argument("--threads", type=int, default=0, help="dpregret --threads (0 = all cores)")
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--quick", action="store_true", help="small sizes only (smoke test)")
    ap.add_argument("--budget", type=float, default=4e9, help="expert-rounds per dpregret run of hedge "
                    "(dp-ftrl-experts gets a tenth: its noise costs ~10x the learner)")
    ap.add_argument("--numpy-budget", type=float, default=1.5e8, help="expert-rounds per NumPy / JAX run")
    ap.add_argument("--precisions", default="float,double", help="dpregret [run] precision values to time")
    ap.add_argument("--no-jax", action="store_true", help="skip the JAX peer")
    ap.add_argument("--algorithms", default="hedge,dp-ftrl-experts")
    ap.add_argument("--ds", default=None, help="comma-separated d values (default 16,1024,16384 and 2^20)")
    ap.add_argument("--out", default="experiments/bench/results/experts.csv")
    args = ap.parse_args()

    if args.ds:
        shapes = [(int(d), T) for d in args.ds.split(",") for T in ([1024] if args.quick else [1024, 16384])]
    elif args.quick:
        shapes = [(16, 1024), (1024, 1024)]
    else:
        shapes = [(d, T) for d in (16, 1024, 16384) for T in (1024, 16384)] + [(1 << 20, 1024)]
    precisions = args.precisions.split(",")
    jpy, why = (None, "--no-jax") if args.no_jax else jax_python()
    if jpy is None:
        print(f"JAX peer skipped: {why}", flush=True)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for algorithm in args.algorithms.split(","):
            for d, T in shapes:
                budget = args.budget if algorithm == "hedge" else args.budget / 10
                # at least 2 instances per thread, so that both scheduling modes have work
                inst = max(4, min(100000, int(budget / (d * T))))
                if d >= (1 << 20):
                    inst = 2  # "a few instances": the coordinates of one instance are split across threads
                eta = math.sqrt(8 * math.log(d) / T) if algorithm == "hedge" else math.sqrt(math.log(d) / (2 * T))
                k = math.ceil(math.log2(T))
                lam = d * k / 1.0  # AS17 experts row, eps = 1, paper calibration: ||Y||_1 k / eps
                # NumPy and JAX: the same algorithm and defaults, instances x rounds within their budget
                I = max(1, min(inst, int(args.numpy_budget / (d * T)) or 1, 4096))
                rounds = max(1, min(T, int(args.numpy_budget / (I * d))))
                rng = np.random.default_rng(1)
                means = np.full(d, 0.5)
                means[0] = 0.4
                losses_fn = lambda t: (rng.random(d) < means).astype(np.float64)  # noqa: E731
                start = time.perf_counter()
                if algorithm == "hedge":
                    numpy_hedge(I, d, T, eta, losses_fn, rounds)
                else:
                    numpy_dp_ftrl(I, d, T, eta, lam, losses_fn, rounds, rng)
                numpy_rate = I * rounds * d / (time.perf_counter() - start)
                jax_rate = float("nan")
                if jpy is not None:
                    jax_rate = run_jax(jpy, algorithm, d, T, I, rounds, eta, lam)["expert_rounds_per_s"]
                for precision in precisions:
                    rj = run_dpregret(args.binary, algorithm, d, T, inst, args.threads, args.backend, precision, work)
                    ours = rj["throughput"]["expert_rounds_per_second"]
                    row = dict(algorithm=algorithm, d=d, T=T, precision=precision, instances=inst,
                               dpregret_expert_rounds_per_s=f"{ours:.4g}",
                               dpregret_wall_s=f"{rj['wall_seconds']:.3f}",
                               launch_policy=rj["points"][0].get("launch_policy", ""),
                               numpy_instances=I, numpy_rounds=rounds,
                               numpy_f64_expert_rounds_per_s=f"{numpy_rate:.4g}",
                               jax_f32_expert_rounds_per_s=f"{jax_rate:.4g}",
                               vs_numpy=f"{ours / numpy_rate:.1f}", vs_jax=f"{ours / jax_rate:.1f}",
                               backend=rj["backend"], threads=rj["threads"])
                    rows.append(row)
                    print(", ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    write_meta(args.out, jax=None if jpy is None else "see jax_peer output (float32, threefry)")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    sys.exit(main())
