#!/usr/bin/env bash
# One lent-GPU session in one command (docs/BENCHMARKS.md "GPU"): the gpu-labelled tests first, then the
# timings. Runs from the repository root on a machine with an NVIDIA GPU, on binaries built elsewhere
# (scripts/build.sh with nvcc; the device image lacks the apt libraries, so the shared ones the binaries need
# travel in $DPR_LIBDIR). Writes logs and CSVs under $OUT (or ./out/gpu when OUT is unset).
#
#   experiments/bench/gpu_session.sh [tests|bench|learners|audit|profile|all]   (all = each in that order)
#
# Throughput is measured as the CLI reports it (run.json: simulation wall time, which includes the engine's
# allocation, the host-side loss rows and the statistics) at two instance counts N1 < N2; the marginal rate
# (N2 - N1) d T / (wall2 - wall1) removes the fixed costs and is what a large sweep sees per instance.
set -uo pipefail
cd "$(dirname "$0")/../.."
what=${1:-all}
OUT=${OUT:-out/gpu}
mkdir -p "$OUT"
# DPR_ARCHIVE=FILE.tgz: also pack $OUT into one archive at the end (the lent device returns at most 8 files)
[ -n "${DPR_ARCHIVE:-}" ] && trap 'tar -C "$(dirname "$OUT")" -czf "$DPR_ARCHIVE" "$(basename "$OUT")"' EXIT
BIN=${DPR_BIN:-build}
[ -n "${DPR_LIBDIR:-}" ] && export LD_LIBRARY_PATH="$DPR_LIBDIR:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,driver_version --format=csv | tee "$OUT/device.txt"
echo "commit ${DPR_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}" | tee -a "$OUT/device.txt"
if ldd "$BIN/dpregret" | grep 'not found'; then echo "missing shared libraries (set DPR_LIBDIR)"; exit 3; fi
"$BIN/dpregret" info 2>&1 | tee -a "$OUT/device.txt"

if [ "$what" = tests ] || [ "$what" = all ]; then
    for t in "$BIN"/tests/gpu_test_*; do
        [ -x "$t" ] || continue
        n=$(basename "$t")
        echo "== $n"
        timeout "${DPR_TEST_TIMEOUT:-240}" "$t" --gtest_color=no --gtest_output="xml:$OUT/$n.xml" > "$OUT/$n.log" 2>&1
        echo "rc=$?"
        grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|tests ran' "$OUT/$n.log" | head -20
        grep -B2 -A6 'Failure' "$OUT/$n.log" | head -60
    done
fi

run_point() { # algorithm d T instances precision [extra run keys] -> prints "wall_s expert_rounds_per_s policy"
    local alg=$1 d=$2 T=$3 n=$4 prec=$5 extra=${6:-}
    local dir; dir=$(mktemp -d)
    {
        printf '[run]\nseed = 1\ninstances = %s\nrounds = %s\ncheckpoints = 4\nprecision = "%s"\n%b' "$n" "$T" "$prec" "$extra"
        printf '[adversary]\nkind = "bernoulli"\nd = %s\n[learner]\nalgorithm = "%s"\n' "$d" "$alg"
        [ "$alg" = hedge ] || printf 'epsilon = 1.0\n'
    } > "$dir/c.toml"
    if ! timeout 60 "$BIN/dpregret" run "$dir/c.toml" --out "$dir/o" --backend cuda --quiet > "$dir/log" 2>&1; then
        echo "FAILED $(tail -3 "$dir/log" | tr '\n' ' ')"; return
    fi
    python3 - "$dir/o/run.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
t = j["throughput"]
pol = j["points"][0].get("launch_policy", "").replace('"', "'")  # one CSV field: no inner double quotes
print(f'{t["simulation_seconds"]:.6f} {t["expert_rounds_per_second"]:.4g} "{pol}"')
EOF
}

