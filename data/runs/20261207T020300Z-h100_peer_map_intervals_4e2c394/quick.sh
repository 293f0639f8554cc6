#!/usr/bin/env bash
# bash .dbg/s91/quick.sh <full sha>, carry .whl-all3 and .dbg/s91: the short GPU test files at the session's last code
T0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-all3/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
NCUPY=$(find /usr/local/cuda*/ /opt/nvidia -name ncu_report.py 2>/dev/null | head -1)
if ! python3 -c "import ncu_report" 2>/dev/null && [ -n "$NCUPY" ]; then export PYTHONPATH=$PYTHONPATH:$(dirname $NCUPY); fi
{ nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader; nvidia-smi -q | grep -E "Board Part" | head -1; } | tee $OUT/device.txt
for f in ${FILES:-test_sweep_gpu test_manifest_gpu test_ncu_gpu test_sched_gpu test_sage2_gpu test_timing_gpu}; do
  LEFT=$(( ${BY:-100} - ($(date +%s) - T0) ))
  if [ $LEFT -lt 10 ]; then echo "$f: not run (time)" | tee -a $OUT/summary.txt; continue; fi
  timeout $LEFT python3 -m pytest -q -rs -p no:cacheprovider -m gpu tests/gpu/$f.py > $OUT/$f.log 2>&1
  echo "$f rc=$? $(tail -1 $OUT/$f.log | cut -c1-160) at $(( $(date +%s) - T0 )) s" | tee -a $OUT/summary.txt
done
grep -hE "^(FAILED|ERROR)" $OUT/*.log | head -8 | cut -c1-300
