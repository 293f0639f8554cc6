#!/usr/bin/env bash
# the decode GPU tests the first call did not reach
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-fa3/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid --format=csv,noheader | tee $OUT/device_rest.txt
timeout 500 python3 .dbg/s84/rest.py > $OUT/test_decode_gpu_rest.log 2>&1; echo "rest rc=$?" | tee $OUT/summary_rest.txt
grep -E ' (PASSED|FAILED|SKIPPED|ERROR)' $OUT/test_decode_gpu_rest.log | cut -c1-200 | tee -a $OUT/summary_rest.txt
tail -1 $OUT/test_decode_gpu_rest.log | tee -a $OUT/summary_rest.txt
