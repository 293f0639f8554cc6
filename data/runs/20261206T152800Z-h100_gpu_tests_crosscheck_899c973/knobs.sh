#!/usr/bin/env bash
# bash .dbg/s88/knobs.sh <full sha>, carry .whl-all3 and .dbg/s88: the decode GPU tests that pass build knobs through
# run_decode (its new check_overrides), then labkit sched crosscheck (require_ncu), each under a time limit.
T0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-all3/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
NCUPY=$(find /usr/local/cuda*/ /opt/nvidia -name ncu_report.py 2>/dev/null | head -1)
if ! python3 -c "import ncu_report" 2>/dev/null && [ -n "$NCUPY" ]; then export PYTHONPATH=$PYTHONPATH:$(dirname $NCUPY); fi
{ nvidia-smi --query-gpu=name,uuid --format=csv,noheader; nvidia-smi -q | grep -E "Board Part" | head -1; } | tee $OUT/device_knobs.txt
timeout ${KNOBS_BY:-170} python3 -m pytest -q -rs -p no:cacheprovider -m gpu tests/gpu/test_decode_gpu.py -k "tensor_core_builds or persistent_ctas_match or wide_boxes or compare_builds or timed_calls_write or split_counts_agree" > $OUT/decode_knobs.log 2>&1
echo "decode knob tests rc=$? $(tail -1 $OUT/decode_knobs.log | cut -c1-160) at $(( $(date +%s) - T0 )) s" | tee $OUT/knobs_summary.txt
LEFT=$(( ${ALL_BY:-250} - ($(date +%s) - T0) ))
if [ $LEFT -gt 40 ]; then
  timeout $LEFT python3 -m labkit sched crosscheck --out /tmp/cc > $OUT/crosscheck.log 2>&1
  echo "sched crosscheck rc=$? at $(( $(date +%s) - T0 )) s" | tee -a $OUT/knobs_summary.txt; tail -15 $OUT/crosscheck.log
else echo "sched crosscheck: not run (time)" | tee -a $OUT/knobs_summary.txt; fi
grep -hE "^(FAILED|ERROR)" $OUT/*.log | head -8 | cut -c1-300
