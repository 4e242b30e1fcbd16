# device call 4: new binary (build/devbin/dpregret, 1657c7a) and the previous one (dpregret_base, c690200)
R=experiments/bench/results/gpu_h200_rows_call4; S=/tmp/s; mkdir -p $S/new $S/base; cp $R/prediction.txt $S/
mkdir -p build/devbase && ln -sf ../devbin/dpregret_base build/devbase/dpregret
OUT=$S timeout 110 bash experiments/bench/gpu_session.sh tests > $S/tests_out.txt 2>&1; grep -E '^==|rc=|PASSED|FAILED' $S/tests_out.txt
for v in new base; do b=build/devbin; [ $v = base ] && b=build/devbase
  DPR_BIN=$b DPR_COMMIT=$v DPR_BENCH_LINES=$R/lines.txt DPR_NO_JAX=1 OUT=$S/$v timeout 100 bash experiments/bench/gpu_session.sh bench > $S/$v/bench_out.txt 2>&1
  echo "== $v"; grep -E '^(hedge|dp-ftrl)|FAILED' $S/$v/bench_out.txt; done
tar -C /tmp -czf $OUT/call4.tgz s