if [ "$what" = bench ] || [ "$what" = all ]; then
    csv="$OUT/gpu_bench.csv"
    echo "algorithm,d,T,precision,n1,n2,wall1_s,wall2_s,rate_n2,marginal_rate,policy,run_keys" > "$csv"
    # (algorithm d T n1 n2 [run keys]): n2 sized to a few 1e10..1e11 expert-rounds; the run keys (a ';'-separated
    # list such as lanes="instances";team_threads=256) override the automatic launch policy
    default_shapes() {
        cat <<'EOF'
dp-ftrl-experts 1024 1024 8192 65536
hedge 1024 1024 8192 65536
dp-ftrl-experts 1024 1024 8192 65536 lanes="instances"
hedge 1024 1024 65536 262144
hedge 1024 1024 65536 262144 gpu_state="global"
hedge 256 1024 131072 524288
hedge 256 1024 131072 524288 gpu_state="global"
hedge 1024 1024 8192 65536 lanes="instances"
dp-ftrl-experts 1024 1024 8192 65536 team_threads=256
dp-ftrl-experts 16 1024 65536 524288
hedge 16 1024 65536 524288
dp-ftrl-experts 16384 1024 1024 4096
dp-ftrl-experts 1048576 1024 16 64
EOF
    }
    # DPR_BENCH_LINES=FILE replaces the default shapes (same columns)
    { if [ -n "${DPR_BENCH_LINES:-}" ]; then cat "$DPR_BENCH_LINES"; else default_shapes; fi; } |
    while read -r alg d T n1 n2 keys; do
        k2=${keys//\"/}
        extra=$(printf '%s' "${keys:-}" | tr ';' '\n'); [ -n "$extra" ] && extra="$extra\n"
        for prec in ${DPR_PRECISIONS:-float double}; do
            a=$(run_point "$alg" "$d" "$T" "$n1" "$prec" "$extra"); b=$(run_point "$alg" "$d" "$T" "$n2" "$prec" "$extra")
            case "$a$b" in *FAILED*) echo "$alg d=$d T=$T $prec: $a | $b"; echo "$alg,$d,$T,$prec,$n1,$n2,,,,,FAILED,${k2:-}" >> "$csv"; continue;; esac
            read -r w1 r1 p1 <<< "$a"; read -r w2 r2 p2 <<< "$b"
            # NA when the larger run was not slower: fixed costs dominate, there is no marginal rate to report
            m=$(python3 -c "print(f'{($n2-$n1)*$d*$T/($w2-$w1):.4g}' if $w2 > $w1 else 'NA')")
            echo "$alg,$d,$T,$prec,$n1,$n2,$w1,$w2,$r2,$m,$p2,${k2:-}" | tee -a "$csv"
        done
    done
    # The quickstart sweep on the GPU (README), as a user runs it.
    qs=$(mktemp -d)
    /usr/bin/time -f "quickstart on cuda: %e s wall" "$BIN/dpregret" run experiments/quickstart.toml --out "$qs" --backend cuda --quiet 2>&1 | tail -2
    python3 -c "import json,sys; j=json.load(open('$qs/run.json')); print('quickstart simulation_seconds', j['throughput']['simulation_seconds'])" 2>&1
    # The JAX peer on the same GPU (float32, threefry), as a JAX user would run it.
    if [ -z "${DPR_NO_JAX:-}" ] && python3 -c "import jax" 2>/dev/null; then
        for alg in hedge dp-ftrl-experts; do
            for I in ${DPR_JAX_INSTANCES:-4096 16384}; do
                eta=$(python3 -c "import math; print(math.sqrt(8*math.log(1024)/1024) if '$alg'=='hedge' else math.sqrt(math.log(1024)/2048))")
                r=$(timeout 90 python3 experiments/bench/jax_peer.py --algorithm "$alg" --d 1024 --T 1024 --instances "$I" \
                    --rounds 1024 --eta "$eta" --lam 10240 2>"$OUT/jax_err.log" | tail -1)
                echo "jax $alg d=1024 T=1024 I=$I: $r" | tee -a "$OUT/jax.txt"
            done
        done
    fi
    # The rows for experiments/bench/results/gpu_targets.csv (rate: run.json's expert-rounds/s at n2; jax_rate:
    # the JAX peer's at the largest instance count it ran, float32, for the same algorithm at d = 1024).
    python3 experiments/bench/gpu_targets_rows.py "$csv" "$OUT/jax.txt" "$OUT/device.txt" > "$OUT/gpu_targets_rows.csv"
    cat "$OUT/gpu_targets_rows.csv"
fi

