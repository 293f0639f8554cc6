#!/bin/bash
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$(cat .dbg/sha) PATH=/tmp/site/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
date -u
python3 -m pytest -q -m gpu tests/gpu 2>&1 | tail -6 | tee $OUT/gpu_tests.log
date -u
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 1000 > $OUT/smi.csv 2>&1 &
SMI=$!
python3 -m labkit bench --schedule sm90 --iterations 20 --out $OUT/bench.json 2>&1 | tee $OUT/bench.log
date -u
kill $SMI || true
