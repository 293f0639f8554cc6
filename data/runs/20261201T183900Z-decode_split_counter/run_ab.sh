# As run on the device, from the repository root at eaa0c8e, with this record's harness at .dbg/dec/dec_rel.py
# and the variant kernels (count_in.diff, fence_acq_rel.diff applied to labkit/workloads/decode/kernels/) in
# .dbg/dec/rel/ and .dbg/dec/acqf/; .whl and .whl_peers carried (../../shared/device/wheels.sh).
set -e
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv | tee $OUT/gpu.txt
SKIP_CHECKS=$2 timeout 480 python3 .dbg/dec/dec_rel.py > $OUT/dec_rel.out 2>&1 || echo "dec_ab rc $?"
tail -25 $OUT/dec_rel.out
nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -cubin -o /tmp/f.cubin .dbg/dec/fence_sass.cu
cuobjdump -sass /tmp/f.cubin | grep -E "Function|MEMBAR|ATOM|FENCE|CCTL|ERRBAR|BAR" > $OUT/fence_sass.txt
