#!/usr/bin/env bash
# bash .dbg/s88/rest.sh <full sha>, carry .whl-all3 and .dbg/s88: the GPU test files of what this session changed
# beside the decode kernel's (ncu: require_ncu, NcuUnavailable; sched: check_int counts, Timeline rows; the manifest
# pack's wording; timing), each under its own time limit.
T0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-all3/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
NCUPY=$(find /usr/local/cuda*/ /opt/nvidia -name ncu_report.py 2>/dev/null | head -1)
if ! python3 -c "import ncu_report" 2>/dev/null && [ -n "$NCUPY" ]; then export PYTHONPATH=$PYTHONPATH:$(dirname $NCUPY); fi
{ nvidia-smi --query-gpu=name,uuid,driver_version,vbios_version --format=csv,noheader; nvidia-smi -q | grep -E "Board Part" | head -1; } | tee $OUT/device_rest.txt
for f in test_manifest_gpu test_timing_gpu test_sched_gpu test_ncu_gpu; do
  LEFT=$(( ${REST_BY:-380} - ($(date +%s) - T0) ))
  if [ $LEFT -lt 30 ]; then echo "$f: not run (time)" | tee -a $OUT/rest_summary.txt; continue; fi
  timeout $LEFT python3 -m pytest -q -rs -p no:cacheprovider -m gpu tests/gpu/$f.py > $OUT/$f.log 2>&1
  echo "$f rc=$? $(tail -1 $OUT/$f.log | cut -c1-160) at $(( $(date +%s) - T0 )) s" | tee -a $OUT/rest_summary.txt
done
grep -hE "^(FAILED|ERROR)" $OUT/*.log | head -8 | cut -c1-300
