#!/usr/bin/env bash
# bash .dbg/s88/final.sh <full sha>, carry .dbg/s88: the manifest and decode GPU tests at the session's last code
# (the family rules' element types, shared addresses and ptrO/tmaO; plan_call's and run_decode's argument checks).
T0=$(date +%s)
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee $OUT/device_final.txt
nvidia-smi -q | grep -E "Board Part" | head -1 | tee -a $OUT/device_final.txt
python3 -m pytest -q -rs -p no:cacheprovider -m gpu tests/gpu/test_manifest_gpu.py > $OUT/manifest_final.log 2>&1
echo "manifest rc=$? $(tail -1 $OUT/manifest_final.log)" | tee $OUT/final_summary.txt
timeout $(( ${DECODE_BY:-400} - ($(date +%s) - T0) )) python3 -m pytest -v -rs -p no:cacheprovider -m gpu tests/gpu/test_decode_gpu.py > $OUT/decode_final.log 2>&1
echo "decode rc=$? $(tail -1 $OUT/decode_final.log | cut -c1-200) at $(( $(date +%s) - T0 )) s" | tee -a $OUT/final_summary.txt
echo "decode tests: $(grep -c ' PASSED' $OUT/decode_final.log) passed, $(grep -c ' FAILED' $OUT/decode_final.log) failed, $(grep -c ' SKIPPED' $OUT/decode_final.log) skipped" | tee -a $OUT/final_summary.txt
grep -E "^(FAILED|ERROR)" $OUT/decode_final.log | head -8 | cut -c1-300
