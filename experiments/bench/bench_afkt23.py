#!/usr/bin/python3
"""Instance-rounds per second of `svt-experts` (AFKT23 Alg. 1, docs/spec/afkt23.md §C1) on the halving adversary at
d = 2^10, 2^16, 2^20: dpregret vs a vectorised NumPy version; and exponential-mechanism draws per second
(Gumbel-max over the same d random scores, c = 0.5): `dpregret sample expmech --scores s.npy` (the learners'
code path, wall time of the whole command including start-up and writing the indices, all hardware threads)
against NumPy's argmin(c s - Gumbel) over batches of draws (one thread).

dpregret: `dpregret run` on a generated config (halving, svt-experts eps = 10, pure, the defaults of C1), the
throughput the run measured itself (run.json "throughput"."instance_rounds_per_second"). The learner keeps O(1)
state per instance and reads L_{t-1} from the engine (kReadsCumulative); the engine builds the shared loss
row of each round (2^20 halving ranks: a 12-round Feistel permutation per expert per round).

NumPy (fair: what a careful researcher would write), for all I instances at once, per round:
    row = (rank >= alive(phase)) with row[x*] = 0      (the halving row; ranks from one stored permutation)
    switching instances: x = argmin(eta/2 L - Gumbel(size = (m, d)), axis 1); k += 1; q = 0; rho = Lthr + Lap(4/eps)
      (the second peer, numpy_shared_pass_ir_per_s, shares the round's O(d) pass among the m switching instances,
      which see the same L: cdf = cumsum(exp(-eta/2 (L - min L))), x = searchsorted(cdf, U cdf[-1]))
    asking instances: fire = q + Lap(8/eps) > rho
    loss = row[x]; q += loss; L += row
numpy.random.Generator (PCG64). The halving row is O(d) vector work per round in both (dpregret regenerates it
only when the phase changes: Halving::row_epoch). NumPy runs all T rounds (`numpy_rounds`), switches included.

Usage: /usr/bin/python3 experiments/bench/bench_afkt23.py [--binary build/dpregret] [--quick] [--precision float]
       [--out experiments/bench/results/afkt23_svt.csv] [--threads N]
       [--check [--shared-pass] | --check-potential | --check-tree | --time-potential | --time-tree]
--precision float runs dpregret in float, where svt-experts (and, with --check-potential and --check-tree,
potential-svt-experts and tree-experts) draw with their exact samplers (docs/spec/model.md §1.9, §1.10); the NumPy peers are unchanged (double).
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


def c1_params(d, T, eps, beta=0.05):
    K = math.ceil(6 * math.ceil(math.log2(d)) + 24 * math.log(1 / beta))
    B = math.log(2 * T * T / beta)
    eta = eps / (2 * K)
    return K, eta, 4 / eta + 8 * B / eps


def numpy_svt(d, T, n, eps, rounds, seed=1, totals=None, shared_pass=False):
    """Seconds for `rounds` rounds of n svt-experts instances on a halving sequence (d experts, horizon T); with
    `totals` (a list), also appends each instance's total loss to it. shared_pass: the instances that switch in a
    round share its O(d) work (they share L): one CDF of exp(-eta/2 L), then one uniform and a binary search per
    draw -- the same law as the Gumbel argmin, drawn from O(d + m log d) work instead of O(m d)."""
    rng = np.random.default_rng(seed)
    K, eta, Lthr = c1_params(d, T, eps)
    star = int(rng.integers(d))
    rank = np.empty(d, dtype=np.int64)
    others = np.delete(np.arange(d), star)
    rank[others] = rng.permutation(d - 1)
    rank[star] = -1
    P = math.ceil(math.log2(d))
    m = max(1, T // P)
    L = np.zeros(d)
    x = rng.integers(d, size=n)
    k = np.zeros(n)
    q = np.zeros(n)
    rho = Lthr + rng.laplace(0, 4 / eps, n)
    pending = np.zeros(n, dtype=bool)
    total = np.zeros(n)
    t0 = time.perf_counter()
    for t in range(1, rounds + 1):
        phase = min(P, (t - 1) // m + 1)
        alive = (d - 1) >> phase
        row = (rank >= alive).astype(np.float64)
        row[star] = 0.0
        if pending.any():
            idx = np.nonzero(pending)[0]
            if shared_pass:
                cdf = np.cumsum(np.exp(-eta / 2 * (L - L.min())))
                x[idx] = np.minimum(np.searchsorted(cdf, rng.random(idx.size) * cdf[-1], side="right"), d - 1)
            else:
                g = rng.gumbel(size=(idx.size, d))
                x[idx] = np.argmin(eta / 2 * L[None, :] - g, axis=1)
            k[idx] += 1
            q[idx] = 0
            rho[idx] = Lthr + rng.laplace(0, 4 / eps, idx.size)
        asks = ~pending & (k < K)
        fire = asks & (q + rng.laplace(0, 8 / eps, n) > rho)
        loss = row[x]
        q += loss
        total += loss
        pending = fire
        L += row
    if totals is not None:
        totals.extend(total.tolist())
    return time.perf_counter() - t0


def numpy_potential(d, T, n, eta, eps0, alpha, K, seed, totals):
    """AFKT23 Algorithm 5 written from docs/spec/afkt23.md §C4 (paper sensitivity: Lap(2/eps0) threshold, Lap(4/eps0)
    queries; query (ln phi(t*) - ln phi(t-1)) / eta against 2 alpha / eta; x ~ exp(-eta L_{t-1})) on a halving
    sequence, n instances at once; appends each instance's total loss to `totals`, returns the mean switches."""
    rng = np.random.default_rng(seed)
    star = int(rng.integers(d))
    rank = np.empty(d, dtype=np.int64)
    others = np.delete(np.arange(d), star)
    rank[others] = rng.permutation(d - 1)
    rank[star] = -1
    P = math.ceil(math.log2(d))
    m = max(1, T // P)
    L = np.zeros(d)
    thr = 2 * alpha / eta
    x = rng.integers(d, size=n)
    k = np.zeros(n)
    acc = np.zeros(n)  # ln phi(t*), ln phi(0) = 0
    rho = thr + rng.laplace(0, 2 / eps0, n)
    pending = np.zeros(n, dtype=bool)
    total = np.zeros(n)
    for t in range(1, T + 1):
        phase = min(P, (t - 1) // m + 1)
        row = (rank >= ((d - 1) >> phase)).astype(np.float64)
        row[star] = 0.0
        z = -eta * L
        lp = z.max() + math.log(np.exp(z - z.max()).sum()) - math.log(d)  # ln phi(t - 1)
        if pending.any():
            idx = np.nonzero(pending)[0]
            x[idx] = np.argmin(eta * L[None, :] - rng.gumbel(size=(idx.size, d)), axis=1)
            k[idx] += 1
            acc[idx] = lp
            rho[idx] = thr + rng.laplace(0, 2 / eps0, idx.size)
        asks = ~pending & (k < K)
        fire = asks & ((acc - lp) / eta + rng.laplace(0, 4 / eps0, n) > rho)
        total += row[x]
        pending = fire
        L += row
    totals.extend(total.tolist())
    return float(k.mean())


# Keys at which potential-svt-experts' phases end (so its draws are exercised), with the paper's sparse-vector noise
# (Lap(2/eps0), Lap(4/eps0)) that numpy_potential implements.
POTENTIAL_KEYS = dict(eta=0.3, eps0=20.0, alpha=0.5, switch_budget=20)


def potential_config(d, T, n, precision, seed, noise=None):
    return (f"[run]\nseed = {seed}\ninstances = {n}\nrounds = {T}\ncheckpoints = 1\nprecision = \"{precision}\"\n"
            f"[adversary]\nkind = \"halving\"\nd = {d}\n[learner]\nalgorithm = \"potential-svt-experts\"\n"
            f"epsilon = 1\nsensitivity = \"paper\"\n" + "".join(f"{k} = {v}\n" for k, v in POTENTIAL_KEYS.items()) +
            (f"noise = \"{noise}\"\n" if noise else ""))


def time_potential(a):
    """Instance-rounds per second of potential-svt-experts (POTENTIAL_KEYS, halving) in three dpregret modes -- float
    with the exact samplers (the float default, afkt23.md §C4 "Exact samplers"), float with the continuous samplers
    (noise = "laplace") and double (continuous) -- and of numpy_potential (double, all instances at once; its log
    potential is one O(d) pass per round shared by all instances), in one run."""
    shapes = [(1 << 10, 2000, 1000), (1 << 16, 256 if a.quick else 512, 100)]
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for d, T, n in shapes:
            row = dict(d=d, T=T, instances=n)
            time_three_modes(a, lambda prec, noise: potential_config(d, T, n, prec, 1, noise), f"pot_{d}", work, row)
            t0 = time.perf_counter()
            numpy_potential(d, T, n, POTENTIAL_KEYS["eta"], POTENTIAL_KEYS["eps0"], POTENTIAL_KEYS["alpha"],
                            POTENTIAL_KEYS["switch_budget"], 1, [])
            row["numpy_ir_per_s"] = f"{n * T / (time.perf_counter() - t0):.4g}"
            row["float_exact_vs_numpy"] = f"{float(row['dpregret_float_exact_ir_per_s']) / float(row['numpy_ir_per_s']):.3g}"
            rows.append(row)
            print(row, flush=True)
    return write_rows(a, rows, "experiments/bench/results/afkt23_potential.csv")


def time_three_modes(a, config_of, label, work, row):
    """Runs config_of(precision, noise) in the three modes of the exact-sampler benchmarks -- float with the exact
    samplers (the float default), float with the continuous ones (noise = "laplace"), double (continuous) -- and
    puts each one's instance-rounds/s and whether its report holds as run ("lattice") into row."""
    for name, prec, noise in (("float_exact", "float", None), ("float_continuous", "float", "laplace"),
                              ("double_continuous", "double", None)):
        rj = run_config(a.binary, config_of(prec, noise), f"{label}_{name}", work, a.threads)
        row[f"dpregret_{name}_ir_per_s"] = f"{rj['throughput']['instance_rounds_per_second']:.4g}"
        row[f"{name}_as_run"] = "lattice" if rj["points"][0]["privacy"]["accountant"].startswith("lattice") \
            else "continuous"


def write_rows(a, rows, default_out):
    """Writes rows to --out (default_out when not given) with its .meta.json."""
    out = a.out if a.out != DEFAULT_OUT else default_out
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    write_meta(out, binary=a.binary, threads=a.threads or os.cpu_count())
    return 0


def check_potential(a):
    """Two-sample comparison of potential-svt-experts (dpregret) with numpy_potential (independent code and RNG)
    at keys where phases do end: d = 256, T = 2000, eta = 0.3, eps0 = 20, alpha = 0.5, K = 20."""
    import csv as _csv
    d, T, n = 256, 2000, 2000
    keys = POTENTIAL_KEYS
    with tempfile.TemporaryDirectory() as work:
        cfg = potential_config(d, T, n, a.precision, 3)
        run_config(a.binary, cfg, "checkp", work, a.threads)
        with open(os.path.join(work, "out_checkp", "final_regret.csv")) as f:
            rows = list(_csv.DictReader(f))
        ours = [float(r["realized_regret"]) for r in rows]
        ours_sw = np.mean([float(r["switches"]) for r in rows])
    theirs, sw = [], []
    for seed in range(20):
        sw.append(numpy_potential(d, T, n // 20, keys["eta"], keys["eps0"], keys["alpha"], keys["switch_budget"],
                                  200 + seed, theirs))
    m1, m2 = np.mean(ours), np.mean(theirs)
    se = math.sqrt(np.var(ours, ddof=1) / len(ours) + np.var(theirs, ddof=1) / len(theirs))
    print(f"potential-svt-experts: dpregret mean total loss {m1:.2f} ({ours_sw:.2f} switches), NumPy {m2:.2f} "
          f"({np.mean(sw):.2f} switches), difference {m1 - m2:+.2f} = {(m1 - m2) / se:+.2f} standard errors")
    return 0 if abs(m1 - m2) < 4 * se else 1


def numpy_tree(d, T, n, eps, B, K, tau, p, seed, totals):
    """AFKT23 Algorithm 4 written from docs/spec/afkt23.md §C3 with the engine's documented split (Laplace node noise
    2Bh/eps, h = ceil(log2 T) released levels; selections eps/(2KB) each, c = eps/(4KB)) on n independent realizable
    sequences (x* never loses, the others Bernoulli(p)); appends each total loss to `totals`, returns mean sets.
    The continuous law: dpregret's exact samplers (the float default) are compared with it too, as the same law up to
    the lattice's raise of b (at most 1.6%) and the exact draw's fit of c (at most 0.1%)."""
    rng = np.random.default_rng(seed)
    h = max(1, math.ceil(math.log2(T)))
    b = 2 * B * h / eps
    c = eps / (2 * K * B) / 2
    sets_all = []
    for _ in range(n):
        star = int(rng.integers(d))
        L = np.zeros(d)
        excluded = np.zeros(d, dtype=bool)
        members, base, start, sets, total = None, None, 0, 0, 0.0
        nodes = {}
        for t in range(1, T + 1):
            row = (rng.random(d) < p).astype(np.float64)
            row[star] = 0.0
            best = math.inf
            if sets > 0:
                q = t - start  # leaves start .. t-1 of this phase's trees
                chat = L[members] - base
                for j in range(q.bit_length()):
                    if q >> j & 1:
                        for i in range(B):
                            key = (i, j, (q >> j) - 1)
                            if key not in nodes:
                                nodes[key] = rng.laplace(0, b)
                            chat[i] += nodes[key]
                best = chat.min()
                x = members[int(np.argmin(chat))]
            if (sets == 0 or best > tau) and sets < K:
                if sets > 0:
                    excluded[members] = True
                keys = c * L - rng.gumbel(size=d)
                keys[excluded] = np.inf
                members = np.argsort(keys, kind="stable")[:B]
                base = L[members].copy()
                nodes = {}
                sets += 1
                start = t
                x = members[0]
            total += row[x]
            L += row
        totals.append(total)
        sets_all.append(sets)
    return float(np.mean(sets_all))


def check_tree(a):
    """Two-sample comparison of tree-experts (dpregret, per-instance realizable sequences) with numpy_tree."""
    import csv as _csv
    d, T, n, eps, B, K, tau, p = 64, 1000, 1000, 200.0, 4, 5, 6.0, 0.3
    with tempfile.TemporaryDirectory() as work:
        cfg = (f"[run]\nseed = 3\ninstances = {n}\nrounds = {T}\ncheckpoints = 1\nprecision = \"{a.precision}\"\n"
               f"[adversary]\nkind = \"realizable\"\nd = {d}\np = {p}\nper_instance = true\n"
               f"[learner]\nalgorithm = \"tree-experts\"\nepsilon = {eps}\nset_size = {B}\nmax_sets = {K}\n"
               f"threshold = {tau}\n")
        run_config(a.binary, cfg, "checkt", work, a.threads)
        with open(os.path.join(work, "out_checkt", "final_regret.csv")) as f:
            rows = list(_csv.DictReader(f))
        ours = [float(r["realized_regret"]) for r in rows]
        ours_sets = np.mean([float(r["sets"]) for r in rows])
    theirs = []
    their_sets = numpy_tree(d, T, n, eps, B, K, tau, p, 300, theirs)
    m1, m2 = np.mean(ours), np.mean(theirs)
    se = math.sqrt(np.var(ours, ddof=1) / len(ours) + np.var(theirs, ddof=1) / len(theirs))
    print(f"tree-experts ({a.precision}): dpregret mean total loss {m1:.2f} ({ours_sets:.2f} sets), NumPy {m2:.2f} "
          f"({their_sets:.2f} sets), difference {m1 - m2:+.2f} = {(m1 - m2) / se:+.2f} standard errors")
    return 0 if abs(m1 - m2) < 4 * se else 1


def tree_config(d, T, n, prec, noise=None):
    """tree-experts on a shared realizable sequence (p = 0.3) at the defaults of §C3 but a threshold of 6 and sets of
    4 (so that sets are redrawn), 8 sets at most, eps = 200."""
    return (f"[run]\nseed = 1\ninstances = {n}\nrounds = {T}\ncheckpoints = 1\nprecision = \"{prec}\"\n"
            f"[adversary]\nkind = \"realizable\"\nd = {d}\np = 0.3\n"
            f"[learner]\nalgorithm = \"tree-experts\"\nepsilon = 200\nset_size = 4\nmax_sets = 8\nthreshold = 6\n"
            + (f"noise = \"{noise}\"\n" if noise else ""))


def time_tree(a):
    """Instance-rounds per second of tree-experts (tree_config) in three dpregret modes -- float with the exact
    samplers (the float default, afkt23.md §C3 "Exact samplers"), float with the continuous samplers (noise =
    "laplace") and double (continuous) -- and of numpy_tree (double; a loop per instance, the peer of --check-tree,
    not a vectorised one: the sets and trees are per instance), in one run."""
    shapes = [(64, 1000, 2000), (1 << 10, 1000, 2000)]
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for d, T, n in shapes:
            row = dict(d=d, T=T, instances=n)
            time_three_modes(a, lambda prec, noise: tree_config(d, T, n, prec, noise), f"tree_{d}", work, row)
            m = 20
            t0 = time.perf_counter()
            numpy_tree(d, T, m, 200.0, 4, 8, 6.0, 0.3, 1, [])
            row["numpy_ir_per_s"] = f"{m * T / (time.perf_counter() - t0):.4g}"
            row["float_exact_vs_float_continuous"] = \
                f"{float(row['dpregret_float_exact_ir_per_s']) / float(row['dpregret_float_continuous_ir_per_s']):.3g}"
            rows.append(row)
            print(row, flush=True)
    return write_rows(a, rows, "experiments/bench/results/afkt23_tree.csv")


def numpy_draws_per_s(d, draws):
    """Exponential-mechanism draws per second in NumPy: argmin(c s - Gumbel) over d scores, `draws` at once."""
    rng = np.random.default_rng(2)
    s = rng.random(d)
    batch = max(1, min(draws, (1 << 24) // d))
    t0 = time.perf_counter()
    done = 0
    while done < draws:
        b = min(batch, draws - done)
        np.argmin(0.5 * s[None, :] - rng.gumbel(size=(b, d)), axis=1)
        done += b
    return draws / (time.perf_counter() - t0)


def dpregret_draws_per_s(binary, d, draws, work):
    """Exponential-mechanism draws per second of `dpregret sample expmech` over the scores numpy_draws_per_s uses."""
    rng = np.random.default_rng(2)
    path = os.path.join(work, f"scores_{d}.npy")
    np.save(path, rng.random(d))
    import subprocess
    out = os.path.join(work, f"draws_{d}.npy")
    t0 = time.perf_counter()
    subprocess.run([binary, "sample", "expmech", "--scores", path, "--c", "0.5", "--n", str(draws), "--seed", "1",
                    "--out", out], check=True)
    return draws / (time.perf_counter() - t0)


DEFAULT_OUT = "experiments/bench/results/afkt23_svt.csv"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default="build/dpregret")
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--precision", choices=["double", "float"], default="double",
                    help="[run] precision of the dpregret runs (float: svt-experts' exact samplers)")
    ap.add_argument("--check", action="store_true",
                    help="instead of timing: compare the mean total loss of dpregret and of this NumPy implementation "
                         "(written from docs/spec/afkt23.md §C1, independent RNG) at d = 1024, T = 4096, "
                         "2000 instances each")
    ap.add_argument("--shared-pass", action="store_true",
                    help="with --check: compare against the NumPy peer that shares each round's O(d) pass (the same law)")
    ap.add_argument("--check-potential", action="store_true",
                    help="instead of timing: the same comparison for potential-svt-experts (AFKT23 Alg. 5) against a "
                         "NumPy implementation written from docs/spec/afkt23.md §C4, at keys where its phases end")
    ap.add_argument("--time-potential", action="store_true",
                    help="instead of svt-experts: potential-svt-experts' throughput in float (exact samplers), float "
                         "(continuous) and double against numpy_potential, written to results/afkt23_potential.csv")
    ap.add_argument("--time-tree", action="store_true",
                    help="instead of svt-experts: tree-experts' throughput in float (exact samplers), float (continuous) "
                         "and double, written to results/afkt23_tree.csv")
    ap.add_argument("--check-tree", action="store_true",
                    help="instead of timing: the same comparison for tree-experts (AFKT23 Alg. 4) against a NumPy "
                         "implementation written from docs/spec/afkt23.md §C3, on per-instance realizable sequences")
    a = ap.parse_args()
    if a.check_tree:
        return check_tree(a)
    if a.time_tree:
        return time_tree(a)
    if a.check:
        return check(a)
    if a.check_potential:
        return check_potential(a)
    if a.time_potential:
        return time_potential(a)
    eps = 10.0
    shapes = [(1 << 10, 4096, 1000), (1 << 16, 2048, 100), (1 << 20, 512 if a.quick else 1024, 100)]
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for d, T, n in shapes:
            cfg = (f"[run]\nseed = 1\ninstances = {n}\nrounds = {T}\ncheckpoints = 4\nprecision = \"{a.precision}\"\n"
                   f"[adversary]\nkind = \"halving\"\nd = {d}\n"
                   f"[learner]\nalgorithm = \"svt-experts\"\nepsilon = {eps}\n")
            rj = run_config(a.binary, cfg, f"svt_{d}", work, a.threads)
            ours = rj["throughput"]["instance_rounds_per_second"]
            nr = T
            secs = numpy_svt(d, T, n, eps, nr)
            theirs = n * nr / secs
            shared = n * nr / numpy_svt(d, T, n, eps, nr, shared_pass=True)
            n_draws = max(64, (1 << 27) // d) if not a.quick else max(16, (1 << 24) // d)
            draws = numpy_draws_per_s(d, n_draws)
            ours_draws = dpregret_draws_per_s(a.binary, d, n_draws, work)
            rows.append(dict(d=d, T=T, instances=n, epsilon=eps, precision=a.precision, dpregret_ir_per_s=f"{ours:.4g}",
                             numpy_ir_per_s=f"{theirs:.4g}", numpy_rounds=nr, ratio=f"{ours / theirs:.3g}",
                             numpy_shared_pass_ir_per_s=f"{shared:.4g}", ratio_shared_pass=f"{ours / shared:.3g}",
                             expmech_draws=n_draws,
                             dpregret_expmech_draws_per_s=f"{ours_draws:.4g}",
                             numpy_expmech_draws_per_s=f"{draws:.4g}",
                             expmech_ratio=f"{ours_draws / draws:.3g}",
                             dpregret_expmech_candidates_per_s=f"{ours_draws * d:.4g}"))
            print(rows[-1], flush=True)
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    write_meta(a.out, binary=a.binary, threads=a.threads or os.cpu_count())


def check(a):
    """Two-sample comparison of mean total loss: dpregret vs the NumPy implementation (independent code and RNG)."""
    import csv as _csv
    d, T, n, eps = 1024, 4096, 2000, 10.0
    with tempfile.TemporaryDirectory() as work:
        cfg = (f"[run]\nseed = 3\ninstances = {n}\nrounds = {T}\ncheckpoints = 1\nprecision = \"{a.precision}\"\n"
               f"[adversary]\nkind = \"halving\"\nd = {d}\n[learner]\nalgorithm = \"svt-experts\"\nepsilon = {eps}\n")
        run_config(a.binary, cfg, "check", work, a.threads)
        with open(os.path.join(work, "out_check", "final_regret.csv")) as f:
            ours = [float(r["realized_regret"]) for r in _csv.DictReader(f)]
    theirs = []
    for seed in range(20):  # 20 sequences of 100 instances: the halving order is drawn per sequence, as dpregret
        numpy_svt(d, T, n // 20, eps, T, seed=100 + seed, totals=theirs, shared_pass=a.shared_pass)
    m1, m2 = np.mean(ours), np.mean(theirs)
    se = math.sqrt(np.var(ours, ddof=1) / len(ours) + np.var(theirs, ddof=1) / len(theirs))
    print(f"dpregret mean total loss {m1:.2f} (n = {len(ours)}), NumPy {m2:.2f} (n = {len(theirs)}), "
          f"difference {m1 - m2:+.2f} = {(m1 - m2) / se:+.2f} standard errors")
    return 0 if abs(m1 - m2) < 4 * se else 1


if __name__ == "__main__":
    sys.exit(main())
