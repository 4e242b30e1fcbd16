"""JAX peer of bench_experts.py: the same two algorithms written the way a JAX user would write them --
jit over the whole run, vmap-free batching over instances (arrays I x d), lax.scan over rounds -- timed
after compilation. Runs inside the virtual environment bench_experts.py creates (JAX needs Python >= 3.12);
prints one JSON object.

  hedge            L (I x d); per round a max-subtracted softmax, the expected loss <x_t, l_t>, L += l_t.
  dp-ftrl-experts  AS17 Alg. 1 + 2, padded tree, Laplace nodes, with the O(h N) tree of docs/spec/model.md §1.4:
                   the noise of the nodes currently in S_t is kept per level (levels: (k+1) x I x d), and the
                   padding of prefix t-1, a sum of r_t Laplace(lambda) draws, is drawn as k Laplace draws of
                   which the first r_t are summed (exact in law; 20x faster on CPU than lambda (G1 - G2),
                   G ~ Gamma(r_t), whose jax.random.gamma is a rejection loop: --gamma-padding).
                   jax.random (threefry, the default PRNG) for every draw.
Losses: one Bernoulli vector per round shared by the instances (expert 0 has mean 0.4, the others 0.5).
Precision: JAX's default float32 (what a JAX user gets); --x64 runs float64.

Usage: python jax_peer.py --algorithm hedge --d 1024 --T 1024 --instances 64 --rounds 1024 --eta 0.1
       [--lam 10.0] [--x64]
"""
import argparse
import json
import math
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--algorithm", required=True, choices=["hedge", "dp-ftrl-experts"])
    ap.add_argument("--d", type=int, required=True)
    ap.add_argument("--T", type=int, required=True)
    ap.add_argument("--instances", type=int, required=True)
    ap.add_argument("--rounds", type=int, required=True, help="rounds actually run (a prefix of T)")
    ap.add_argument("--eta", type=float, required=True)
    ap.add_argument("--lam", type=float, default=0.0, help="Laplace scale of a tree node (dp-ftrl-experts)")
    ap.add_argument("--x64", action="store_true")
    ap.add_argument("--gamma-padding", action="store_true",
                    help="padding as lam (G1 - G2), G ~ Gamma(r) (jax.random.gamma: a rejection loop, much slower "
                         "on CPU); default: k Laplace draws, the first r_t summed")
    a = ap.parse_args()

    import jax

    jax.config.update("jax_enable_x64", a.x64)
    import jax.numpy as jnp
    from jax import lax

    dt = jnp.float64 if a.x64 else jnp.float32
    I, d, T, R = a.instances, a.d, a.T, a.rounds
    k = math.ceil(math.log2(T)) if T > 1 else 0
    means = jnp.full((d,), 0.5, dt).at[0].set(0.4)
    eta = dt(a.eta)
    lam = dt(a.lam)

    def losses(key):
        return (jax.random.uniform(key, (d,), dt) < means).astype(dt)

    def expected_loss(V, l):
        v = V - V.max(axis=1, keepdims=True)
        w = jnp.exp(v)
        return (w @ l) / w.sum(axis=1)

    def hedge(key):
        def step(carry, t):
            L, total, key = carry
            key, kl = jax.random.split(key)
            l = losses(kl)
            total = total + expected_loss(-eta * L, l)
            return (L + l, total, key), None

        init = (jnp.zeros((I, d), dt), jnp.zeros((I,), dt), key)
        (_, total, _), _ = lax.scan(step, init, jnp.arange(1, R + 1, dtype=jnp.int32))
        return total

    def dp_ftrl(key):
        def step(carry, t):
            L, levels, tree, total, key = carry
            key, kl, kg1, kg2, kn = jax.random.split(key, 5)
            r = k - lax.population_count(t - 1)  # padding draws of prefix t-1 (docs/spec/model.md §1.5)
            if a.gamma_padding:
                shape = jnp.maximum(r, 1).astype(dt)
                pad = jnp.where(r > 0, lam * (jax.random.gamma(kg1, shape, (I, d), dt) -
                                              jax.random.gamma(kg2, shape, (I, d), dt)), dt(0))
            else:  # r explicit Laplace draws (k drawn, the first r kept): no rejection loop
                z = jax.random.laplace(kg1, (max(k, 1), I, d), dt)
                keep = (jnp.arange(max(k, 1)) < r).astype(dt)[:, None, None]
                pad = lam * (z * keep).sum(axis=0)
            l = losses(kl)
            total = total + expected_loss(-eta * (L + tree + pad), l)
            L = L + l
            # prefix t: the node of level i = ctz(t) completes; the levels below it merge into it
            i = lax.population_count((t & -t) - 1)

            def drop(j, c):
                lv, tr = c
                return lv.at[j].set(0), tr - lv[j]

            levels, tree = lax.fori_loop(0, i, drop, (levels, tree))
            new = lam * jax.random.laplace(kn, (I, d), dt)
            levels = levels.at[i].set(new)
            return (L, levels, tree + new, total, key), None

        init = (jnp.zeros((I, d), dt), jnp.zeros((k + 1, I, d), dt), jnp.zeros((I, d), dt), jnp.zeros((I,), dt), key)
        (_, _, _, total, _), _ = lax.scan(step, init, jnp.arange(1, R + 1, dtype=jnp.int32))
        return total

    fn = hedge if a.algorithm == "hedge" else dp_ftrl
    key = jax.random.key(1)
    t0 = time.perf_counter()
    compiled = jax.jit(fn).lower(key).compile()
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    total = compiled(key).block_until_ready()
    run_s = time.perf_counter() - t0
    ok = bool(jnp.all(jnp.isfinite(total)))
    print(json.dumps(dict(expert_rounds_per_s=I * R * d / run_s, run_s=run_s, compile_s=compile_s, finite=ok,
                          jax=jax.__version__, dtype=str(jnp.dtype(dt)), mean_total=float(total.mean()))))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
