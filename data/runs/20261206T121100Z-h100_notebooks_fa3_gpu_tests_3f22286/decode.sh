#!/usr/bin/env bash
# bash .dbg/s87/decode.sh <full sha>, carry .dbg/s87: the decode GPU tests (every build through the manifest Runner,
# which checks its manifest first, so the pointers' element types are held on every build), in the call's time.
T0=$(date +%s)
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee $OUT/device_decode.txt
nvidia-smi -q | grep -E "Board Part" | head -1 | tee -a $OUT/device_decode.txt
timeout 560 python3 -m pytest -v -rs -p no:cacheprovider -m gpu tests/gpu/test_decode_gpu.py > $OUT/decode_gpu.log 2>&1
echo "rc=$? $(tail -1 $OUT/decode_gpu.log | cut -c1-200) at $(( $(date +%s) - T0 )) s" | tee $OUT/decode_summary.txt
echo "decode tests: $(grep -c ' PASSED' $OUT/decode_gpu.log) passed, $(grep -c ' FAILED' $OUT/decode_gpu.log) failed, $(grep -c ' SKIPPED' $OUT/decode_gpu.log) skipped" | tee -a $OUT/decode_summary.txt
grep -E "^(FAILED|ERROR)|SKIPPED" $OUT/decode_gpu.log | head -8 | cut -c1-300
grep -E ' (PASSED|FAILED|SKIPPED)' $OUT/decode_gpu.log | sed -E 's/ (PASSED|FAILED|SKIPPED).*//' > $OUT/decode_done_ids.txt
