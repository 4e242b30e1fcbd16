#!/usr/bin/env bash
# README command 1: install dependencies (apt, idempotent), build, run the quickstart experiment
# (experiments/quickstart.toml: DP-FTRL over epsilon next to Hedge) and draw its privacy-utility plot.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
# Build only what the quickstart runs: the dpregret target (the tests are built by scripts/test.sh). In a new
# build directory that also means the CPU kernels for this CPU only, and the CUDA backend only where a GPU is
# visible (a third of the compile time); a directory that scripts/test.sh or scripts/build.sh configured keeps
# everything it has.
if [ -f build/CMakeCache.txt ]; then
    export DPREGRET_CPU_ISAS="${DPREGRET_CPU_ISAS:-$(sed -n 's/^DPREGRET_CPU_ISAS:[A-Z]*=//p' build/CMakeCache.txt)}"
    export DPREGRET_CUDA="${DPREGRET_CUDA:-$(sed -n 's/^DPREGRET_CUDA:[A-Z]*=//p' build/CMakeCache.txt)}"
else
    export DPREGRET_CPU_ISAS="${DPREGRET_CPU_ISAS:-native}"
    if ! nvidia-smi -L >/dev/null 2>&1; then
        export DPREGRET_CUDA="${DPREGRET_CUDA:-OFF}"
        echo "quickstart: no GPU visible, so the CUDA backend is not built (scripts/test.sh builds it where nvcc is)"
    fi
fi
scripts/build.sh dpregret
out=runs/quickstart
rm -rf "$out"
./build/dpregret run experiments/quickstart.toml --out "$out"
/usr/bin/python3 experiments/scripts/plot_privacy_utility.py "$out/summary.csv" -o "$out/privacy_utility.png"
echo
echo "Quickstart done. Results: $out/summary.csv, $out/final_regret.csv, $out/run.json"
echo "Picture:  $out/privacy_utility.png"
