# As run on the device, from the repository root at 81efabc, with this record's harness at .dbg/dec/dec_bound.py
# and bounds_kernel.diff applied to labkit/workloads/decode/kernels/ in .dbg/dec/bound/; .whl and .whl_peers carried.
set -e
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee $OUT/gpu.txt
timeout 480 python3 .dbg/dec/dec_bound.py > $OUT/dec_bound.out 2>&1 || echo "dec_bound rc $?"
tail -25 $OUT/dec_bound.out
