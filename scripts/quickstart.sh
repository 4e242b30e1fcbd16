#!/usr/bin/env bash
# README command 1: install dependencies (apt, idempotent), build, run the quickstart experiment
# (experiments/quickstart.toml: DP-FTRL over epsilon next to Hedge) and draw its privacy-utility plot.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh dpregret   # only what the quickstart runs: the tests are built by scripts/test.sh
out=runs/quickstart
rm -rf "$out"
./build/dpregret run experiments/quickstart.toml --out "$out"
/usr/bin/python3 experiments/scripts/plot_privacy_utility.py "$out/summary.csv" -o "$out/privacy_utility.png"
echo
echo "Quickstart done. Results: $out/summary.csv, $out/final_regret.csv, $out/run.json"
echo "Picture:  $out/privacy_utility.png"
