# As run on the device (bash .dbg/run_suite2.sh <full sha>): the whole GPU suite (the previous call's decode tests
# ran out of time while NVRTC rebuilt every kernel).
R=/tmp/res2; mkdir -p $R; trap 'cp /tmp/res2/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_ncu/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
ls /tmp/labkit-cache 2>/dev/null | wc -l
s=$(date +%s); timeout 400 python3 -m pytest -q -m gpu tests/gpu > $R/gpu_tests.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s"; tail -6 $R/gpu_tests.log
