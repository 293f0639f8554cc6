#!/usr/bin/env bash
# the decode GPU tests at SHA (kernels unchanged since 3feb10e; the CLI's grid line and plan_here/sms_here since)
T0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-fa3/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,vbios_version --format=csv,noheader | tee $OUT/smi.csv
timeout 520 python3 -m pytest -q -rs -p no:cacheprovider -m gpu tests/gpu/test_decode_gpu.py > $OUT/test_decode_gpu.log 2>&1
echo "test_decode_gpu rc=$? $(tail -1 $OUT/test_decode_gpu.log) at $(( $(date +%s) - T0 )) s" | tee $OUT/summary.txt
grep -E "^(FAILED|ERROR|SKIPPED)" $OUT/test_decode_gpu.log | head
