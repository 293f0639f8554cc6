#!/bin/bash
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$(cat .dbg/sha)
date -u
ncu --version | tail -1
ncu --kernel-name attn_fwd_sm90 --launch-skip 1 --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SourceCounters --section LaunchStats --import-source yes -f -o $OUT/sm90_8192 python3 .dbg/ncu_target.py > $OUT/ncu.log 2>&1
tail -3 $OUT/ncu.log
ncu --import $OUT/sm90_8192.ncu-rep --page details --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats > $OUT/details.txt 2>&1
ncu --import $OUT/sm90_8192.ncu-rep --page raw --csv --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_xu_cycles_active.avg.pct_of_peak_sustained_active,sm__issue_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum > $OUT/pipes.csv 2>&1
cat $OUT/pipes.csv | cut -c1-400
python3 -m labkit ncu phases $OUT/sm90_8192.ncu-rep --source labkit/workloads/sage2/kernels/attn_fwd_sm90.cu 2>&1 | tee $OUT/phases.txt
date -u
python3 -m pytest -q -m gpu tests/gpu 2>&1 | tail -6 | tee $OUT/gpu_tests.log
date -u
