# As run on the device from the repository root (bash .dbg/run_fin.sh <full sha>): the compare, tail-sweep and
# CTA-scheduling GPU tests after the review fixes, `labkit decode compare` at 8 x 8k d128 (and a build that is the
# plan's own call), then the whole `labkit decode bench --peers` at this commit.
R=/tmp/res; mkdir -p $R; trap 'cp /tmp/res/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 100 python3 -m pytest -q -m gpu tests/gpu/test_decode_gpu.py -k "compare or tail_sweep or cta_scheduling_point" -p no:cacheprovider > $R/gpu_tests.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s"; tail -2 $R/gpu_tests.log
{
  set -x
  python3 -m labkit decode compare --batch 8 --kv-len 8192 --build splits=4 --build warps=8,stages=3 --build warps=8,stages=2,splits=2,cluster=0 --out $R/compare_8x8k.json
  python3 -m labkit report show $R/compare_8x8k.json | tail -6
  python3 -m labkit decode compare --batch 8 --kv-len 8192 --build stages=2,warps=8
  set +x
} > $R/compare.log 2>&1; cut -c1-220 $R/compare.log
s=$(date +%s); timeout 300 python3 -m labkit decode bench --peers --out $R/bench.json > $R/bench.log 2>&1 || echo "bench rc $?"; echo "bench $(( $(date +%s) - s )) s"; tail -26 $R/bench.log | cut -c1-200
