#!/usr/bin/python3
"""Instance-rounds per second of `dp-scrible-<set>` (AS17 Alg. 4 + SCRiBLe): dpregret vs vectorised NumPy.

For each decision set (ball, cube, simplex) and number of barrier parameters n (default 2, 8, 32; the
simplex plays in R^(n+1), the ball and cube in R^n) this runs `dpregret run` on a generated config
(epsilon = 1, Thm 4.5's default eta and B~; drifting losses on the ball, cube-coordinate on the cube,
Bernoulli on the simplex) with `--quiet --backend cpu` and reads the throughput the run measured itself
(run.json "throughput"."instance_rounds_per_second": instance-rounds over the wall time of the simulation
proper). It then runs a NumPy implementation of the SAME algorithm (kernels/learners/scrible.hpp), vectorised
over instances, in this process on the same machine, and reports both and their ratios.

NumPy implementations (what a careful researcher would write), per round for all I instances at once:
  x_t from the FTRL state; the Hessian eigenpair (lambda_k, v_k) with k ~ Unif[n], s ~ Unif{-1,+1};
  y = x + s lambda_k^{-1/2} v_k; c = <l_t, y> + <Z_t, y>, Z_t ~ Lap^d(lam); g += n c s lambda_k^{1/2} v_k;
  x_{t+1} = argmin eta <g, x> + R(x). Two variants:
  * "eigh": the generic SCRiBLe: form the n x n Hessians (I x n x n) and diagonalise them with
    numpy.linalg.eigh batched over instances (LAPACK syevd per matrix); FTRL step by the closed form
    (ball, cube) or a damped Newton vectorised over instances (simplex, Sherman-Morrison direction,
    iterated until every instance's Newton decrement is <= 1e-12).
  * "structured" (ball and cube): the same closed forms dpregret uses -- ball: radial eigenvector x/||x||
    and the Householder basis of its complement; cube: e_k -- so no eigh at all. (The simplex has no
    vectorised structured NumPy variant here; dpregret solves its diagonal-plus-rank-one eigenproblem
    by a secular equation, O(n) per round.)
  numpy.random.Generator (PCG64) for exploration and noise; losses generated once per round and shared by
  all instances, as dpregret's shared sequence is.
NumPy per-round cost does not depend on t, so it runs a prefix of the rounds (the `numpy_rounds` column) and
reports instance-rounds/s over what it ran. `--check` also compares the mean regret of dpregret and of the
NumPy "eigh" version on a small case (same algorithm, different random streams: agreement within noise).

Usage: /usr/bin/python3 experiments/bench/bench_scrible.py [--binary build/dpregret] [--quick] [--check]
       [--out experiments/bench/results/bandits_scrible.csv] [--threads N]
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

SETS = {  # set -> (adversary kind, ambient d for n parameters, nu, ||Y||_1(d), ||X||_1(d))
    "ball": ("drifting", lambda n: n, lambda n: 1.0, lambda d: math.sqrt(d), lambda d: math.sqrt(d)),
    "cube": ("cube-coordinate", lambda n: n, lambda n: 2.0 * n, lambda d: 1.0, lambda d: float(d)),
    "simplex": ("bernoulli", lambda n: n + 1, lambda n: n + 1.0, lambda d: float(d), lambda d: 1.0),
}


def thm45(setname, n, T, eps):
    """lambda, B~, eta of AS17 Thm 4.5 as dpregret resolves them (paper calibration, M = 1)."""
    _, dof, nu_of, y1, x1 = SETS[setname]
    d = dof(n)
    lam = y1(d) / eps
    btilde = 1.0 + x1(d) * lam * math.log(d * T * T)
    eta = math.sqrt(nu_of(n) * math.log(T)) / (4.0 * n * math.sqrt(T)) / btilde
    return d, lam, btilde, eta


class Losses:
    """The three workloads (docs/spec/checks.md §3.2; docs/ADVERSARIES.md laws). Shared by all instances (one row
    per round, as dpregret's shared sequence) or, with per_instance, one sequence per instance (I rows)."""

    def __init__(self, setname, d, rng, I=1, per_instance=False):
        self.setname, self.d, self.rng, self.I, self.per = setname, d, rng, I, per_instance
        m = I if per_instance else 1
        th = rng.standard_normal((m, d))
        self.theta = th / np.linalg.norm(th, axis=1, keepdims=True)
        self.means = np.full((m, d), 0.5)
        self.means[np.arange(m), rng.integers(d, size=m)] = 0.4

    def __call__(self):
        d, rng = self.d, self.rng
        m = self.I if self.per else 1
        if self.setname == "ball":  # drifting, noise_scale 1
            v = self.theta + rng.standard_normal((m, d))
            l = v / np.linalg.norm(v, axis=1, keepdims=True)
        elif self.setname == "cube":  # cube-coordinate
            l = np.zeros((m, d))
            l[np.arange(m), rng.integers(d, size=m)] = np.where(rng.random(m) >= 0.5, 1.0, -1.0)
        else:  # bernoulli, gap 0.1
            l = (rng.random((m, d)) < self.means).astype(np.float64)
        return l if self.per else l[0]

    def comparator(self, L):  # L: (d,) or (I, d)
        if self.setname == "ball":
            return -np.linalg.norm(L, axis=-1)
        if self.setname == "cube":
            return -np.abs(L).sum(-1)
        return L.min(-1)


# ---- NumPy SCRiBLe ------------------------------------------------------------------------------------


def ball_closed_form(g, eta):
    """x = -c g, s = 1 - ||x||^2 (stable), r = ||x|| for each row of g."""
    a = eta * np.linalg.norm(g, axis=1)
    q = np.sqrt(1.0 + a * a)
    x = -(eta / (1.0 + q))[:, None] * g
    r = a / (1.0 + q)
    s = (1.0 + 1.0 / (q + a)) / (1.0 + q) * (1.0 + r)
    return x, s, r


def cube_closed_form(g, eta):
    a = eta * g
    q = np.sqrt(1.0 + a * a)
    x = -a / (1.0 + q)
    sl = (1.0 + 1.0 / (q + np.abs(a))) / (1.0 + q)  # 1 - |x|
    return x, sl


def simplex_newton(g, y, yN, eta, tol=1e-12, max_iter=100):
    """Damped Newton for argmin eta<g,y> - sum ln y - ln(1 - sum y), all instances at once (warm start)."""
    for _ in range(max_iter):
        grad = eta * g - 1.0 / y + (1.0 / yN)[:, None]
        y2 = y * y
        f = (y2 * grad).sum(1) / (yN * yN + y2.sum(1))
        direction = -(y2 * grad - y2 * f[:, None])
        dec = np.sqrt(np.maximum(-(grad * direction).sum(1), 0.0))
        if dec.max() <= tol:
            break
        alpha = np.where(dec > 0.25, 1.0 / (1.0 + dec), 1.0)
        y = y + alpha[:, None] * direction
        yN = yN - alpha * direction.sum(1)
    return y, yN


def hessians(setname, x, aux):
    """I x n x n Hessians of the barrier (kernels/learners/barriers.hpp table)."""
    I, n = x.shape
    if setname == "ball":
        s = aux
        return (2.0 / s)[:, None, None] * np.eye(n) + (4.0 / (s * s))[:, None, None] * x[:, :, None] * x[:, None, :]
    if setname == "cube":
        sl = aux
        o = 2.0 - sl
        return np.eye(n)[None] * (1.0 / (sl * sl) + 1.0 / (o * o))[:, :, None]
    yN = aux
    return np.eye(n)[None] * (1.0 / (x * x))[:, :, None] + (1.0 / (yN * yN))[:, None, None]


def structured_eigenpair(setname, x, aux, k):
    """(lambda_k, v_k) without eigh: ball radial/Householder, cube e_k."""
    I, n = x.shape
    rows = np.arange(I)
    if setname == "cube":
        sl = aux[rows, k]
        o = 2.0 - sl
        v = np.zeros((I, n))
        v[rows, k] = 1.0
        return 1.0 / (sl * sl) + 1.0 / (o * o), v
    s, r = aux
    rr = np.where(r > 0, r, 1.0)
    u = x / rr[:, None]
    lam = np.where(k == 0, 2.0 / s + 4.0 * r * r / (s * s), 2.0 / s)
    w = u.copy()
    w[:, 0] += np.where(u[:, 0] >= 0, 1.0, -1.0)
    f = 2.0 * u[rows, k] / (2.0 * (1.0 + np.abs(u[:, 0])))
    v = -f[:, None] * w
    v[rows, k] += 1.0
    v = np.where((k == 0)[:, None], u, v)
    e = np.zeros((I, n))
    e[rows, k] = 1.0
    v = np.where((r > 0)[:, None], v, e)
    return lam, v


def numpy_scrible(setname, n, T, eps, I, rounds, variant, seed=1, per_instance=False):
    """Runs `rounds` rounds of dp-scrible-<setname> for I instances; returns (seconds, mean regret, sem)."""
    d, lam_noise, _, eta = thm45(setname, n, T, eps)
    rng = np.random.default_rng(seed)
    losses = Losses(setname, d, np.random.default_rng(seed + 1), I, per_instance)
    rows = np.arange(I)
    g = np.zeros((I, n))
    if setname == "simplex":
        y = np.full((I, n), 1.0 / d)
        yN = np.full(I, 1.0 / d)
    charged = np.zeros(I)
    L = np.zeros((I, d) if per_instance else d)
    start = time.perf_counter()
    for t in range(1, rounds + 1):
        if setname == "ball":
            x, s, r = ball_closed_form(g, eta)
            aux = (s, r)
        elif setname == "cube":
            x, aux = cube_closed_form(g, eta)
        else:
            x, aux = y, yN
        k = rng.integers(n, size=I)
        sgn = np.where(rng.random(I) < 0.5, -1.0, 1.0)
        if variant == "eigh":
            H = hessians(setname, x, aux if setname != "ball" else aux[0])
            w, V = np.linalg.eigh(H)  # ascending eigenvalues, columns = eigenvectors
            lam_k = w[rows, k]
            v = V[rows, :, k]
        else:
            lam_k, v = structured_eigenpair(setname, x, aux, k)
        step = sgn / np.sqrt(lam_k)
        yp = x + step[:, None] * v
        if setname == "simplex":
            yp = np.concatenate([yp, (yN - step * v.sum(1))[:, None]], axis=1)
        l = losses()
        c = (yp * l).sum(1) if per_instance else yp @ l
        charged += c
        L += l
        if lam_noise > 0:
            c = c + (rng.laplace(0.0, lam_noise, size=(I, d)) * yp).sum(1)
        g += (n * c * sgn * np.sqrt(lam_k))[:, None] * v
        if setname == "simplex" and t < T:
            y, yN = simplex_newton(g, y, yN, eta)
    secs = time.perf_counter() - start
    reg = charged - losses.comparator(L)
    return secs, reg.mean(), reg.std(ddof=1) / math.sqrt(I)


# ---- dpregret -------------------------------------------------------------------------------------------


def run_dpregret(binary, setname, n, T, eps, instances, threads, workdir, per_instance=False):
    kind, dof, *_ = SETS[setname]
    d = dof(n)
    tag = f"{setname}_{n}_{T}_{eps:g}_{instances}"
    cfg = os.path.join(workdir, f"{tag}.toml")
    with open(cfg, "w") as f:
        f.write(f"[run]\nseed = 1\ninstances = {instances}\nrounds = {T}\ncheckpoints = 4\n"
                f"[adversary]\nkind = \"{kind}\"\nd = {d}\nper_instance = {'true' if per_instance else 'false'}\n"
                f"[learner]\nalgorithm = \"dp-scrible-{setname}\"\nepsilon = {eps}\n")
    out = os.path.join(workdir, f"out_{tag}")
    cmd = [binary, "run", cfg, "--out", out, "--backend", "cpu", "--quiet"]
    if threads:
        cmd += ["--threads", str(threads)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "run.json")) as f:
        rj = json.load(f)
    with open(os.path.join(out, "summary.csv")) as f:
        last = [r for r in csv.DictReader(f) if r["t"] == str(T)][0]
    return rj, float(last["mean"]), float(last["sem"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default="build/dpregret")
    ap.add_argument("--threads", type=int, default=0, help="dpregret --threads (0 = all cores)")
    ap.add_argument("--quick", action="store_true", help="small sizes only (smoke test)")
    ap.add_argument("--check", action="store_true", help="also compare mean regrets on a small case")
    ap.add_argument("--T", type=int, default=4096)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--budget", type=float, default=4e7, help="instance-rounds per dpregret run (n = 2)")
    ap.add_argument("--numpy-seconds", type=float, default=8.0, help="target seconds per NumPy run")
    ap.add_argument("--out", default="experiments/bench/results/bandits_scrible.csv")
    args = ap.parse_args()

    ns = [2, 8] if args.quick else [2, 8, 32]
    T = 1024 if args.quick else args.T
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as work:
        if args.check:
            # one loss sequence per instance on both sides: means over sequences and learner randomness agree
            for setname in SETS:
                _, m_ours, se_ours = run_dpregret(args.binary, setname, 2, 1024, 10.0, 4000, args.threads, work, True)
                for variant in (["eigh", "structured"] if setname != "simplex" else ["eigh"]):
                    _, m_np, se_np = numpy_scrible(setname, 2, 1024, 10.0, 4000, 1024, variant, per_instance=True)
                    z = (m_ours - m_np) / math.hypot(se_ours, se_np)
                    print(f"check {setname} n=2 T=1024 eps=10: dpregret {m_ours:.2f} +- {se_ours:.2f}, numpy-{variant} "
                          f"{m_np:.2f} +- {se_np:.2f}, z = {z:+.2f}", flush=True)
        for setname in SETS:
            for n in ns:
                d = SETS[setname][1](n)
                inst = max(64, min(100000, int(args.budget / (T * max(1, n // 2)))))
                rj, _, _ = run_dpregret(args.binary, setname, n, T, args.eps, inst, args.threads, work)
                ours = rj["throughput"]["instance_rounds_per_second"]
                rj1, _, _ = run_dpregret(args.binary, setname, n, T, args.eps, max(64, inst // 2), 1, work)
                ours1 = rj1["throughput"]["instance_rounds_per_second"]
                row = dict(set=setname, n=n, d=d, T=T, epsilon=args.eps, instances=inst,
                           dpregret_instance_rounds_per_s=f"{ours:.4g}", dpregret_wall_s=f"{rj['wall_seconds']:.3f}",
                           dpregret_1thread_instance_rounds_per_s=f"{ours1:.4g}")
                I = 4096
                for variant in (["eigh", "structured"] if setname != "simplex" else ["eigh"]):
                    # calibrate the prefix length to ~numpy_seconds
                    secs, _, _ = numpy_scrible(setname, n, T, args.eps, I, 4, variant)
                    rounds = int(max(4, min(T, args.numpy_seconds / max(secs / 4, 1e-9))))
                    secs, _, _ = numpy_scrible(setname, n, T, args.eps, I, rounds, variant)
                    theirs = I * rounds / secs
                    row[f"numpy_{variant}_instance_rounds_per_s"] = f"{theirs:.4g}"
                    row[f"numpy_{variant}_rounds"] = rounds
                    row[f"speedup_vs_numpy_{variant}"] = f"{ours / theirs:.1f}"
                row["numpy_instances"] = I
                row["backend"] = rj["backend"]
                row["threads"] = rj["threads"]
                rows.append(row)
                print(", ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    fields = []
    for r in rows:
        for k in r:
            if k not in fields:
                fields.append(k)
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    meta = dict(machine=platform.node(), cpu=platform.processor() or platform.machine(), cores=os.cpu_count(),
                numpy=np.__version__, python=platform.python_version(), date=time.strftime("%Y-%m-%d"),
                binary=args.binary, T=T, epsilon=args.eps)
    with open(os.path.splitext(args.out)[0] + ".meta.json", "w") as f:
        json.dump(meta, f, indent=2)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    sys.exit(main())
