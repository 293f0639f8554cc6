#!/bin/bash
# sage2 GPU tests, the Sage2 bench (20 rounds) at the seed shape, then ncu of the mainloop at [1, 8192, 56, 128]
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$(cat .dbg/sha)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 500 > $OUT/smi.csv 2>&1 &
SMI=$!
date -u
python3 -m pytest -q -m gpu tests/gpu/test_sage2_gpu.py 2>&1 | tail -3 | tee $OUT/gpu_tests.log
date -u
python3 -m labkit bench --schedule sm90 --iterations 20 --out $OUT/bench.json 2>&1 | tee $OUT/bench.log
date -u
kill $SMI || true
ncu --version | tail -1
ncu --kernel-name attn_fwd_sm90 --launch-skip 1 --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SourceCounters --section LaunchStats --import-source yes -f -o $OUT/sm90_8192 python3 .dbg/ncu_target.py > $OUT/ncu.log 2>&1
tail -2 $OUT/ncu.log
ncu --import $OUT/sm90_8192.ncu-rep --page details --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats > $OUT/details.txt 2>&1
ncu --import $OUT/sm90_8192.ncu-rep --page raw --csv --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_xu_cycles_active.avg.pct_of_peak_sustained_active,sm__issue_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum > $OUT/pipes.csv 2>&1
cat $OUT/pipes.csv | cut -c1-400
python3 -m labkit ncu phases $OUT/sm90_8192.ncu-rep --source labkit/workloads/sage2/kernels/attn_fwd_sm90.cu 2>&1 | tee $OUT/phases.txt
date -u
