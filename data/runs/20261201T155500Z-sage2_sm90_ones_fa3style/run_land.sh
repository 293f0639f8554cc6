#!/bin/bash
# sage2 GPU tests, the Sage2 bench at the seed shape, then a shuffled A/B: landed (ones) vs the previous kernel vs fo0
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$(cat .dbg/sha)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 500 > $OUT/smi.csv 2>&1 &
SMI=$!
date -u
python3 -m pytest -q -m gpu tests/gpu/test_sage2_gpu.py 2>&1 | tail -5 | tee $OUT/gpu_tests.log
date -u
python3 -m labkit bench --schedule sm90 --out $OUT/bench.json 2>&1 | tee $OUT/bench.log
date -u
SAGE2_VARIANTS=base,b2,fo0 SAGE2_SHUFFLE=1 SAGE2_ITERS=12 python3 .dbg/sage2_ab.py 2>&1 | grep -v "^{'shape'" | tee $OUT/ab.log
date -u
kill $SMI || true
