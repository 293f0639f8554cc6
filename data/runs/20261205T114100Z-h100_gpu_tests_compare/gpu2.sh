#!/usr/bin/env bash
# This session's one GPU call: the GPU tests not re-run since their fixes, then the decode GPU tests (the manifest
# rule runs before every decode launch) for what time is left.
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache
export LABKIT_GIT_SHA=ba5e28e
python3 -m labkit device > $OUT/device.txt 2>&1
python3 -m pytest -q --collect-only -p no:cacheprovider tests/gpu/test_decode_gpu.py 2>/dev/null | grep '::' > /tmp/ids.txt
wc -l < /tmp/ids.txt > $OUT/decode_ids_count.txt
tail -n +89 /tmp/ids.txt > /tmp/rest.txt
timeout 300 python3 -m pytest -q -rs -p no:cacheprovider $(cat /tmp/rest.txt) > $OUT/gpu_decode_rest.log 2>&1
echo "rc=$?" >> $OUT/gpu_decode_rest.log
timeout 220 python3 -m pytest -q -rs -p no:cacheprovider tests/gpu/test_ncu_gpu.py tests/gpu/test_sage2_gpu.py > $OUT/gpu_ncu_sage2.log 2>&1
echo "rc=$?" >> $OUT/gpu_ncu_sage2.log
for f in $OUT/*.log; do echo "== $f"; tail -n 5 $f; done
