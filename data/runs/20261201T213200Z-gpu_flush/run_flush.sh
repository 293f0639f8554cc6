# As run on the device (bash .dbg/run_flush.sh <full sha>): the GPU tests that take the cold flush and timelines.
R=/tmp/res; mkdir -p $R; trap 'cp /tmp/res/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
s=$(date +%s); timeout 280 python3 -m pytest -q -m gpu tests/gpu/test_timing_gpu.py tests/gpu/test_sched_gpu.py tests/gpu/test_decode_gpu.py -k "timing_gpu or sched_gpu or tail or timeline" > $R/gpu_tests.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s"; tail -3 $R/gpu_tests.log
