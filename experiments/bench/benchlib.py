"""What every script of experiments/bench/ shares: run `dpregret run` on a generated config and read the
run.json it wrote (its "throughput" is measured by the run itself, over the simulation proper), and write
the `<results>.meta.json` that says where, when and at which commit a CSV was measured."""
import json
import os
import platform
import subprocess
import time


def run_config(binary, toml_text, tag, workdir, threads=0, backend="cpu"):
    """Writes `toml_text` to workdir/<tag>.toml, runs it with --quiet into workdir/out_<tag>, returns run.json."""
    cfg = os.path.join(workdir, tag + ".toml")
    with open(cfg, "w") as f:
        f.write(toml_text)
    out = os.path.join(workdir, "out_" + tag)
    cmd = [binary, "run", cfg, "--out", out, "--backend", backend, "--quiet"]
    if threads:
        cmd += ["--threads", str(threads)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "run.json")) as f:
        return json.load(f)


def write_meta(out_csv, **extra):
    """<out_csv without .csv>.meta.json: machine, cores, NumPy and Python versions, date, git commit, + extra."""
    import numpy as np  # the scripts run under Debian's python3, which has it

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    meta = dict(machine=platform.node(), cpu=platform.processor() or platform.machine(), cores=os.cpu_count(),
                numpy=np.__version__, python=platform.python_version(), date=time.strftime("%Y-%m-%d"),
                commit=commit, **extra)
    with open(os.path.splitext(out_csv)[0] + ".meta.json", "w") as f:
        json.dump(meta, f, indent=2)
