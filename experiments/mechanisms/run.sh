#!/usr/bin/env bash
# The mechanism sweeps of docs/experiments/mechanisms.md: regret against T and against epsilon for Gaussian
# dp-ftrl-experts and dp-ftrl-sphere with each prefix-sum mechanism at equal privacy, their non-private twins, the
# measured prefix noise of each mechanism (dpregret sample prefix), and the figures.
#   experiments/mechanisms/run.sh [OUT]        (OUT default runs/mechanisms; about 7 min on 2 cores)
# DPREGRET names the binary (default build/dpregret). Figures: Debian's python3 with matplotlib and numpy
# (scripts/deps.sh installs them).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="${DPREGRET:-$root/build/dpregret}"
out="${1:-runs/mechanisms}"
if [[ -e "$out" ]]; then echo "run.sh: $out exists; name a new directory" >&2; exit 2; fi
mkdir -p "$out"
twin=(--set learner.noise=none --set learner.mechanism=padded)
for f in experts_T experts_eps sphere_T sphere_eps; do
    "$bin" run "$here/$f.toml" --out "$out/$f"
    extra=()
    [[ $f == *_eps ]] && extra=(--set learner.epsilon=1)
    "$bin" run "$here/$f.toml" "${twin[@]}" "${extra[@]}" --out "$out/${f}_twin"
done
# The prefix noise itself: 400 sampled streams of T = 2^16 per mechanism, unit scale, with the exact variances.
for m in padded binary honaker blt; do
    "$bin" sample prefix --mechanism "$m" --noise gaussian --scale 1 --T 65536 --n 400 --seed 1 \
        --out "$out/noise_$m.npy" --meta "$out/noise_$m.json"
done
/usr/bin/python3 "$root/experiments/scripts/plot_mechanisms.py" "$out"
