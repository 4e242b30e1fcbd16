# device call 3 (run from the repository root on the device; binaries in build/devbin)
R=experiments/bench/results/gpu_h200_regs_call3; S=/tmp/s; mkdir -p $S; cp $R/prediction.txt $S/
OUT=$S timeout 150 bash experiments/bench/gpu_session.sh tests > $S/tests_out.txt 2>&1; grep -E '^==|rc=|PASSED|FAILED' $S/tests_out.txt
DPR_BENCH_LINES=$R/lines.txt DPR_JAX_INSTANCES=16384 OUT=$S timeout 200 bash experiments/bench/gpu_session.sh bench > $S/bench_out.txt 2>&1; grep -E '^(hedge|dp-ftrl|jax|quickstart)' $S/bench_out.txt
export LD_LIBRARY_PATH=$DPR_LIBDIR:${LD_LIBRARY_PATH:-}
d=$(mktemp -d); printf '[run]\nseed = 1\ninstances = 16384\nrounds = 256\ncheckpoints = 2\nprecision = "float"\n[adversary]\nkind = "bernoulli"\nd = 1024\n[learner]\nalgorithm = "hedge"\n' > $d/c.toml
timeout 90 ncu --clock-control none -k regex:advance_ -c 1 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SourceCounters --section InstructionStats build/devbin/dpregret run $d/c.toml --out $d/o --quiet --backend cuda > $S/ncu_auto1024.txt 2>&1; echo "ncu rc=$?"
grep -E 'Function Name|advance_|Duration|Issue Slots Busy|Executed Ipc A|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Executed Instructions  ' $S/ncu_auto1024.txt | head -12
tar -C /tmp -czf $OUT/call3.tgz s
