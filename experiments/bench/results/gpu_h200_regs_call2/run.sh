# device call 2 (run from the repository root on the device; binaries in build/devbin)
R=experiments/bench/results/gpu_h200_regs_call2; S=/tmp/s; mkdir -p $S; cp $R/prediction.txt $S/
export LD_LIBRARY_PATH=$DPR_LIBDIR:${LD_LIBRARY_PATH:-}
timeout 120 build/devbin/tests/gpu_test_engine_gpu --gtest_filter='*Registers*:*Chunking*:*StateOnChip*' > $S/tests.log 2>&1; echo "tests rc=$?"; grep -E '^\[ *(OK|FAILED|PASSED) ' $S/tests.log
DPR_BENCH_LINES=$R/lines.txt DPR_NO_JAX=1 OUT=$S timeout 150 bash experiments/bench/gpu_session.sh bench > $S/bench_out.txt 2>&1; grep -E '^hedge' $S/bench_out.txt
d=$(mktemp -d); printf '[run]\nseed = 1\ninstances = 16384\nrounds = 256\ncheckpoints = 2\nprecision = "float"\ngpu_state = "registers"\n[adversary]\nkind = "bernoulli"\nd = 1024\n[learner]\nalgorithm = "hedge"\n' > $d/c.toml
timeout 120 ncu --clock-control none -k regex:advance_regs -c 1 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SourceCounters --section InstructionStats build/devbin/dpregret run $d/c.toml --out $d/o --quiet --backend cuda > $S/ncu_regs1024.txt 2>&1; echo "ncu rc=$?"
grep -E 'Duration|Issue Slots Busy|Executed Ipc A|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|stalled|Executed Instructions  ' $S/ncu_regs1024.txt | head -12
cuobjdump -sass build/devbin/dpregret > /tmp/all.sass 2>/dev/null; echo "sass lines $(wc -l < /tmp/all.sass)"
for pat in 'advance_regs_kernel.*HedgeEfLi32E' 'advance_regs_kernel.*HedgeEfLi8E' 'advance_kernel.*HedgeEfLNS1_4ModeE1E'; do
  awk -v p="$pat" '/Function :/{on = ($0 ~ p)} on' /tmp/all.sass > $S/sass_$(echo $pat | tr -c 'A-Za-z0-9' '_' | cut -c1-40).txt; done
wc -l $S/sass_*; tar -C /tmp -czf $OUT/call2.tgz s
