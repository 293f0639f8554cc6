#!/usr/bin/env bash
# bash .dbg/s90/one.sh <full sha>, carry .whl-all3 and .dbg/s90: the decode GPU tests at this session's code (the
# counter read-back in run_decode and its new test), then the timing GPU tests with the time left.
T0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-all3/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
{ nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader; nvidia-smi -q | grep -E "Board Part" | head -1; } | tee $OUT/device.txt
timeout 430 python3 -m pytest -v -rs -p no:cacheprovider -m gpu tests/gpu/test_decode_gpu.py > $OUT/decode.log 2>&1
echo "decode rc=$? $(tail -1 $OUT/decode.log | cut -c1-200) at $(( $(date +%s) - T0 )) s" | tee $OUT/summary.txt
grep -E "counter_left_off|timed_calls_write" $OUT/decode.log | cut -c1-160 | tee -a $OUT/summary.txt
LEFT=$(( ${BY:-575} - ($(date +%s) - T0) ))
if [ $LEFT -gt 40 ]; then
  timeout $LEFT python3 -m pytest -q -s -rs -p no:cacheprovider -m gpu tests/gpu/test_timing_gpu.py > $OUT/timing.log 2>&1
  echo "timing rc=$? $(tail -1 $OUT/timing.log | cut -c1-160) at $(( $(date +%s) - T0 )) s" | tee -a $OUT/summary.txt
  grep -h "SM clock per sample" $OUT/timing.log | tee -a $OUT/summary.txt
else echo "timing: not run (time)" | tee -a $OUT/summary.txt; fi
grep -hE "^(FAILED|ERROR)" $OUT/*.log | head -8 | cut -c1-300
