# As run on the device from the repository root (bash .dbg/run_cmp.sh <full sha>): the compare and tail-sweep GPU
# tests, then `labkit decode compare` as a user runs it (the persistent head_dim-128 builds of the A/B before it, at
# 64 x 1k d128), and a build that cannot run.
R=/tmp/res; mkdir -p $R; trap 'cp /tmp/res/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 150 python3 -m pytest -q -m gpu tests/gpu/test_decode_gpu.py -k "compare or tail_sweep" -p no:cacheprovider > $R/gpu_tests.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s"; tail -3 $R/gpu_tests.log
{
  set -x
  python3 -m labkit decode compare --batch 64 --kv-len 1024 --build persistent=1,warps=8,stages=2 --build persistent=1,warps=4,stages=2 --build persistent=1 --out $R/compare_64x1k.json
  python3 -m labkit report show $R/compare_64x1k.json | head -3
  python3 -m labkit decode compare --batch 64 --kv-len 1024 --build persistent=1,warps=8,stages=3
  set +x
} > $R/compare.log 2>&1; cat $R/compare.log | cut -c1-250