# The learners of the other two papers (AFKT23 realizable experts, ENV21 bandit FW) on the GPU, as bench does:
# two instance counts, run.json's instance-rounds/s. Each line: label n1 n2 TOML (\n-escaped, no [run] instances).
# DPR_LEARNER_LINES=FILE replaces the list.
if [ "$what" = learners ] || [ "$what" = all ]; then
    csv="$OUT/gpu_learners.csv"
    echo "label,n1,n2,wall1_s,wall2_s,instance_rounds_per_s_n2,marginal_instance_rounds_per_s,policy" > "$csv"
    while IFS='|' read -r label n1 n2 body; do
        [ -z "$label" ] && continue
        walls=(); rate=""; pol=""
        for n in "$n1" "$n2"; do
            dir=$(mktemp -d)
            printf '[run]\nseed = 1\ninstances = %s\ncheckpoints = 2\n%b\n' "$n" "$body" > "$dir/c.toml"
            if ! timeout "${DPR_LEARNER_TIMEOUT:-90}" "$BIN/dpregret" run "$dir/c.toml" --out "$dir/o" --backend cuda --quiet > "$dir/log" 2>&1; then
                echo "$label n=$n FAILED: $(tail -3 "$dir/log" | tr '\n' ' ')"; walls+=(NA); continue
            fi
            read -r w r p < <(python3 -c "import json; j=json.load(open('$dir/o/run.json')); t=j['throughput']; print(t['simulation_seconds'], t['instance_rounds_per_second'], j['points'][0].get('launch_policy',''))")
            walls+=("$w"); rate=$r; pol=$p
        done
        T=$(printf '%b' "$body" | sed -n 's/^rounds = //p')
        m=$(python3 -c "w1,w2='${walls[0]}','${walls[1]}'; print(f'{($n2-$n1)*$T/(float(w2)-float(w1)):.4g}' if 'NA' not in (w1,w2) and float(w2)>float(w1) else 'NA')")
        echo "$label,$n1,$n2,${walls[0]},${walls[1]},$rate,$m,\"$pol\"" | tee -a "$csv"
    done < "${DPR_LEARNER_LINES:-experiments/bench/gpu_learners.txt}"
fi

# Audits on the GPU: trials/s at a size where the device is full, and the verdict next to the CPU's on the
# same trials (the statistic is the same function of the same released plays, so eps_lb must agree).
if [ "$what" = audit ] || [ "$what" = all ]; then
    for spec in "dp_ftrl_experts_tight 10000000" "dp_ftrl_experts 2000000" "svt_experts 1000000" "private_bandit_fw 1000000"; do
        read -r f n <<< "$spec"
        for be in cuda cpu; do
            dir=$(mktemp -d)
            timeout 120 "$BIN/dpregret" audit "experiments/audits/$f.toml" --out "$dir/o" --backend "$be" --quiet \
                --set "run.instances=$n" > "$dir/log" 2>&1
            echo "== audit $f n=$n $be rc=$? $(tail -1 "$dir/log")"
            [ -f "$dir/o/audit.json" ] && cp "$dir/o/audit.json" "$OUT/audit_${f}_$be.json"
            rm -rf "$dir"
        done
    done
fi

# Nsight Compute on one advance launch per shape (hardware counters; the clocks left as found): where the time
# of the round goes (issue-slot use, occupancy, memory throughput, stall reasons).
if [ "$what" = profile ] || [ "$what" = all ]; then
    if command -v ncu >/dev/null; then
        # DPR_PROFILE="alg d precision;..." replaces the default launches
        # DPR_PROFILE="alg d precision [run keys, ',' between];..." replaces the default launches
        IFS=';' read -r -a specs <<< "${DPR_PROFILE:-dp-ftrl-experts 1024 float;hedge 1024 float;dp-ftrl-experts 1024 double}"
        for spec in "${specs[@]}"; do
            read -r alg d prec keys <<< "$spec"
            dir=$(mktemp -d)
            printf '[run]\nseed = 1\ninstances = 16384\nrounds = 256\ncheckpoints = 2\nprecision = "%s"\n%s\n[adversary]\nkind = "bernoulli"\nd = %s\n[learner]\nalgorithm = "%s"\n' \
                "$prec" "$(printf '%s' "${keys:-}" | tr ',' '\n')" "$d" "$alg" > "$dir/c.toml"
            [ "$alg" = hedge ] || echo 'epsilon = 1.0' >> "$dir/c.toml"
            tag="ncu_${alg}_${d}_${prec}$(printf '%s' "${keys:-}" | tr -c 'A-Za-z0-9' '_' | sed 's/^./_/')"
            timeout 150 ncu --clock-control none -k regex:advance_ -c 1 --section SpeedOfLight --section Occupancy \
                --section LaunchStats --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
                "$BIN/dpregret" run "$dir/c.toml" --out "$dir/o" --backend cuda --quiet > "$OUT/$tag.txt" 2>&1
            echo "== $tag rc=$?"
            grep -E 'Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Issue Slots Busy|Executed Ipc A|Local Memory|L1/TEX Hit|Stall|Block Limit' "$OUT/$tag.txt" | head -30
        done
    else
        echo "ncu not found"
    fi
fi
