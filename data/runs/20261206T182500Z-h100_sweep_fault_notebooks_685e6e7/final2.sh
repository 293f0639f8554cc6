#!/usr/bin/env bash
# bash .dbg/s89/final2.sh <full sha>, carry .whl-all3 and .dbg/s89: the GPU tests of what this session changed last,
# each under its own limit: the sweep's faulting point (new), timing (per-sample clocks), ncu (the log diagnoses).
T0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-all3/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
NCUPY=$(find /usr/local/cuda*/ /opt/nvidia -name ncu_report.py 2>/dev/null | head -1)
if ! python3 -c "import ncu_report" 2>/dev/null && [ -n "$NCUPY" ]; then export PYTHONPATH=$PYTHONPATH:$(dirname $NCUPY); fi
{ nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader; nvidia-smi -q | grep -E "Board Part" | head -1; } | tee $OUT/device.txt
for f in test_sweep_gpu test_timing_gpu test_ncu_gpu; do
  LEFT=$(( ${BY:-330} - ($(date +%s) - T0) ))
  if [ $LEFT -lt 30 ]; then echo "$f: not run (time)" | tee -a $OUT/summary.txt; continue; fi
  timeout $LEFT python3 -m pytest -q -s -rs -p no:cacheprovider -m gpu tests/gpu/$f.py > $OUT/$f.log 2>&1
  echo "$f rc=$? $(tail -1 $OUT/$f.log | cut -c1-160) at $(( $(date +%s) - T0 )) s" | tee -a $OUT/summary.txt
done
grep -h "SM clock per sample" $OUT/test_timing_gpu.log | tee -a $OUT/summary.txt
grep -hE "^(FAILED|ERROR)" $OUT/*.log | head -8 | cut -c1-300
