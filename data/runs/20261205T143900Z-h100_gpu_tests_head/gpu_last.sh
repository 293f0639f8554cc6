#!/usr/bin/env bash
# The last of the H100's time: the Sage2 GPU tests, then notebook 05 live (ncu), recorded (it failed on the H100 before
# for want of jupytext, now in tools/device_wheels.sh's set).
T0=$(date +%s); touch /tmp/start2
[ -d /tmp/site/papermill ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
export LABKIT_NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
timeout 70 python3 -m pytest -q -rs -p no:cacheprovider -m gpu tests/gpu/test_sage2_gpu.py > $OUT/sage2.log 2>&1
echo "rc=$? at $(( $(date +%s) - T0 )) s" >> $OUT/sage2.log; tail -3 $OUT/sage2.log
timeout $(( 262 - ($(date +%s) - T0) )) python3 -m labkit nb run 05 --record > $OUT/nb05.log 2>&1
echo "rc=$? at $(( $(date +%s) - T0 )) s" >> $OUT/nb05.log; tail -8 $OUT/nb05.log | cut -c1-250
find data/runs -newer /tmp/start2 -type f | tar czf $OUT/nb05_record.tgz -T - 2>/dev/null; ls -la $OUT
