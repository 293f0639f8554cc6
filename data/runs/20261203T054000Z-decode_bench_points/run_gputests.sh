# bash .dbg/s48/run_gputests.sh <full sha>; carry .whl_min, .whl_peers, .dbg
R=/tmp/resgt; rm -rf $R; mkdir -p $R; trap 'cp -r /tmp/resgt/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1 R
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
timeout 540 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_decode_gpu.py -k "not tail_sweep and not compare_builds and not named_points and not peers_run" > $R/gpu_decode_tests.log 2>&1 || echo "rc $?"
tail -4 $R/gpu_decode_tests.log
