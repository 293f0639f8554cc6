set -e
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee $OUT/gpu.txt
timeout 200 python3 .dbg/dec/read_ceiling.py > $OUT/read_ceiling.log 2>&1 || echo "read rc $?"
SKIP_CHECKS=1 timeout 300 python3 .dbg/dec/dec_ab.py > $OUT/dec_ab.out 2>&1 || echo "dec_ab rc $?"
cat $OUT/read_ceiling.log; tail -16 $OUT/dec_ab.out
