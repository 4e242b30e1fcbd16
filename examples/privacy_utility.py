"""The quickstart's privacy-utility curve from Python: DP-FTRL's regret at t = T against epsilon, Hedge as the
epsilon = inf reference (experiments/quickstart.toml; docs/PYTHON.md). Needs matplotlib.

    python3 examples/privacy_utility.py [out.png]
"""
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import dpregret

r = dpregret.run("experiments/quickstart.toml", set={"run.instances": 300})
eps = np.array([p["epsilon"] for p in r.privacy])
private = [i for i, p in enumerate(r.points) if p["algorithm"] == "dp-ftrl-experts"]
hedge = [i for i, p in enumerate(r.points) if p["algorithm"] == "hedge"][0]
q05, q50, q95 = np.quantile(r.final_regret[private], [0.05, 0.5, 0.95], axis=1)
plt.fill_between(eps[private], q05, q95, alpha=0.3, label="DP-FTRL: q05-q95")
plt.plot(eps[private], q50, "o-", label="DP-FTRL: median")
plt.axhline(np.median(r.final_regret[hedge]), ls="--", color="k", label="Hedge (non-private): median")
plt.xscale("log"); plt.xlabel("epsilon"); plt.ylabel("regret at T"); plt.legend()
plt.savefig(sys.argv[1] if len(sys.argv) > 1 else "privacy_utility.png", dpi=120)
