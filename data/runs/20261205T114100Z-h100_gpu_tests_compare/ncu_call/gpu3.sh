#!/usr/bin/env bash
# The ncu GPU tests (the earlier call lacked the ncu-report wheel), then notebook 05 live for what time is left.
set -uo pipefail
touch /tmp/start
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache
export LABKIT_GIT_SHA=57ea217 LABKIT_NCU=/usr/local/cuda/bin/ncu
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $OUT/nvidia_smi.csv 2>&1
python3 -m labkit device > $OUT/device.txt 2>&1
timeout 200 python3 -m pytest -q -rs -p no:cacheprovider tests/gpu/test_ncu_gpu.py > $OUT/ncu_tests.log 2>&1
echo "rc=$?" >> $OUT/ncu_tests.log
tail -n 4 $OUT/ncu_tests.log
timeout 170 python3 -m labkit nb run 05 --record > $OUT/nb05.log 2>&1
echo "rc=$?" >> $OUT/nb05.log
tail -n 15 $OUT/nb05.log
find data/runs runs -newer /tmp/start -type f 2>/dev/null | tar czf $OUT/nb05_record.tgz -T -; ls -la $OUT
