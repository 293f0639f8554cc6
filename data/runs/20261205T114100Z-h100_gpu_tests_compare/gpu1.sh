#!/usr/bin/env bash
# This session's one GPU call: the GPU tests not re-run since their fixes, then the decode GPU tests (the manifest
# rule runs before every decode launch) for what time is left.
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache
export LABKIT_GIT_SHA=ba5e28e
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,serial --format=csv > $OUT/nvidia_smi.csv 2>&1
python3 -m labkit device > $OUT/device.txt 2>&1
timeout 180 python3 -m pytest -q -rs -p no:cacheprovider tests/gpu/test_timing_gpu.py tests/gpu/test_manifest_gpu.py tests/gpu/test_sched_gpu.py > $OUT/gpu_timing_manifest_sched.log 2>&1
echo "rc=$?" >> $OUT/gpu_timing_manifest_sched.log
timeout 200 python3 -m pytest -q -rs -p no:cacheprovider tests/gpu/test_decode_gpu.py > $OUT/gpu_decode.log 2>&1
echo "rc=$?" >> $OUT/gpu_decode.log
tail -5 $OUT/gpu_*.log; head -20 $OUT/device.txt
timeout 150 python3 -m labkit decode compare --batch 64 --kv-len 8192 --build stages=2 --build qk_chains=2 --build warps=8 --build kv_evict_first=1 --build row_boxes=1 --build persistent=1 --iterations 30 --out $OUT/compare_h100_64x8k.json > $OUT/compare_h100.log 2>&1
echo "rc=$?" >> $OUT/compare_h100.log
tail -30 $OUT/compare_h100.log
