#!/usr/bin/env bash
# bash .dbg/s89/check1.sh <full sha>, carry .whl-all3 and .dbg/s89: this session's GPU paths: per-sample SM clocks and
# throttle drops (timing GPU tests), the Sage2 accuracy gate (profile tests), a decode bench point beside the last
# H100 numbers, and `labkit ncu run --notebook 00` (the plain-script path) under the real ncu.
T0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-all3/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
NCUPY=$(find /usr/local/cuda*/ /opt/nvidia -name ncu_report.py 2>/dev/null | head -1)
if ! python3 -c "import ncu_report" 2>/dev/null && [ -n "$NCUPY" ]; then export PYTHONPATH=$PYTHONPATH:$(dirname $NCUPY); fi
{ nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader; nvidia-smi -q | grep -E "Board Part" | head -1; } | tee $OUT/device.txt
timeout 150 python3 -m pytest -q -s -rs -p no:cacheprovider -m gpu tests/gpu/test_timing_gpu.py > $OUT/timing.log 2>&1
echo "timing rc=$? $(tail -1 $OUT/timing.log | cut -c1-160) at $(( $(date +%s) - T0 )) s" | tee $OUT/summary.txt
grep -E "SM clock per sample" $OUT/timing.log | tee -a $OUT/summary.txt
timeout 150 python3 -m pytest -q -rs -p no:cacheprovider -m gpu tests/gpu/test_sage2_gpu.py -k "profile" > $OUT/sage2.log 2>&1
echo "sage2 profile tests rc=$? $(tail -1 $OUT/sage2.log | cut -c1-160) at $(( $(date +%s) - T0 )) s" | tee -a $OUT/summary.txt
timeout 120 python3 -m labkit decode bench --point 64x8192 --point 1x8192 --out $OUT/bench.json > $OUT/bench.log 2>&1
echo "decode bench rc=$? at $(( $(date +%s) - T0 )) s" | tee -a $OUT/summary.txt
python3 -c "
import json; d=json.load(open('$OUT/bench.json'))
print(sorted(d)[:20])" >> $OUT/summary.txt 2>&1
grep -vE "^\s*\[[0-9]+\]" $OUT/bench.log | cut -c1-200 | tail -25
mkdir -p /tmp/ncu && cd /tmp/ncu
LEFT=$(( ${BY:-560} - ($(date +%s) - T0) ))
timeout $(( LEFT > 60 ? LEFT - 10 : 50 )) python3 -m labkit ncu run --out /tmp/ncu/nb00 --range probe/timing_overhead --launch-count 5 --notebook 00 -p launches 200 > $OUT/ncu_nb.log 2>&1
echo "ncu run --notebook 00 rc=$? at $(( $(date +%s) - T0 )) s" | tee -a $OUT/summary.txt
head -c 600 /tmp/ncu/nb00.py > $OUT/nb00_head.txt; ls -la /tmp/ncu | tee -a $OUT/summary.txt
tail -15 $OUT/ncu_nb.log | cut -c1-220
grep -hE "^(FAILED|ERROR)" $OUT/*.log | head -8 | cut -c1-300
