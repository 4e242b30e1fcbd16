"""The rows gpu_session.sh adds to experiments/bench/results/gpu_targets.csv, from its bench CSV, the JAX peer's
lines and device.txt:
  date,commit,device,algorithm,d,T,precision,instances,policy,rate,jax_rate
rate: run.json's expert-rounds/s at the larger instance count (n2); jax_rate: the JAX peer's at the largest
instance count it ran (float32), for the same algorithm, only on float rows at d = 1024 (the shape it runs).

  python3 gpu_targets_rows.py gpu_bench.csv jax.txt device.txt > rows.csv
"""
import csv
import datetime
import json
import os
import re
import sys


def main():
    bench, jaxf, devf = sys.argv[1:4]
    dev = open(devf).read().splitlines()
    device = dev[1].split(",")[0].strip() if len(dev) > 1 else "unknown"
    commit = next((line.split()[1] for line in dev if line.startswith("commit ")), "unknown")
    jax = {}
    if os.path.exists(jaxf):
        for line in open(jaxf):
            m = re.match(r"jax (\S+) d=1024 T=1024 I=(\d+): (.*)", line.strip())
            if not m:
                continue
            try:
                jax[m.group(1)] = json.loads(m.group(3))["expert_rounds_per_s"]
            except (ValueError, KeyError):
                pass
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow("date,commit,device,algorithm,d,T,precision,instances,policy,rate,jax_rate".split(","))
    for r in csv.DictReader(open(bench)):
        jr = jax.get(r["algorithm"], "") if r["d"] == "1024" and r["precision"] == "float" else ""
        pol = r["policy"].strip('"') + (" [" + r["run_keys"] + "]" if r["run_keys"] else "")
        jr = f"{jr:.4g}" if isinstance(jr, float) else jr
        out.writerow([datetime.date.today(), commit, device, r["algorithm"], r["d"], r["T"], r["precision"], r["n2"],
                      pol, r["rate_n2"], jr])


if __name__ == "__main__":
    main()
