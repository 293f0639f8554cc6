# As run on the device at 6133b3b with merge_swizzle.diff in the working tree; head3/ = the kernels at 6133b3b
# (= f583198); .dbg/dec/dec_swz.py = dec_ab_swizzle.py here (sh regenerate.sh).
set -e
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee $OUT/gpu.txt
timeout 270 python3 .dbg/dec/dec_swz.py > $OUT/dec_swz.out 2>&1 || echo "dec_swz rc $?"
tail -26 $OUT/dec_swz.out
s=$(date +%s); timeout 200 python3 -m pytest -q -m gpu tests/gpu/test_decode_gpu.py > $OUT/gpu_tests_decode.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s"; tail -3 $OUT/gpu_tests_decode.log
